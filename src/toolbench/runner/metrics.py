"""Turning a run's records into per-task metrics and counts (also used by ``report``)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from toolbench.core.task import Task
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
    # A metric can be undefined in some epochs (virtual_home's lcs_score_if_executable when
    # no sample of that epoch is executable): it is averaged over the epochs that define it.
    names = dict.fromkeys(name for m in per_epoch for name in m)
    values = {name: [m[name] for m in per_epoch if name in m] for name in names}
    means = {name: statistics.fmean(v) for name, v in values.items()}
    spread = {name: statistics.pstdev(v) if len(v) > 1 else 0.0 for name, v in values.items()}
    return means, spread
