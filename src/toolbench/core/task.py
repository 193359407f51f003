"""What a task is: load its data, prepare its golds, solve a sample, aggregate outcomes.

The runner only knows this protocol, so a new task is a folder with an ``__init__.py`` that
builds a ``Task`` plus one line in ``registry.py``. A task owns its solve loop: it asks the
model through the runner's recording ``generate`` as often as its shape needs (once for the
ToolBench tasks, every turn of an episode, from inside a running program) and returns the
sample's ``Outcome``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Protocol

from toolbench.core.agent import AgentWorld
from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.errors import UserError
from toolbench.models.base import Model
from toolbench.prompts.builder import Prompter
from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import DEFAULT_MAX_TOKENS, GenerationRequest, Outcome, Sample, TaskContext


@dataclass(frozen=True)
class TaskDefaults:
    """Per-task prompt settings, as the original ToolBench commands used them."""

    top_k_api: int = 15
    top_k_example: int = 3
    max_tokens: int = DEFAULT_MAX_TOKENS


@dataclass(frozen=True)
class TaskGenerator:
    """A task's seeded data generator and the API docs and demonstrations we ship with it."""

    generate: Callable[[str, int, int], list[dict[str, Any]]]  # (split, n, seed) -> records
    functions: Mapping[str, str]  # file name -> API doc
    examples: Sequence[tuple[str, str]]  # (query, program)
    default_test_size: int
    # Further files a data folder needs beside test.jsonl (e.g. the workbook the questions are
    # about): () -> {file name: text}, written byte-stable by ``data generate --split test``.
    data_files: Callable[[], Mapping[str, str]] | None = None

    @classmethod
    def of(cls, generator: Any, docs: Any) -> TaskGenerator:
        """From a task's ``generator`` module (generate, DEFAULT_TEST_SIZE, optionally
        data_files) and ``docs`` module (FUNCTIONS, EXAMPLES), the layout every task folder
        follows."""
        return cls(
            generator.generate,
            docs.FUNCTIONS,
            docs.EXAMPLES,
            generator.DEFAULT_TEST_SIZE,
            getattr(generator, "data_files", None),
        )


@dataclass(frozen=True)
class LiveOptions:
    """--live: send requests to the real API (tasks that have one), caching answers here."""

    cache_dir: Path | None


@dataclass
class TaskData:
    """A loaded, validated version of a task: samples, prompt context, and gold answers."""

    task: str
    version: str
    samples: list[Sample]
    context: TaskContext
    source: str  # folder the test.jsonl came from
    digest: str  # content hash of everything that can change scores
    # Per sample id, the gold world states (one per label), computed once by ``prepare``.
    gold: dict[str, list[Any]] = field(default_factory=dict)
    # Whatever the task needs at scoring time for this load (e.g. an HTTP executor).
    runtime: Any = None
    # What to release when the run ends (a live run's scratch spreadsheet), last first.
    on_close: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        """Release what this load holds; the runner calls it when the run ends."""
        while self.on_close:
            self.on_close.pop()()


@dataclass
class Resources:
    """What a solve loop may use besides the model: the loaded data (with its golds), the
    sandbox that runs programs, the prompt builder, and the loop's limits. ``run_dir`` is the
    run folder once the run has one (tasks that save files per sample, such as tabletop's
    images, write under it); None outside a run."""

    data: TaskData
    sandbox: ProgramRunner
    prompter: Prompter
    max_turns: int = 10
    run_dir: Path | None = None
    # Further models by role (e.g. the awareness task's "judge"), built by the runner from
    # the run's ``roles`` with the same retries and cache as the model under test.
    roles: Mapping[str, Model] = field(default_factory=dict)


class Task(Protocol):
    """What the runner, the CLI and the report may ask of a task. The attributes after
    ``defaults`` and the methods after ``aggregate`` are optional features: ``TaskBase`` gives
    each its default, so a task states only what it has and no caller probes with getattr."""

    name: str
    summary: str
    #: The one definition of the task's metrics: the run table, run.json and report use it.
    metrics: tuple[str, ...]
    defaults: TaskDefaults

    #: Bump when a change to the task's scoring can change a result: the run fingerprint
    #: covers it, so a run folder never mixes records scored by two versions.
    @property
    def scoring_version(self) -> str: ...

    #: The task's options (``--task-option NAME=VALUE``) and their defaults; a run's values
    #: are part of its configuration and fingerprint (``with_options`` applies them).
    @property
    def option_defaults(self) -> Mapping[str, Any]: ...

    #: The API as native tools (``--mode tools``), or None for a task without that mode.
    @property
    def toolset(self) -> Any: ...

    #: Whether the task's prompts show earlier turns (the ``history`` option of an episode).
    @property
    def uses_history(self) -> bool: ...

    #: Whether the run's ``--system-prompt`` replaces the instruction of the task's chat and
    #: tools prompts (False for a task whose system messages are part of what it measures).
    @property
    def takes_system_prompt(self) -> bool: ...

    #: Seeded data generator with shipped docs (``toolbench data generate``), or None.
    @property
    def generator(self) -> TaskGenerator | None: ...

    #: A simulated HTTP service ``toolbench serve`` can expose, or None.
    @property
    def service(self) -> Any: ...

    #: The package folder holding ``data/<version>/``, or None for data from elsewhere.
    @property
    def package_dir(self) -> Path | None: ...

    #: Where in ``run.json`` this task's reports show a data-reading model's notes
    #: (``FitsData.fit``) besides ``model_notes``: the awareness report reads ``baseline``.
    @property
    def model_notes_key(self) -> str | None: ...

    def versions(self) -> list[str]: ...

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData:
        """Read and validate the data; executes nothing (``toolbench prompt`` needs no golds)."""
        ...

    async def prepare(self, data: TaskData, sandbox: ProgramRunner) -> None:
        """Execute the golds (a failing one is a ``UserError`` naming file:line)."""
        ...

    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        """The request of the sample's first model call, built by the code ``solve`` sends it
        with (the one place that knows the task's first prompt): ``toolbench prompt`` prints
        it, and ``show`` and the HTML report rebuild it and compare its hash with the record's
        ``prompt_hash``. Builds only: no model is asked and no program runs."""
        ...

    async def solve(
        self, state: SampleState, generate: Generate, resources: Resources
    ) -> Outcome: ...

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]: ...

    def with_options(self, options: Mapping[str, Any]) -> Task:
        """The task with a run's option values applied (unknown names are a ``UserError``)."""
        ...

    def resolved_options(self) -> dict[str, Any]:
        """Every option's value on this task object, defaults included (the run config)."""
        ...

    def needed_apis(self, sample: Sample) -> list[list[str]] | None:
        """Groups of API names a sample's request cannot do without (awareness twins), or
        None when the task cannot say."""
        ...

    #: Whether ``agent_world`` gives worlds (the task can be solved by an agent over MCP).
    @property
    def has_agent_world(self) -> bool: ...

    def agent_world(self, data: TaskData, sample: Sample, resources: Resources) -> AgentWorld:
        """A fresh world of ``sample`` whose API is tools, judged by this task's scorer
        (``core.agent``); a ``UserError`` for a task without one. Builds only: golds are
        read from ``data.gold`` when the world is judged, not here."""
        ...

    def baseline_reply(self, request: GenerationRequest) -> str | None:
        """The built-in ``baseline`` model's reply for tasks whose prompts are not docs plus
        demonstrations (tabletop's programs), or None to use the generic policy."""
        ...

    def run_info(self, data: TaskData) -> dict[str, Any]:
        """Fields this task adds to ``run.json`` (e.g. the awareness run's ``kind``)."""
        ...

    def required_roles(self) -> Mapping[str, str]:
        """Roles this task (with its options) needs the run to fill, each with why: the
        runner refuses a run without them before any folder exists."""
        ...

    def summarize(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """The task's metrics from its whole log (records of the selected samples and
        epochs), for tasks whose metrics are not a mean of per-sample outcomes (awareness
        F1 per mode and shot); None: the runner aggregates outcomes per epoch."""
        ...


_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class TaskBase:
    """Defaults for every optional feature of ``Task``: inherit it and override what the task
    has. Options are dataclass fields of the task named in ``option_defaults``."""

    # 2: every reply is cut at its stop sequences by the harness whatever the backend returned,
    # and chat mode sends no completion-mode stops (records of chat runs change).
    scoring_version: str = "2"
    option_defaults: Mapping[str, Any] = _NO_OPTIONS
    toolset: Any = None
    uses_history: bool = False
    takes_system_prompt: bool = True
    generator: TaskGenerator | None = None
    service: Any = None
    package_dir: Path | None = None
    model_notes_key: str | None = None
    metrics: tuple[str, ...]

    def versions(self) -> list[str]:
        return ["v0"]

    async def prepare(self, data: TaskData, sandbox: ProgramRunner) -> None:
        """Nothing to execute before the run: the task's labels are its golds."""

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        """Each metric's mean over the outcomes that count (``core.metrics``)."""
        return mean_metrics(outcomes, self.metrics)

    def with_options(self, options: Mapping[str, Any]) -> Any:
        name = getattr(self, "name", type(self).__name__)
        for key, value in options.items():
            if key not in self.option_defaults:
                known = ", ".join(sorted(self.option_defaults)) or "none"
                raise UserError(f"task {name} has no option {key!r} (its options: {known})")
            default = self.option_defaults[key]
            if default is not None and not isinstance(value, type(default)):
                raise UserError(
                    f"task {name} option {key}: expected {type(default).__name__}, got {value!r}"
                )
        if not options:
            return self
        if not dataclasses.is_dataclass(self):
            raise TypeError(f"{type(self).__name__}: options need a dataclass task")
        return dataclasses.replace(self, **options)

    def resolved_options(self) -> dict[str, Any]:
        """Every option's value on this task object (defaults included), for the config."""
        return {key: getattr(self, key, default) for key, default in self.option_defaults.items()}

    def needed_apis(self, sample: Sample) -> list[list[str]] | None:
        return None

    has_agent_world: bool = False

    def agent_world(self, data: TaskData, sample: Sample, resources: Resources) -> AgentWorld:
        name = getattr(self, "name", type(self).__name__)
        raise UserError(f"task {name} cannot be solved by an agent (it has no tools to serve)")

    def baseline_reply(self, request: GenerationRequest) -> str | None:
        return None

    def run_info(self, data: TaskData) -> dict[str, Any]:
        return {}

    def required_roles(self) -> Mapping[str, str]:
        return {}

    def summarize(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        return None


def load_prepared(
    task: Task,
    version: str,
    data_dir: Path | None,
    sandbox: ProgramRunner,
    live: LiveOptions | None = None,
) -> TaskData:
    """Load a task's data and execute its golds, for scripts outside an event loop (the
    judge-validity suite, benchmarks, the public API). The runner does the two apart."""
    data = task.load(version, data_dir, live)
    asyncio.run(task.prepare(data, sandbox))
    return data
