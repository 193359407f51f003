"""What a task is, and the shared machinery of tasks whose actions are Python programs.

A task turns a model's text into an ``Outcome``. The runner only knows this protocol, so a new
task is a folder with an ``__init__.py`` that builds a ``Task`` plus one line in ``registry.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import Outcome, Sample, TaskContext


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
    # Per sample id, the gold world states (one per label), computed once at load.
    gold: dict[str, list[Any]] = field(default_factory=dict)
    # Whatever the task needs at scoring time for this load (e.g. an HTTP executor).
    runtime: Any = None


class Task(Protocol):
    name: str
    summary: str
    metrics: tuple[str, ...]
    defaults: TaskDefaults

    def versions(self) -> list[str]: ...

    def load(
        self,
        version: str,
        data_dir: Path | None,
        sandbox: ProgramRunner,
        live: LiveOptions | None = None,
    ) -> TaskData: ...

    def extract_action(self, text: str) -> str:
        """The action to execute from a model's raw reply (completion or chat)."""
        ...

    async def score(
        self, data: TaskData, sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome: ...

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]: ...
