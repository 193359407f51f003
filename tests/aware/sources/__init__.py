"""Tests of the external dataset loaders; ``FIXTURES`` is shared with other awareness tests."""

from pathlib import Path

#: Invented records in the shapes of API-Bank, StableToolBench and BFCL (never copied data).
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
