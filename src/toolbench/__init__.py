"""toolbench: offline, safe, reproducible evaluation of LLM tool use."""

__version__ = "0.1.0"
