"""toolbench: offline, safe, reproducible evaluation of LLM tool use.

The public API (``toolbench.run``, ``load_task``, ``get_task``, ``make_model`` and the core
types) is imported on first use, so ``import toolbench`` stays cheap for the many modules that
only need ``__version__``.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "Generation",
    "GenerationRequest",
    "Outcome",
    "RunResult",
    "Sample",
    "Status",
    "__version__",
    "default_cache_dir",
    "get_task",
    "load_task",
    "make_model",
    "run",
]

_FROM = {
    "run": "toolbench.api",
    "get_task": "toolbench.api",
    "load_task": "toolbench.api",
    "make_model": "toolbench.api",
    "default_cache_dir": "toolbench.api",
    "RunResult": "toolbench.runner.lifecycle",
    "Generation": "toolbench.types",
    "GenerationRequest": "toolbench.types",
    "Outcome": "toolbench.types",
    "Sample": "toolbench.types",
    "Status": "toolbench.types",
}


def __getattr__(name: str) -> Any:
    if name in _FROM:
        import importlib

        return getattr(importlib.import_module(_FROM[name]), name)
    raise AttributeError(f"module 'toolbench' has no attribute {name!r}")
