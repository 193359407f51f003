"""From a task's gold labels, the cases that test its judge: rewrites, perturbations, swaps.

Deterministic: the same samples give the same cases, so a verdict that changes between runs is
the judge's doing. Swaps pair sample j with the sample half the file away (never itself).
"""

from __future__ import annotations

from collections.abc import Sequence

from tests.judge_validity import curls, programs, sheets
from tests.judge_validity.cases import SWAP, Case
from toolbench.types import Sample

CURL_TASKS = ("open_weather", "the_cat_api")
# The tasks this check derives cases for (virtual_home, web_shop and tabletop have none: their
# judges are diff-tested against the originals' own code instead).
JUDGED_TASKS = ("home_search", "booking", "google_sheets", *CURL_TASKS)


def cases_for_task(
    task: str, samples: Sequence[Sample], chosen: Sequence[Sample]
) -> dict[str, list[Case]]:
    """Per chosen sample id: its rewrites, perturbations and one swap. Values for wrong
    answers (cities, ids, setters) come from every sample's golds."""
    golds = [label for sample in samples for label in sample.labels]
    found: dict[str, list[Case]] = {}
    for seed, sample in enumerate(chosen):
        found[sample.id] = [*_cases_of(task, sample, golds, seed), _swap(samples, sample)]
    return found


def _cases_of(task: str, sample: Sample, golds: list[str], seed: int) -> list[Case]:
    gold = sample.labels[0]
    if task in ("home_search", "booking"):
        pool = programs.Pool.of(golds)
        return [
            *programs.program_rewrites(task, gold),
            *programs.program_perturbations(task, gold, pool, seed),
        ]
    if task == "google_sheets":
        return [*sheets.sheet_rewrites(gold), *sheets.sheet_perturbations(gold, seed)]
    if task in CURL_TASKS:
        string_only = bool(sample.fields.get("compare_string_only"))
        state = sample.fields.get("state")
        return [
            *curls.curl_rewrites(task, gold, string_only),
            *curls.curl_perturbations(task, gold, golds, seed, state),
        ]
    raise ValueError(f"no case generator for task {task!r}")


def _swap(samples: Sequence[Sample], sample: Sample) -> Case:
    position = next(i for i, s in enumerate(samples) if s.id == sample.id)
    other = samples[(position + max(1, len(samples) // 2)) % len(samples)]
    return Case(SWAP, "gold_swap", other.labels[0])


def same_request(task: str, prediction: str, labels: Sequence[str]) -> bool:
    """For curl tasks: the prediction decodes to the same request as one of the labels."""
    if task not in CURL_TASKS:
        return False
    return curls.same_request(task, prediction, labels)
