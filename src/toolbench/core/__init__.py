"""The types a task or model author writes against, in one place.

A task is an object with the ``Task`` protocol's eight members (``TaskBase`` gives two
defaults); its ``solve`` gets a ``SampleState``, a recording ``Generate`` and the run's
``Resources`` and returns an ``Outcome``. What else it offers is a capability protocol it
matches by defining its members (``Prepares``, ``Aggregates``, ``HasOptions``,
``BuildsFirstRequest``, ``HasAgentWorld`` here; the others beside the feature that uses them:
``docs/writing-a-task.md``). A model is an object with
the ``Model`` protocol: ``GenerationRequest`` in, ``Generation`` out. Nothing here runs
anything: the runner (``toolbench.runner``) drives these objects, and the registries
(``toolbench.tasks.registry``, ``toolbench.models.registry``) find them by name.

This package sits below every task and above the models, prompts and sandbox layers
(``docs/architecture.md``), so a task imports it without importing the runner.
"""

from toolbench.core.agent import AgentWorld, HasAgentWorld, ToolReply, ToolSpec
from toolbench.core.capabilities import (
    Aggregates,
    BuildsFirstRequest,
    DataclassOptions,
    HasOptions,
)
from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import CallRecord, Generate, SampleState, off_loop
from toolbench.core.task import (
    LiveOptions,
    Prepares,
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
    "AgentWorld",
    "Aggregates",
    "BuildsFirstRequest",
    "CallRecord",
    "DataclassOptions",
    "Doc",
    "Generate",
    "Generation",
    "GenerationRequest",
    "HasAgentWorld",
    "HasOptions",
    "LiveOptions",
    "Model",
    "ModelOptions",
    "ModelOutputError",
    "Outcome",
    "Prepares",
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
    "ToolReply",
    "ToolSpec",
    "mean_metrics",
    "off_loop",
]
