"""The built-in tasks of the layers between ``toolbench.tasks`` and the runner, added to the
task registry here because the registry may not import them (``tasks.registry.provide``).

Today that is the awareness evaluation (``toolbench.aware``): ``toolbench run --task aware``,
``toolbench aware run FILE`` and ``toolbench list tasks`` find it by name as before. Importing
``toolbench.runner`` (every run, report, listing and the Python API does) adds it once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbench.tasks import registry

if TYPE_CHECKING:  # the loader is typed; importing the task contract here would slow --help
    from toolbench.core.task import Task

#: The command of the awareness task, whose data is a dataset file no default can name.
AWARE_COMMAND = "toolbench aware run FILE"


def _aware_task() -> Task:
    # Deferred on purpose: the awareness package is imported the first time its task is asked
    # for, as the registry imports its own built-ins, so listing commands stay fast.
    from toolbench.aware.evaluate.task import TASK

    return TASK


def add_builtin_tasks() -> None:
    """Give the registry the built-in tasks of the layers below the runner (idempotent)."""
    registry.provide("aware", _aware_task, own_command=AWARE_COMMAND)
