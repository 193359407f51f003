"""Part of the awareness benchmark; see toolbench.aware.schema for the record."""
