"""A task package's ``TASK``, built on first use.

Sandbox workers import a task's world module (``toolbench.tasks.X.world``), which runs the
package's ``__init__`` first. Building ``TASK`` there pulled in the harness side (runner,
prompts, models, asyncio): ~7 MB more in every worker template, and a template that forks a
process per program pays for every page it has, at the fork and at the child's exit. So each
package's ``__init__`` sets ``__getattr__ = task_attribute(__name__)`` and the task is built,
in its ``definition`` module, by the first ``from toolbench.tasks.X import TASK``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def task_attribute(package: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) for ``package``: ``TASK`` from its definition."""

    def attribute(name: str) -> Any:
        if name == "TASK":
            return importlib.import_module(f"{package}.definition").TASK
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return attribute
