"""What a task may offer besides the ``Task`` contract, for the features several layers share.

A capability is a small ``runtime_checkable`` protocol: a task has it because it defines its
members, and a caller asks ``isinstance(task, Aggregates)`` instead of reading a default, so a
task author sees from the protocols which members a feature uses. Each is declared in the
lowest package that owns its feature; the ones here are used by more than one layer:

* ``Prepares`` (``core.task``): golds executed after ``load`` (runner, report, serve --mcp).
* ``Aggregates``: the task's own per-epoch metrics (runner and report; default: the mean).
* ``HasOptions``: ``--task-option NAME=VALUE`` (runner, CLI, fingerprint); ``DataclassOptions``
  implements it for a dataclass task.
* ``BuildsFirstRequest``: the first prompt, rebuilt without solving (``toolbench prompt``,
  ``show``, the HTML report's hash check).
* ``HasAgentWorld`` (``core.agent``): the task solved by an agent over MCP.

Those of one feature are declared with it: ``kinds.tool_calling.HasToolset`` (``--mode
tools``), ``runner.capabilities`` (roles, run.json fields, whole-log metrics, history,
system messages, model notes), ``aware.sources.tasks`` (awareness twins), ``cli.data``
(``data generate``), ``cli.serve`` (``serve``), ``models.reference.baseline`` (the baseline's
replies).
``docs/writing-a-task.md`` lists every one with what a task gets by having it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from toolbench.core.agent import HasAgentWorld
from toolbench.core.metrics import mean_metrics
from toolbench.core.task import Prepares, Task, TaskData
from toolbench.errors import UserError
from toolbench.prompts.builder import Prompter
from toolbench.types import GenerationRequest, Outcome, Sample

__all__ = [
    "Aggregates",
    "BuildsFirstRequest",
    "DataclassOptions",
    "HasAgentWorld",
    "HasOptions",
    "Prepares",
    "aggregate",
    "option_defaults",
    "resolved_options",
    "with_options",
]


@runtime_checkable
class Aggregates(Protocol):
    """A task whose per-epoch metrics are not each metric's mean over the outcomes that count
    (e.g. virtual_home's rates over executable plans). Used by the runner's ``run.json`` and
    the report; without it ``aggregate`` below takes the mean (``core.metrics``)."""

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        """The task's metrics over one epoch's outcomes."""
        ...


def aggregate(task: Task, outcomes: Sequence[Outcome]) -> dict[str, float]:
    """``task``'s metrics over ``outcomes``: its own ``aggregate``, else the mean of each of
    its ``metrics`` over the outcomes that count."""
    if isinstance(task, Aggregates):
        return task.aggregate(outcomes)
    return mean_metrics(outcomes, task.metrics)


@runtime_checkable
class HasOptions(Protocol):
    """A task with options (``--task-option NAME=VALUE``, ``toolbench.run(task_options=...)``):
    their defaults (shown by ``toolbench list tasks``), and the task with a run's values
    applied. The runner puts the resolved values in the run's configuration and fingerprint.
    ``DataclassOptions`` implements the two methods for a dataclass task."""

    @property
    def option_defaults(self) -> Mapping[str, Any]:
        """Each option's name and default value."""
        ...

    def with_options(self, options: Mapping[str, Any]) -> Task:
        """The task with a run's option values applied (unknown names are a ``UserError``)."""
        ...

    def resolved_options(self) -> dict[str, Any]:
        """Every option's value on this task object, defaults included (the run config)."""
        ...


def option_defaults(task: Task) -> Mapping[str, Any]:
    """``task``'s options and their defaults; none for a task without ``HasOptions``."""
    return task.option_defaults if isinstance(task, HasOptions) else {}


def with_options(task: Task, options: Mapping[str, Any]) -> Task:
    """``task`` with ``options`` applied; any option is refused for a task that has none, with
    the message a task with options gives for an unknown name."""
    if isinstance(task, HasOptions):
        return task.with_options(options)
    for key in options:
        raise UserError(f"task {task.name} has no option {key!r} (its options: none)")
    return task


def resolved_options(task: Task) -> dict[str, Any]:
    """Every option's value on ``task`` (``{}`` for a task without options)."""
    return task.resolved_options() if isinstance(task, HasOptions) else {}


class DataclassOptions:
    """``HasOptions`` for a dataclass task: each option is a dataclass field named in the
    class's ``option_defaults``; ``with_options`` checks names and types and returns a copy
    with the values (``dataclasses.replace``)."""

    name: str
    option_defaults: Mapping[str, Any]

    def with_options(self, options: Mapping[str, Any]) -> Any:
        """A copy of the task with ``options`` applied (unknown names or types: ``UserError``)."""
        for key, value in options.items():
            if key not in self.option_defaults:
                known = ", ".join(sorted(self.option_defaults)) or "none"
                raise UserError(f"task {self.name} has no option {key!r} (its options: {known})")
            default = self.option_defaults[key]
            if default is not None and not isinstance(value, type(default)):
                raise UserError(
                    f"task {self.name} option {key}: expected {type(default).__name__}, "
                    f"got {value!r}"
                )
        if not options:
            return self
        if not dataclasses.is_dataclass(self):
            raise TypeError(f"{type(self).__name__}: options need a dataclass task")
        return dataclasses.replace(self, **options)

    def resolved_options(self) -> dict[str, Any]:
        """Every option's value on this task object (defaults included), for the config."""
        return {key: getattr(self, key, default) for key, default in self.option_defaults.items()}


@runtime_checkable
class BuildsFirstRequest(Protocol):
    """A task that can build the request of a sample's first model call without solving it
    (no model asked, no program run): ``toolbench prompt`` prints it, ``show`` and the HTML
    report rebuild it and compare its hash with the record's ``prompt_hash``. It must be built
    by the code ``solve`` sends it with, so the two never differ."""

    def first_request(
        self, data: TaskData[Any], sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        """The first request of ``sample`` in ``epoch``, built as ``solve`` builds it."""
        ...
