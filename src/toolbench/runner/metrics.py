"""Turning a run's records into per-task metrics and counts (also used by ``report``)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from toolbench.tasks.base import Task
from toolbench.types import Outcome, Status


def outcome_of(record: dict[str, Any]) -> Outcome:
    """The outcome a record holds; a metric stored as null (it was NaN or infinite, which
    the log refuses) counts as missing."""
    metrics = record.get("metrics") or {}
    return Outcome(
        status=Status(record["status"]),
        success=bool(record.get("success")),
        metrics={name: value for name, value in metrics.items() if value is not None},
        message=record.get("message", ""),
    )


def counts_of(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts = {status.value: 0 for status in Status}
    for record in records:
        counts[record["status"]] += 1
    return counts


def task_metrics(
    task: Task, records: list[dict[str, Any]]
) -> tuple[dict[str, float], dict[str, float]]:
    """(mean over epochs, standard deviation over epochs) of each of the task's metrics."""
    by_epoch: dict[int, list[Outcome]] = defaultdict(list)
    for record in records:
        by_epoch[int(record["epoch"])].append(outcome_of(record))
    per_epoch = [task.aggregate(outcomes) for _, outcomes in sorted(by_epoch.items())]
    per_epoch = [m for m in per_epoch if m]
    if not per_epoch:
        return {}, {}
    means = {name: statistics.fmean(m[name] for m in per_epoch) for name in per_epoch[0]}
    spread = {
        name: statistics.pstdev([m[name] for m in per_epoch]) if len(per_epoch) > 1 else 0.0
        for name in per_epoch[0]
    }
    return means, spread
