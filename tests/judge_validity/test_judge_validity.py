"""Every task's judge on our v0 data: rewrites all pass, perturbations and gold swaps fail.

A fixed, evenly spread subset of 40 samples per task keeps this fast; the full sets run with
``python benchmarks/judge_validity.py all``. Scoring goes through ``task.load`` and
``task.score`` with a real sandbox pool, so a verdict here is the verdict a run would give.
"""

from __future__ import annotations

import functools

import pytest

from tests.judge_validity.cases import PERTURBATION, REWRITE, SWAP
from tests.judge_validity.harness import THRESHOLDS, TaskReport, evaluate

SAMPLES_PER_TASK = 40
TASKS = ("home_search", "booking", "open_weather", "the_cat_api", "google_sheets")

# (task, family) -> why a threshold is known to be missed: empty since the real gazetteer and
# the procedural cat catalogue landed. A judge that regresses fails here, not quietly.
KNOWN_BLIND_SPOTS: dict[tuple[str, str], str] = {}


@functools.cache
def report(task: str) -> TaskReport:
    return evaluate(task, limit=SAMPLES_PER_TASK)


def _cases() -> list[object]:
    params: list[object] = []
    for task in TASKS:
        for family in (REWRITE, PERTURBATION, SWAP):
            reason = KNOWN_BLIND_SPOTS.get((task, family))
            marks = [pytest.mark.xfail(strict=False, reason=reason)] if reason else []
            params.append(pytest.param(task, family, marks=marks, id=f"{task}-{family}"))
    return params


@pytest.mark.parametrize(("task", "family"), _cases())
def test_judge_verdicts_meet_thresholds(task: str, family: str) -> None:
    tally = report(task).tallies[family]
    op, limit = THRESHOLDS[family]
    assert tally.cases >= SAMPLES_PER_TASK, f"too few {family}s generated for {task}"
    detail = "; ".join(f"[{kind}] {example}" for kind, example in tally.examples.items())
    if op == ">=":
        assert tally.rate >= limit, f"{task}: {tally.rate:.1%} of {family}s succeed: {detail}"
    else:
        assert tally.rate <= limit, f"{task}: {tally.rate:.1%} of {family}s succeed: {detail}"


@pytest.mark.parametrize("task", TASKS)
def test_most_perturbations_are_real_changes(task: str) -> None:
    """The generator's perturbations nearly always change the answer; discarding many would
    mean it mostly produces noise and the rate above measures little."""
    tally = report(task).tallies[PERTURBATION]
    assert tally.discarded <= 0.1 * (tally.cases + tally.discarded)
    assert len(tally.kinds) >= 4, f"{task}: only {sorted(tally.kinds)}"
