"""Score generated cases through each task's real path (load, prepare, ``task.score``).

A perturbation only counts when it really changes the answer: for programs, the executed world
state (criteria dict, sheet) must differ from every gold's; for curl, the request must differ
from every gold request once decoded, and a change of only values the API maps many to one
(open_weather's limit, ZIP, coordinates: ``curls.MANY_TO_ONE``) must change the response.
Those that do not are discarded and counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.judge_validity.cases import PERTURBATION, REWRITE, SWAP, Case
from tests.judge_validity.curls import differs_only_in_many_to_one
from tests.judge_validity.generate import cases_for_task, same_request
from toolbench.core.task import TaskData, load_prepared
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.registry import get_task
from toolbench.types import Outcome, Sample, Status

THRESHOLDS = {REWRITE: (">=", 1.0), PERTURBATION: ("<=", 0.02), SWAP: ("<=", 0.05)}


@dataclass
class Tally:
    cases: int = 0
    successes: int = 0
    crashes: int = 0
    discarded: int = 0
    # kind -> (cases, successes); and the first wrong verdict of each kind, for the report
    kinds: dict[str, list[int]] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.successes / self.cases if self.cases else 0.0

    def add(self, case: Case, sample: Sample, outcome: Outcome) -> None:
        self.cases += 1
        self.crashes += outcome.status is Status.MODEL_ERROR
        counts = self.kinds.setdefault(case.kind, [0, 0])
        counts[0] += 1
        if outcome.success:
            self.successes += 1
            counts[1] += 1
        if outcome.success != (case.family == REWRITE) and case.kind not in self.examples:
            verdict = outcome.message or outcome.details.get("differences") or "success"
            self.examples[case.kind] = f"sample {sample.id}: {case.prediction!r} -> {verdict}"


@dataclass
class TaskReport:
    task: str
    samples: int
    tallies: dict[str, Tally]

    def failures(self) -> list[str]:
        """The thresholds this task misses, one line each."""
        missed = []
        for family, (op, limit) in THRESHOLDS.items():
            tally = self.tallies[family]
            ok = tally.rate >= limit if op == ">=" else tally.rate <= limit
            if tally.cases and not ok:
                missed.append(f"{self.task} {family}s: {tally.rate:.1%} (must be {op} {limit:.0%})")
            if not tally.cases:
                missed.append(f"{self.task} {family}s: no cases generated")
        return missed


def spread(samples: Sequence[Sample], limit: int | None) -> list[Sample]:
    """At most ``limit`` samples, evenly spread over the file (all of them without a limit)."""
    if limit is None or limit >= len(samples):
        return list(samples)
    return [samples[i * len(samples) // limit] for i in range(limit)]


def evaluate(
    task_name: str,
    data_dir: Path | None = None,
    limit: int | None = None,
    version: str = "v0",
    workers: int = 2,
) -> TaskReport:
    task: Any = get_task(task_name)
    with SandboxPool(workers=workers) as pool:
        data = load_prepared(task, version, data_dir, pool)
        chosen = spread(data.samples, limit)
        cases = cases_for_task(task_name, data.samples, chosen)
        tallies = {family: Tally() for family in THRESHOLDS}
        jobs = [(sample, case) for sample in chosen for case in cases[sample.id]]
        jobs = _keep_semantic(task_name, data, jobs, tallies[PERTURBATION])
        outcomes = asyncio.run(_score_all(task, data, jobs, pool))
    for (sample, case), outcome in zip(jobs, outcomes, strict=True):
        tally = tallies[case.family]
        if case.family == PERTURBATION and (
            _same_state(data, sample, outcome) or _same_response(task_name, sample, case, outcome)
        ):
            tally.discarded += 1
            continue
        tally.add(case, sample, outcome)
    return TaskReport(task_name, len(chosen), tallies)


def _keep_semantic(
    task_name: str, data: TaskData, jobs: list[tuple[Sample, Case]], tally: Tally
) -> list[tuple[Sample, Case]]:
    """Curl perturbations whose decoded request equals a gold's are not perturbations."""
    kept = []
    for sample, case in jobs:
        if case.family == PERTURBATION and same_request(task_name, case.prediction, sample.labels):
            tally.discarded += 1
            continue
        kept.append((sample, case))
    return kept


def _same_response(task_name: str, sample: Sample, case: Case, outcome: Outcome) -> bool:
    """A curl perturbation of many-to-one values that got the gold's response (see above)."""
    return bool(outcome.success) and differs_only_in_many_to_one(
        task_name, case.prediction, sample.labels
    )


def _same_state(data: TaskData, sample: Sample, outcome: Outcome) -> bool:
    """A program perturbation that left the same world as a gold changed nothing."""
    if outcome.status is not Status.SCORED or "state" not in outcome.details:
        return False
    return any(outcome.details["state"] == gold for gold in data.gold.get(sample.id, []))


async def _score_all(
    task: Any, data: TaskData, jobs: list[tuple[Sample, Case]], pool: SandboxPool
) -> list[Outcome]:
    async def one(sample: Sample, case: Case) -> Outcome:
        action = task.extract_action(case.prediction)
        result: Outcome = await task.score(data, sample, action, pool)
        return result

    return list(await asyncio.gather(*(one(s, c) for s, c in jobs)))


def format_report(report: TaskReport, show: Callable[[str], None] = print) -> None:
    show(f"{report.task}: {report.samples} samples")
    for family, tally in report.tallies.items():
        show(
            f"  {family + 's':14} {tally.cases:5} cases  success {tally.successes:4} "
            f"({tally.rate:6.1%})  crashed {tally.crashes:4}  discarded {tally.discarded}"
        )
        for kind, (count, wins) in sorted(tally.kinds.items()):
            show(f"      {kind:32} {count:4}  success {wins:4}")
        for kind, example in tally.examples.items():
            show(f"      wrong verdict [{kind}]: {example[:400]}")
