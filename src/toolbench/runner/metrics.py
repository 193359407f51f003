"""Turning a run's records into per-task metrics and counts (also used by ``report``).

``task_metrics`` takes a list of records; ``EpochMetrics`` gives the same numbers from a log
read once, holding per-epoch state (a million-record run is never held)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from toolbench.core.capabilities import aggregate
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
    return over_epochs([aggregate(task, outcomes) for _, outcomes in sorted(by_epoch.items())])


def over_epochs(per_epoch: list[dict[str, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """(mean, standard deviation) of each metric over the epochs' aggregates, in epoch order.
    A metric can be undefined in some epochs (virtual_home's lcs_score_if_executable when no
    sample of that epoch is executable): it is averaged over the epochs that define it."""
    per_epoch = [m for m in per_epoch if m]
    if not per_epoch:
        return {}, {}
    names = dict.fromkeys(name for m in per_epoch for name in m)
    values = {name: [m[name] for m in per_epoch if name in m] for name in names}
    means = {name: statistics.fmean(v) for name, v in values.items()}
    spread = {name: statistics.pstdev(v) if len(v) > 1 else 0.0 for name, v in values.items()}
    return means, spread


class EpochMetrics:
    """``task_metrics`` in one pass over a log, holding per-epoch state instead of records.

    Each epoch's outcomes are buffered (sample position -> outcome) until the epoch holds
    every selected sample, then aggregated by the task and dropped: a run writes epochs in
    order, so only the few epochs in flight are buffered at once; what is kept per epoch is
    its metrics dict. Outcomes reach ``aggregate`` in sample order and epochs are combined in
    epoch order, as ``task_metrics`` does, so the numbers are identical. A key seen twice
    counts once: the last record while its epoch is open (as a dict of records would), the
    first once the epoch was aggregated."""

    def __init__(self, task: Task, samples: int) -> None:
        self.task, self.samples = task, samples
        self._open: dict[int, dict[int, Outcome]] = {}
        self._done: dict[int, dict[str, float]] = {}

    def add(self, epoch: int, position: int, record: dict[str, Any]) -> None:
        """The record of the sample at ``position`` (0-based, in the task's sample order)."""
        if epoch in self._done:
            return
        outcomes = self._open.setdefault(epoch, {})
        outcomes[position] = outcome_of(record)
        if len(outcomes) >= self.samples:
            self._flush(epoch)

    def _flush(self, epoch: int) -> None:
        outcomes = self._open.pop(epoch)
        self._done[epoch] = aggregate(self.task, [outcomes[p] for p in sorted(outcomes)])

    def result(self) -> tuple[dict[str, float], dict[str, float]]:
        """(mean over epochs, standard deviation over epochs), as ``task_metrics``."""
        for epoch in list(self._open):
            self._flush(epoch)
        return over_epochs([m for _, m in sorted(self._done.items())])
