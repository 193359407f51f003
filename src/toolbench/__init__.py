"""toolbench: offline, safe, reproducible evaluation of LLM tool use.

The public API: ``toolbench.run`` (tasks and a model, by name or as objects), ``load_task``,
``get_task``, ``make_model``, and the types a task or model author writes against (``TaskBase``
and what its hooks take and return; ``docs/writing-a-task.md``). Each is imported on first
use, so ``import toolbench`` stays cheap for the many modules that only need ``__version__``.
"""

from __future__ import annotations

import importlib
from typing import Any

from toolbench.package import __version__

_FROM = {
    "run": "toolbench.api",
    "get_task": "toolbench.api",
    "load_task": "toolbench.api",
    "make_model": "toolbench.api",
    "default_cache_dir": "toolbench.package",
    "RunResult": "toolbench.runner.lifecycle",
    "UserError": "toolbench.errors",
    # The author's types (toolbench.core holds them all).
    "Task": "toolbench.core",
    "TaskBase": "toolbench.core",
    "TaskData": "toolbench.core",
    "TaskDefaults": "toolbench.core",
    "TaskContext": "toolbench.core",
    "Resources": "toolbench.core",
    "SampleState": "toolbench.core",
    "Generate": "toolbench.core",
    "Model": "toolbench.core",
    "ModelOptions": "toolbench.core",
    "Generation": "toolbench.core",
    "GenerationRequest": "toolbench.core",
    "Outcome": "toolbench.core",
    "Sample": "toolbench.core",
    "Status": "toolbench.core",
}

__all__ = ["__version__", *sorted(_FROM)]


def __getattr__(name: str) -> Any:
    if name in _FROM:
        return getattr(importlib.import_module(_FROM[name]), name)
    raise AttributeError(f"module 'toolbench' has no attribute {name!r}")
