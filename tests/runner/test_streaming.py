"""A run's end, its resume and its chain check read the log as it streams and hold per-sample
(or per-epoch) state: these check that they give exactly what the list-based computations
gave, over random logs in random orders."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolbench.core.task import TaskBase
from toolbench.runner import chain
from toolbench.runner.capabilities import Summarizes
from toolbench.runner.donekeys import DoneKeys
from toolbench.runner.engine import PreparedTask
from toolbench.runner.metrics import task_metrics
from toolbench.runner.run import finish_info
from toolbench.runner.store import (
    ATTEMPTS_FILE,
    MAX_READ_LINE_BYTES,
    SAMPLES_FILE,
    DamagedRecord,
    RunStore,
    iter_log,
    read_records,
    record_key,
)
from toolbench.tables.runs import counts_of
from toolbench.tasks.virtual_home.metrics import aggregate as virtual_home_aggregate
from toolbench.types import Outcome, Sample

STATUSES = ("scored", "model_error", "infra_error")


@dataclass
class MeanTask(TaskBase):
    name: str = "mean"
    metrics: tuple[str, ...] = ("success_rate", "crash_rate", "f1")


@dataclass
class WorldTask(TaskBase):
    """Aggregates like virtual_home: a metric some epochs leave undefined."""

    name: str = "world"
    metrics: tuple[str, ...] = ("lcs_score_if_executable", "goal_success")

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return virtual_home_aggregate(outcomes)


@dataclass
class CountingTask(TaskBase):
    """Summarizes its whole log itself (as the awareness task does)."""

    name: str = "whole"
    metrics: tuple[str, ...] = ("n",)

    def summarize(self, records: Sequence[Any]) -> dict[str, Any] | None:
        order = [(r["epoch"], r["id"]) for r in records]
        return {"metrics": {"n": len(records), "order": order}, "counts": {"all": len(records)}}


@dataclass
class NoSummaryTask(MeanTask):
    name: str = "nosummary"

    def summarize(self, records: Sequence[Any]) -> dict[str, Any] | None:
        return None


def _prepared(task: TaskBase, n: int) -> PreparedTask:
    samples = [Sample(id=str(i), task=task.name, query="q", labels=("x",)) for i in range(n)]
    return PreparedTask(task=task, resources=None, samples=samples)  # type: ignore[arg-type]


def _record(task: str, sample_id: str, epoch: int, rng: random.Random) -> dict[str, Any]:
    status = rng.choice(STATUSES)
    metrics: dict[str, Any] = {}
    if status == "scored":
        for name in ("f1", "lcs_score_if_executable", "goal_success"):
            if rng.random() < 0.7:
                metrics[name] = rng.choice([0.0, 0.25, 1 / 3, 1.0, None])
    record = {"task": task, "id": sample_id, "epoch": epoch, "status": status}
    record |= {"success": rng.random() < 0.5, "metrics": metrics}
    if status == "model_error" and rng.random() < 0.3:
        record["error_kind"] = "context_overflow"
    return record


def _finish_by_lists(
    info: dict[str, Any], prepared: list[PreparedTask], records: list[dict[str, Any]]
) -> tuple[dict[str, Any], int]:
    """``finish_info`` as it was before it streamed (every record in a dict and lists)."""
    info = dict(info)
    epochs = int(info["config"]["epochs"])
    by_key = {(r["task"], r["id"], r["epoch"]): r for r in records}
    info["metrics"], info["metrics_spread"], info["counts"] = {}, {}, {}
    finished = 0
    for p in prepared:
        wanted = [(s.task, s.id, e) for e in range(epochs) for s in p.samples]
        task_records = [by_key[key] for key in wanted if key in by_key]
        summary = p.task.summarize(task_records) if isinstance(p.task, Summarizes) else None
        if summary is not None:
            info["metrics"], info["counts"] = summary["metrics"], summary["counts"]
            del info["metrics_spread"]
            finished += sum(1 for r in task_records if r["status"] != "infra_error")
            continue
        means, spread = task_metrics(p.task, task_records)
        info["metrics"][p.task.name] = means
        if epochs > 1:
            info["metrics_spread"][p.task.name] = spread
        counts = counts_of(task_records)
        info["counts"][p.task.name] = counts
        finished += counts["scored"] + counts["model_error"]
    return info, finished


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[PreparedTask], int, list[dict[str, Any]]]:
    """Tasks, epochs, and a log: some keys missing, some outside the selection, in an order
    from strictly epoch by epoch to fully shuffled (a concurrent run is in between)."""
    kinds = draw(st.lists(st.sampled_from([MeanTask, WorldTask, NoSummaryTask]), max_size=3))
    tasks = [cls() for cls in dict.fromkeys(kinds)]
    if draw(st.booleans()):
        tasks.append(CountingTask())
    prepared = [_prepared(t, draw(st.integers(1, 5))) for t in tasks]
    epochs = draw(st.integers(1, 6))
    rng = random.Random(draw(st.integers(0, 2**32)))
    records = [
        _record(s.task, s.id, e, rng)
        for e in range(epochs + 1)  # epoch ``epochs`` is outside the selection
        for p in prepared
        for s in [*p.samples, Sample(id="99", task=p.task.name, query="q", labels=())]
        if rng.random() < 0.85
    ]
    window = draw(st.integers(1, len(records) + 1))  # how far a record may move
    keyed = sorted(enumerate(records), key=lambda item: item[0] + rng.random() * window)
    return prepared, epochs, [record for _, record in keyed]


@given(logs())
@settings(max_examples=150, deadline=None)
def test_finish_info_streams_to_the_same_numbers(
    case: tuple[list[PreparedTask], int, list[dict[str, Any]]],
) -> None:
    prepared, epochs, records = case
    info = {"config": {"epochs": epochs}}
    expected = _finish_by_lists(info, prepared, records)
    assert finish_info(info, prepared, iter(records)) == expected


@given(st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from(["0", "1", "x"]),
                          st.integers(0, 40))))  # fmt: skip
def test_done_keys_behave_as_a_set(keys: list[tuple[str, str, int]]) -> None:
    done, reference = DoneKeys(), set()
    for key in keys:
        assert done.add(key) == (key not in reference)
        reference.add(key)
    assert len(done) == len(reference) and set(done) == reference
    assert bool(done) == bool(reference)
    for task in "ab":
        for sample_id in ("0", "1", "x", "y"):
            for epoch in range(45):
                key = (task, sample_id, epoch)
                assert (key in done) == (key in reference)
    assert ("a", "0", -1) not in done and "a" not in done


def _written(folder: Path, records: list[dict[str, Any]]) -> None:
    store = RunStore(folder)
    store.write_info({"fingerprint": "f", "status": "running"})
    for record in records:
        store.append(record)
    store.close()


@given(st.lists(st.tuples(st.sampled_from(["0", "1", "2", "3"]), st.integers(0, 3),
                          st.sampled_from(STATUSES)), max_size=30))  # fmt: skip
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_resume_keeps_what_the_list_based_resume_kept(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, int, str]]
) -> None:
    """Done keys, the log kept and the attempts set aside are those of the old resume (which
    held every record in a dict); a key written twice counts once, its last record kept."""
    folder = tmp_path_factory.mktemp("resume")
    records = [{"task": "t", "id": i, "epoch": e, "status": s} for i, e, s in rows]
    _written(folder, records)
    done = RunStore(folder).prepare_resume()
    last: dict[Any, dict[str, Any]] = {}
    for record in records:
        if record["status"] != "infra_error":
            last[record_key(record)] = record
    retried = [r for r in records if r["status"] == "infra_error"]
    assert set(done) == set(last) and len(done) == len(last)
    kept = read_records(folder)
    if retried:
        assert sorted(kept, key=record_key) == sorted(last.values(), key=record_key)
        attempts = (folder / ATTEMPTS_FILE).read_text().splitlines()
        assert [json.loads(line) for line in attempts] == retried
    else:
        assert kept == records
    again = RunStore(folder)
    assert set(again.prepare_resume()) == set(last)
    assert again.verify().ok


def test_the_log_is_read_line_by_line_with_its_torn_tail_and_caps(tmp_path: Path) -> None:
    _written(tmp_path, [{"task": "t", "id": str(i), "epoch": 0, "status": "scored"}
                        for i in range(3)])  # fmt: skip
    path = tmp_path / SAMPLES_FILE
    with path.open("ab") as handle:  # a torn tail longer than the cap is still a torn tail
        handle.write(b'{"task": "' + b"x" * (MAX_READ_LINE_BYTES + 10))
    assert [line.number for line in iter_log(path)] == [1, 2, 3]
    assert len(RunStore(tmp_path).prepare_resume()) == 3
    with path.open("ab") as handle:
        handle.write(b"y" * (MAX_READ_LINE_BYTES + 5) + b"\n")
    with pytest.raises(DamagedRecord, match=r":4: record of .* bytes is over the size cap"):
        list(iter_log(path))


def test_the_chain_checker_holds_nothing_per_record(tmp_path: Path) -> None:
    """A long log checks out with the checker's state a few values (the line numbers it may
    name), and a record removed from the middle is still found at its line."""
    records = [{"task": "t", "id": str(i), "epoch": 0, "status": "scored"} for i in range(500)]
    _written(tmp_path, records)
    store = RunStore(tmp_path)
    checker = chain.ChainChecker(store._chain(), exact=False)
    for line in iter_log(tmp_path / SAMPLES_FILE):
        checker.feed(line.number, line.raw)
    assert checker.result().ok and len(checker._numbers) <= 3
    path = tmp_path / SAMPLES_FILE
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:200] + lines[201:]))
    check = store.verify()
    assert not check.ok and check.line == 201
