"""The incomplete-condition awareness benchmark: build datasets (sources, manipulations), review them."""
