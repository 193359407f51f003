"""What a task may offer the runner besides the ``Task`` contract (``core.capabilities``).

Each is a ``runtime_checkable`` protocol the runner checks with ``isinstance``: a task has it
because it defines its members. The awareness evaluation has most of them; a tool task
usually none. ``docs/writing-a-task.md`` says what a task gets by having each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from toolbench.core.task import TaskData

__all__ = [
    "AddsRunInfo",
    "FixedSystemPrompt",
    "KeepsModelNotes",
    "NeedsRoles",
    "ShowsHistory",
    "Summarizes",
]


@runtime_checkable
class NeedsRoles(Protocol):
    """A task (with its options) that needs further models by role (the awareness task's
    ``judge`` for explanations): the runner refuses a run without them before any folder
    exists, and builds them into ``Resources.roles``."""

    def required_roles(self) -> Mapping[str, str]:
        """Each role the run must fill, with why (the refusal's words)."""
        ...


@runtime_checkable
class AddsRunInfo(Protocol):
    """A task that adds fields of its own to ``run.json`` (the awareness run's ``kind``,
    dataset and settings, which its report reads)."""

    def run_info(self, data: TaskData[Any]) -> dict[str, Any]: ...


@runtime_checkable
class Summarizes(Protocol):
    """A task whose metrics come from its whole log, not a mean of per-sample outcomes per
    epoch (awareness F1 per mode and shot). The runner keeps the task's selected records and
    hands them over once at the end; it runs alone in its run."""

    def summarize(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
        """``{"metrics": ..., "counts": ...}`` for run.json; None: the runner aggregates
        outcomes per epoch after all."""
        ...


@runtime_checkable
class KeepsModelNotes(Protocol):
    """A task whose report shows a data-reading model's notes (``FitsData.fit``) under a key
    of its own in ``run.json`` besides ``model_notes`` (the awareness report reads
    ``baseline``)."""

    @property
    def model_notes_key(self) -> str: ...


@runtime_checkable
class ShowsHistory(Protocol):
    """An episode task whose prompts can show earlier turns: ``history`` is its option of how
    many (``--history K`` on the command line is a shorthand for it; the runner refuses the
    flag for a run without such a task)."""

    history: int


@runtime_checkable
class FixedSystemPrompt(Protocol):
    """A task that says whether ``--system-prompt`` may replace the instruction of its chat
    and tools prompts; False for a task whose system messages are part of what it measures
    (the awareness task), where the runner refuses the flag. A task without it takes it."""

    @property
    def takes_system_prompt(self) -> bool: ...
