"""Where to look first when numbers seem wrong: samples every model failed (a wrong gold or an
impossible task is the likeliest cause), samples whose outcome flips across epochs (flaky
scoring or a sampling model near its boundary), and crash reasons grouped and counted.

Crash messages are grouped after masking what varies between samples (quoted names, numbers),
so "name 'products' is not defined" and "name 'rows' is not defined" count as one reason.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbench.report.summary import LoadedRun, id_order
from toolbench.report.summary import reason_of as reason_of  # where it was

MAX_ROWS = 500
# The HTML report shows this many rows of each audit; the rest (up to MAX_ROWS) fold away.
SHOWN_ROWS = 20


@dataclass(frozen=True)
class FailedByAll:
    task: str
    id: str
    runs: int  # how many runs attempted it (all failed every epoch)


@dataclass(frozen=True)
class Flaky:
    run: str
    task: str
    id: str
    epochs: int
    success_rate: float


@dataclass(frozen=True)
class CrashReason:
    task: str
    reason: str
    count: int
    runs: tuple[str, ...]
    example_id: str


def _outcomes(run: LoadedRun) -> dict[tuple[str, str], tuple[int, int]]:
    """(task, id) -> (epochs, successes), infra errors left out (they say nothing of the
    model): the run's per-sample tallies, not its records."""
    return {
        (task, sample_id): (seen[0], seen[1])
        for task, tally in run.tallies.items()
        for sample_id, seen in tally.epochs.items()
    }


def _order(key: tuple[str, str]) -> tuple[str, tuple[int, int, str]]:
    return key[0], id_order(key[1])


def failed_by_all(runs: Sequence[LoadedRun], limit: int | None = MAX_ROWS) -> list[FailedByAll]:
    """Samples that every run attempting them failed in every epoch, when at least two runs
    attempted them (one run failing is no evidence against the gold)."""
    attempts: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for run in runs:
        for key, (_, successes) in _outcomes(run).items():
            attempts[key].append(successes > 0)
    found = [
        FailedByAll(task, sample_id, len(tried))
        for (task, sample_id), tried in attempts.items()
        if len(tried) >= min(2, len(runs)) and not any(tried)
    ]
    return sorted(found, key=lambda f: _order((f.task, f.id)))[:limit]


def flaky(runs: Sequence[LoadedRun], limit: int | None = MAX_ROWS) -> list[Flaky]:
    """Samples of a run that succeeded in some epochs and failed in others."""
    found = []
    for run in runs:
        for (task, sample_id), (epochs, successes) in sorted(
            _outcomes(run).items(), key=lambda e: _order(e[0])
        ):
            if epochs > 1 and 0 < successes < epochs:
                found.append(Flaky(run.label, task, sample_id, epochs, successes / epochs))
    return found[:limit]


def crash_reasons(runs: Sequence[LoadedRun], limit: int | None = MAX_ROWS) -> list[CrashReason]:
    """Model errors per task and masked message, most frequent first."""
    counts: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[str]] = defaultdict(set)
    example: dict[tuple[str, str], str] = {}
    for run in runs:  # each run's reasons were tallied as its log streamed by
        for key, n in run.crashes.items():
            counts[key] += n
            where[key].add(run.label)
            example.setdefault(key, run.crash_example[key])
    return [
        CrashReason(task, reason, n, tuple(sorted(where[(task, reason)])), example[(task, reason)])
        for (task, reason), n in sorted(counts.items(), key=lambda e: (-e[1], e[0]))
    ][:limit]


@dataclass(frozen=True)
class Audit:
    """One audit as the HTML report lays it out. A person reads a few rows, not hundreds
    before the explorer (one run's failures can be most of its samples), so the first
    ``SHOWN_ROWS`` are the table, the rest of the first ``MAX_ROWS`` fold into ``more``, and
    ``total`` counts them all (the heading says it; a note says where those past ``MAX_ROWS``
    are)."""

    shown: tuple[Any, ...]
    more: tuple[Any, ...]
    total: int

    @property
    def left_out(self) -> int:
        return self.total - len(self.shown) - len(self.more)


def _audit(rows: Sequence[Any]) -> Audit:
    kept = rows[:MAX_ROWS]
    return Audit(tuple(kept[:SHOWN_ROWS]), tuple(kept[SHOWN_ROWS:]), len(rows))


def audits(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """The three audits of the task runs, for the HTML report (each an ``Audit``)."""
    crashes = crash_reasons(runs, limit=None)
    return {
        "failed_by_all": _audit(failed_by_all(runs, limit=None)),
        "flaky": _audit(flaky(runs, limit=None)),
        "crashes": _audit(crashes),
        "model_errors": sum(c.count for c in crashes),
        "runs": len(runs),
    }
