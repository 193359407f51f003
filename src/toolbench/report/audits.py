"""Where to look first when numbers seem wrong: samples every model failed (a wrong gold or an
impossible task is the likeliest cause), samples whose outcome flips across epochs (flaky
scoring or a sampling model near its boundary), and crash reasons grouped and counted.

Crash messages are grouped after masking what varies between samples (quoted names, numbers),
so "name 'products' is not defined" and "name 'rows' is not defined" count as one reason.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolbench.report.summary import LoadedRun, id_order

MAX_ROWS = 500
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")


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


def _outcomes(run: LoadedRun) -> dict[tuple[str, str], list[bool]]:
    """(task, id) -> success per epoch, infra errors left out (they say nothing of the model)."""
    out: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for r in run.records:
        if r["status"] != "infra_error":
            out[(r["task"], str(r["id"]))].append(bool(r.get("success")))
    return out


def _order(key: tuple[str, str]) -> tuple[str, tuple[int, int, str]]:
    return key[0], id_order(key[1])


def failed_by_all(runs: Sequence[LoadedRun]) -> list[FailedByAll]:
    """Samples that every run attempting them failed in every epoch, when at least two runs
    attempted them (one run failing is no evidence against the gold)."""
    attempts: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for run in runs:
        for key, successes in _outcomes(run).items():
            attempts[key].append(any(successes))
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
        for (task, sample_id), successes in sorted(
            _outcomes(run).items(), key=lambda e: _order(e[0])
        ):
            if len(successes) > 1 and 0 < sum(successes) < len(successes):
                rate = sum(successes) / len(successes)
                found.append(Flaky(run.label, task, sample_id, len(successes), rate))
    return found[:MAX_ROWS]


def reason_of(message: str) -> str:
    """A crash message with what varies between samples masked."""
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    masked = _NUMBER.sub("N", _QUOTED.sub("'…'", first[:300]))
    return masked


def crash_reasons(runs: Sequence[LoadedRun]) -> list[CrashReason]:
    """Model errors per task and masked message, most frequent first."""
    counts: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[str]] = defaultdict(set)
    example: dict[tuple[str, str], str] = {}
    for run in runs:
        for r in run.records:
            if r["status"] != "model_error":
                continue
            key = (r["task"], reason_of(str(r.get("message") or "")))
            counts[key] += 1
            where[key].add(run.label)
            example.setdefault(key, str(r["id"]))
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
