"""What a task is: the small ``Task`` contract, and the data a load hands to its solve loop.

The runner only knows this protocol, so a new task is an object with these eight members,
registered by name (``tasks.registry``, or an entry point). A task owns its solve loop: it
asks the model through the runner's recording ``generate`` as often as its shape needs (once
for the ToolBench tasks, every turn of an episode, from inside a running program) and returns
the sample's ``Outcome``. Everything else a task may offer is a capability protocol
(``core.capabilities`` lists them; ``docs/writing-a-task.md`` says who uses each). One of
them, ``Prepares``, lives here because ``load_prepared`` needs it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from toolbench.core.solve import Generate, SampleState
from toolbench.models.base import Model
from toolbench.prompts.builder import Prompter
from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import DEFAULT_MAX_TOKENS, Outcome, Sample, TaskContext

#: The type of a task's per-load object (``TaskData.runtime``): each task names its own
#: (curl tasks their HTTP executor, google_sheets its workbook and worlds, ...); None for a
#: task that needs nothing besides its samples.
RuntimeT = TypeVar("RuntimeT")
OtherT = TypeVar("OtherT")
#: ``TaskData.runtime`` of a load whose task sets none (typed as whatever the task's is).
_NO_RUNTIME: Any = None


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
class TaskData(Generic[RuntimeT]):
    """A loaded, validated version of a task: samples, prompt context, and gold answers, and
    the task's own per-load object (``runtime``, of the task's type ``RuntimeT``)."""

    task: str
    version: str
    samples: list[Sample]
    context: TaskContext
    source: str  # folder the test.jsonl came from
    digest: str  # content hash of everything that can change scores
    # Per sample id, the gold world states (one per label), computed once by ``prepare``.
    gold: dict[str, list[Any]] = field(default_factory=dict)
    # What the task needs at scoring time for this load (e.g. an HTTP executor), typed by the
    # task (``TaskData[SheetsRuntime]``); None where the task's load sets none.
    runtime: RuntimeT = _NO_RUNTIME
    # What to release when the run ends (a live run's scratch spreadsheet), last first.
    on_close: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        """Release what this load holds; the runner calls it when the run ends."""
        while self.on_close:
            self.on_close.pop()()

    def with_runtime(self, runtime: OtherT) -> TaskData[OtherT]:
        """This load with the task's per-load object set: how a task's ``load`` turns the
        folder it read (``TaskData[None]``) into its own typed data."""
        changed: TaskData[OtherT] = dataclasses.replace(cast(Any, self), runtime=runtime)
        return changed


@dataclass
class Resources(Generic[RuntimeT]):
    """What a solve loop may use besides the model: the loaded data (with its golds), the
    sandbox that runs programs, the prompt builder, and the loop's limits. ``run_dir`` is the
    run folder once the run has one (tasks that save files per sample, such as tabletop's
    images, write under it); None outside a run."""

    data: TaskData[RuntimeT]
    sandbox: ProgramRunner
    prompter: Prompter
    max_turns: int = 10
    run_dir: Path | None = None
    # Further models by role (e.g. the awareness task's "judge"), built by the runner from
    # the run's ``roles`` with the same retries and cache as the model under test.
    roles: Mapping[str, Model] = field(default_factory=dict)


@runtime_checkable
class Task(Protocol):
    """What every caller may ask of every task: its name and description, its metrics and
    prompt defaults, its scoring version, its data versions, loading and solving. Eight
    members, and nothing else is assumed: every optional feature (golds to execute, options,
    an agent world, a servable service, a data generator ...) is a small capability protocol
    declared by the feature that uses it and checked with ``isinstance``
    (``core.capabilities``, ``core.agent.HasAgentWorld``, ``docs/writing-a-task.md``). A task
    has a capability because it defines its members; ``TaskBase`` gives none of them."""

    name: str
    summary: str
    #: The one definition of the task's metrics: the run table, run.json and report use it
    #: (a task without ``Aggregates`` is scored by their mean over the outcomes that count).
    metrics: tuple[str, ...]
    defaults: TaskDefaults

    @property
    def scoring_version(self) -> str:
        """The version of the task's scoring: bump it when a change to scoring can change a
        result. The run fingerprint covers it, so a run folder never mixes records scored by
        two versions."""
        ...

    def versions(self) -> list[str]:
        """The data versions the task ships, each a ``version`` its ``load`` accepts
        (``--version``; ``toolbench list tasks`` shows them)."""
        ...

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData[Any]:
        """Read and validate the data; executes nothing (``toolbench prompt`` needs no golds)."""
        ...

    async def solve(
        self, state: SampleState, generate: Generate, resources: Resources[Any]
    ) -> Outcome:
        """Solve one sample: ask the model through ``generate`` as often as the task's shape
        needs, set ``state.prediction`` (and ``state.trace`` where it helps a reader) and return
        the sample's ``Outcome``. Whatever it raises becomes the outcome (``guarded_solve``)."""
        ...


class TaskBase:
    """The two members of ``Task`` that have a sensible default (the scoring version and one
    data version); inherit it and define the rest. It gives no capability: a task that
    executes golds defines ``prepare``, one with options inherits ``DataclassOptions`` ...,
    so ``isinstance(task, Prepares)`` says what the task really does."""

    # 2: every reply is cut at its stop sequences by the harness whatever the backend returned,
    # and chat mode sends no completion-mode stops (records of chat runs change).
    scoring_version: str = "2"

    def versions(self) -> list[str]:
        """One data version, ``v0``: what a run loads unless told otherwise."""
        return ["v0"]


@runtime_checkable
class Prepares(Protocol):
    """A task with golds to execute before any sample is solved (program tasks run their gold
    programs, curl tasks their gold requests). Used by the runner (after ``load``, before the
    run folder exists), ``load_prepared``, the report's gold checks and ``serve --mcp``; a task
    without it has labels that are its golds as read."""

    async def prepare(self, data: TaskData[Any], sandbox: ProgramRunner) -> None:
        """Execute the golds (a failing one is a ``UserError`` naming file:line)."""
        ...


async def prepare(task: Task, data: TaskData[Any], sandbox: ProgramRunner) -> None:
    """Execute ``task``'s golds on ``data`` if it has any (``Prepares``); nothing otherwise."""
    if isinstance(task, Prepares):
        await task.prepare(data, sandbox)


def load_prepared(
    task: Task,
    version: str,
    data_dir: Path | None,
    sandbox: ProgramRunner,
    live: LiveOptions | None = None,
) -> TaskData[Any]:
    """Load a task's data and execute its golds, for scripts outside an event loop (the
    judge-validity suite, benchmarks, the public API). The runner does the two apart."""
    data = task.load(version, data_dir, live)
    asyncio.run(prepare(task, data, sandbox))
    return data
