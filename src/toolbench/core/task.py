"""What a task is: load its data, prepare its golds, solve a sample, aggregate outcomes.

The runner only knows this protocol, so a new task is a folder with an ``__init__.py`` that
builds a ``Task`` plus one line in ``registry.py``. A task owns its solve loop: it asks the
model through the runner's recording ``generate`` as often as its shape needs (once for the
ToolBench tasks, every turn of an episode, from inside a running program) and returns the
sample's ``Outcome``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from toolbench.core.solve import Generate, SampleState
from toolbench.prompts.builder import Prompter
from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import GenerationRequest, Outcome, Sample, TaskContext


@dataclass(frozen=True)
class TaskDefaults:
    """Per-task prompt settings, as the original ToolBench commands used them."""

    top_k_api: int = 15
    top_k_example: int = 3
    max_tokens: int = 256


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
    # Episodes (web_shop): how many earlier actions and pages each turn's prompt shows
    # (--history; 0 = only the current page, as the original).
    history: int = 0
    run_dir: Path | None = None


class Task(Protocol):
    name: str
    summary: str
    #: The one definition of the task's metrics: the run table, run.json and report use it.
    metrics: tuple[str, ...]
    defaults: TaskDefaults

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
