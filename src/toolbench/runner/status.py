"""Where a run stands, for everything that prints its numbers: a 9 % run must never read as a
whole one.

run.json's ``status`` is what the run's process last wrote; the folder's lock says whether that
process is still alive. A run.json that says "running" while nobody holds the lock was killed
(``kill -9``, a crash, a lost machine): it is interrupted, and resumable like any other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.runner.invocation import resume_command
from toolbench.runner.lock import Holder, holder_of

COMPLETE = "complete"
IN_PROGRESS = "in progress"
INTERRUPTED = "interrupted"
INCOMPLETE = "incomplete"  # ended, but infra errors remain to retry
FAILED = "failed"  # the harness itself stopped on an error
UNKNOWN = "unknown"

_WRITTEN = {
    "complete": COMPLETE,
    "interrupted": INTERRUPTED,
    "incomplete": INCOMPLETE,
    "failed": FAILED,
}


@dataclass(frozen=True)
class RunStatus:
    """A run's state, how much of its planned sample x epochs is done, and how to go on."""

    state: str
    done: int
    planned: int | None
    holder: Holder | None = None
    resume: str | None = None

    @property
    def finished(self) -> bool:
        """Complete, and every planned sample x epoch done: numbers that will not change."""
        return self.state == COMPLETE and (self.planned is None or self.done >= self.planned)

    @property
    def share(self) -> str:
        """``32 of 350 sample x epochs done (9%)``, or just the count when nothing was planned."""
        if not self.planned:
            return f"{self.done} sample x epochs done"
        percent = 100 * self.done / self.planned
        shown = f"{percent:.0f}" if percent >= 1 or percent == 0 else f"{percent:.1f}"
        return f"{self.done} of {self.planned} sample x epochs done ({shown}%)"

    def line(self) -> str:
        """One line for a person: the state, the share done, and what to do about it."""
        if self.finished:
            return f"status: complete, {self.share}"
        if self.state == IN_PROGRESS:
            who = self.holder.describe() if self.holder else "another process"
            return (
                f"status: IN PROGRESS ({who}): {self.share} so far; "
                "these numbers will change when it finishes"
            )
        what = {
            INTERRUPTED: "INTERRUPTED",
            INCOMPLETE: "INCOMPLETE (infra errors remain)",
            FAILED: "FAILED (the run stopped on an error)",
            COMPLETE: "COMPLETE but short",
        }.get(self.state, "UNKNOWN")
        resume = f"; resume with: {self.resume}" if self.resume else "; rerun its command"
        return f"status: {what}: {self.share}; these numbers cover only those{resume}"

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "finished": self.finished,
            "done": self.done,
            "planned": self.planned,
            "holder_pid": self.holder.pid if self.holder else None,
            "resume": None if self.finished else self.resume,
        }


def run_status(
    folder: Path, info: dict[str, Any], records: int | Iterable[dict[str, Any]]
) -> RunStatus:
    """The status of the run in ``folder`` (its run.json ``info``, and its log's ``records``,
    or how many of them are not infra errors, counted as the log streamed by)."""
    holder = holder_of(folder)
    written = info.get("status")
    if holder is not None:
        state = IN_PROGRESS
    elif written == "running":
        state = INTERRUPTED  # nobody holds the lock: its process ended without finishing
    else:
        state = _WRITTEN.get(written, UNKNOWN) if isinstance(written, str) else UNKNOWN
    if isinstance(records, int):
        done = records
    else:
        done = sum(1 for r in records if r.get("status") != "infra_error")
    return RunStatus(
        state=state,
        done=done,
        planned=planned_of(info),
        holder=holder,
        resume=resume_command(info.get("command"), folder),
    )


def planned_of(info: dict[str, Any]) -> int | None:
    """How many sample x epochs the run set out to do (run.json's ``progress``), or None when
    run.json does not say (a hand-written or damaged one)."""
    progress = info.get("progress")
    if isinstance(progress, dict):
        planned = progress.get("planned")
        if isinstance(planned, int) and not isinstance(planned, bool) and planned >= 0:
            return planned
    return None
