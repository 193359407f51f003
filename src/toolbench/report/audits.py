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


def failed_by_all(runs: Sequence[LoadedRun]) -> list[FailedByAll]:
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
    return sorted(found, key=lambda f: _order((f.task, f.id)))[:MAX_ROWS]


def flaky(runs: Sequence[LoadedRun]) -> list[Flaky]:
    """Samples of a run that succeeded in some epochs and failed in others."""
    found = []
    for run in runs:
        for (task, sample_id), (epochs, successes) in sorted(
            _outcomes(run).items(), key=lambda e: _order(e[0])
        ):
            if epochs > 1 and 0 < successes < epochs:
                found.append(Flaky(run.label, task, sample_id, epochs, successes / epochs))
    return found[:MAX_ROWS]


def crash_reasons(runs: Sequence[LoadedRun]) -> list[CrashReason]:
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
    ][:MAX_ROWS]


def audits(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """The three audits of the task runs, for the HTML report."""
    return {
        "failed_by_all": failed_by_all(runs),
        "flaky": flaky(runs),
        "crashes": crash_reasons(runs),
        "runs": len(runs),
    }
