"""``toolbench report`` reads each log once into per-sample tallies: these check that the
numbers, the audits and the explorer's choice of records are what the list-based report
computed from every record, over random logs written in random orders."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.report.runs import make_run
from toolbench.report import audits, explorer
from toolbench.report.summary import LoadedRun, id_order, reason_of, summarize
from toolbench.runner.store import read_records
from toolbench.tables.bootstrap import bootstrap_mean, seed_for
from toolbench.tables.runs import counts_of

METRICS = ("success_rate", "crash_rate", "f1", "turns")
INFO = {"metric_names": {"a": ["success_rate", "crash_rate", "f1"], "b": list(METRICS)}}


def _old_per_sample_values(records: Sequence[dict[str, Any]], metric: str) -> dict[str, float]:
    """The report's per-sample means as they were computed from a list of records."""
    if metric not in ("success_rate", "crash_rate") and not any(
        metric in (r.get("metrics") or {}) for r in records
    ):
        return {}
    sums: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r["status"] == "infra_error":
            continue
        if metric == "success_rate":
            value = 1.0 if r.get("success") else 0.0
        elif metric == "crash_rate":
            value = 1.0 if r["status"] == "model_error" else 0.0
        else:
            raw = (r.get("metrics") or {}).get(metric)
            if raw is None and r["status"] == "scored":
                continue
            value = float(raw or 0.0)
        sums[str(r["id"])].append(value)
    return {key: sum(sums[key]) / len(sums[key]) for key in sorted(sums, key=id_order)}


def _records(seed: int, samples: int, epochs: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for epoch in range(epochs):
        for task in ("a", "b"):
            for i in range(samples):
                if rng.random() < 0.1:
                    continue
                status = rng.choice(["scored", "scored", "model_error", "infra_error"])
                metrics = {}
                if status == "scored" and rng.random() < 0.8:
                    metrics["f1"] = rng.choice([0.0, 0.5, 1 / 3, 1.0, None])
                if task == "b" and rng.random() < 0.5:
                    metrics["turns"] = float(rng.randint(1, 9))
                out.append(
                    {
                        "task": task,
                        "id": str(i if rng.random() < 0.9 else f"s{i}"),
                        "epoch": epoch,
                        "status": status,
                        "success": status == "scored" and rng.random() < 0.5,
                        "metrics": metrics,
                        "message": rng.choice(["", "name 'x' is not defined", "line 3: bad"]),
                    }
                )
    window = rng.randint(1, len(out) + 1)  # from epoch order to fully shuffled
    return [r for _, r in sorted(enumerate(out), key=lambda e: e[0] + rng.random() * window)]


cases = st.tuples(st.integers(0, 2**32), st.integers(1, 6), st.integers(1, 7))


@given(cases)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_the_report_gives_the_list_based_numbers(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[int, int, int]
) -> None:
    records = _records(*case)
    run = LoadedRun(make_run(tmp_path_factory.mktemp("run"), records, info=INFO))
    assert run.log.ok and run.record_count == len(records)
    assert run.status.done == sum(1 for r in records if r["status"] != "infra_error")
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_task[r["task"]].append(r)
    assert run.tasks == list(by_task)
    summary = summarize(run)
    for task, task_records in by_task.items():
        assert summary[task]["counts"] == counts_of(task_records)
        for metric in INFO["metric_names"][task]:
            values = _old_per_sample_values(task_records, metric)
            assert run.tallies[task].values(metric) == values
            if values:
                expected = bootstrap_mean(list(values.values()), seed=seed_for(task))
                assert summary[task][metric] == expected
            else:
                assert metric not in summary[task]
    assert run.by_task == by_task  # read again on demand, as before


def _old_audits(runs: Sequence[list[dict[str, Any]]], labels: Sequence[str]) -> dict[str, Any]:
    """The audits as they were computed from every record of each run."""
    outcomes = []
    for records in runs:
        out: dict[tuple[str, str], list[bool]] = defaultdict(list)
        for r in records:
            if r["status"] != "infra_error":
                out[(r["task"], str(r["id"]))].append(bool(r.get("success")))
        outcomes.append(out)
    attempts: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for out in outcomes:
        for key, successes in out.items():
            attempts[key].append(any(successes))
    failed = sorted(
        (k for k, tried in attempts.items() if len(tried) >= min(2, len(runs)) and not any(tried)),
        key=lambda k: (k[0], id_order(k[1])),
    )
    flaky = [
        (label, key, len(s), sum(s) / len(s))
        for label, out in zip(labels, outcomes, strict=True)
        for key, s in sorted(out.items(), key=lambda e: (e[0][0], id_order(e[0][1])))
        if len(s) > 1 and 0 < sum(s) < len(s)
    ]
    counts: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for records in runs:
        for r in records:
            if r["status"] == "model_error":
                key = (r["task"], reason_of(str(r.get("message") or "")))
                counts[key] += 1
                example.setdefault(key, str(r["id"]))
    crashes = [(k, n, example[k]) for k, n in sorted(counts.items(), key=lambda e: (-e[1], e[0]))]
    return {"failed": failed, "flaky": flaky, "crashes": crashes}


@given(st.lists(cases, min_size=1, max_size=3))
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_the_audits_give_the_list_based_rows(
    tmp_path_factory: pytest.TempPathFactory, many: list[tuple[int, int, int]]
) -> None:
    logs = [_records(*case) for case in many]
    runs = [LoadedRun(make_run(tmp_path_factory.mktemp("run"), r, info=INFO)) for r in logs]
    old = _old_audits(logs, [run.label for run in runs])
    assert [(f.task, f.id) for f in audits.failed_by_all(runs)] == old["failed"]
    flaky = [(f.run, (f.task, f.id), f.epochs, f.success_rate) for f in audits.flaky(runs)]
    assert flaky == old["flaky"]
    crashes = [((c.task, c.reason), c.count, c.example_id) for c in audits.crash_reasons(runs)]
    assert crashes == old["crashes"]


def test_the_explorer_shows_every_epoch_of_a_short_run(tmp_path: Path) -> None:
    records = _records(7, 4, explorer.EPOCHS_SHOWN)
    run = LoadedRun(make_run(tmp_path / "run", records, info=INFO))
    shown, notes = explorer.shown_records(run)
    key = lambda r: (r["task"], id_order(str(r["id"])), r["epoch"])  # noqa: E731
    assert shown == sorted(read_records(run.folder), key=key) and notes == {}


def test_the_explorer_shows_the_first_epochs_and_first_failure_of_a_long_run(
    tmp_path: Path,
) -> None:
    """100 epochs of one sample: its first 3 epochs and its first failure (epoch 40) are
    embedded, and its note says how many epochs of each status it has."""
    records = [
        {"task": "a", "id": "0", "epoch": e, "status": "scored", "success": e != 40}
        for e in reversed(range(100))  # the log's order does not matter
    ]
    run = LoadedRun(make_run(tmp_path / "run", records, info=INFO))
    shown, notes = explorer.shown_records(run)
    assert [r["epoch"] for r in shown] == [0, 1, 2, 40]
    assert notes == {
        ("a", "0"): "100 epochs (100 scored, 0 model errors, 0 infra errors; 99 succeeded); "
        "shown: epochs 0, 1, 2, 40 (the first ones and the first failure)"
    }
    data = explorer.explorer_data([run], None)
    assert [r["e"] for r in data["records"]] == [0, 1, 2, 40]
    assert all(r["note"].startswith("100 epochs") for r in data["records"])
