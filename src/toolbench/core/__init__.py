"""The types a task or model author writes against, in one place.

A task is an object with the ``Task`` protocol's attributes and methods (``TaskBase`` gives
every optional hook its default); its ``solve`` gets a ``SampleState``, a recording
``Generate`` and the run's ``Resources`` and returns an ``Outcome``. A model is an object with
the ``Model`` protocol: ``GenerationRequest`` in, ``Generation`` out. Nothing here runs
anything: the runner (``toolbench.runner``) drives these objects, and the registries
(``toolbench.tasks.registry``, ``toolbench.models.registry``) find them by name.

This package sits below every task and above the models, prompts and sandbox layers
(``docs/architecture.md``), so a task imports it without importing the runner.
"""

from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import CallRecord, Generate, SampleState, off_loop
from toolbench.core.task import (
    LiveOptions,
    Resources,
    Task,
    TaskBase,
    TaskData,
    TaskDefaults,
    TaskGenerator,
)
from toolbench.models.base import Model, ModelOptions, ModelOutputError
from toolbench.types import (
    Doc,
    Generation,
    GenerationRequest,
    Outcome,
    Sample,
    Status,
    TaskContext,
)

__all__ = [
    "CallRecord",
    "Doc",
    "Generate",
    "Generation",
    "GenerationRequest",
    "LiveOptions",
    "Model",
    "ModelOptions",
    "ModelOutputError",
    "Outcome",
    "Resources",
    "Sample",
    "SampleState",
    "Status",
    "Task",
    "TaskBase",
    "TaskContext",
    "TaskData",
    "TaskDefaults",
    "TaskGenerator",
    "mean_metrics",
    "off_loop",
]
