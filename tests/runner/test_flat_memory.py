"""Resuming, finishing and reporting a run hold per-sample state, not its records: the memory
they allocate (``tracemalloc`` peak) barely moves when the log grows tenfold. (Peak RSS of the
real commands at 10k, 100k and 1M records: ``benchmarks/memory_scale.py``.)"""

from __future__ import annotations

import functools
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.core.task import TaskBase
from toolbench.report.summary import LoadedRun, summarize
from toolbench.runner.engine import PreparedTask
from toolbench.runner.run import finish_info
from toolbench.runner.store import RunStore
from toolbench.types import Sample

SAMPLES = 50


@dataclass
class MeanTask(TaskBase):
    name: str = "t"
    metrics: tuple[str, ...] = ("success_rate", "crash_rate", "f1")


def _log(folder: Path, epochs: int) -> Path:
    """A finished run of SAMPLES x epochs records of ~600 bytes each."""
    store = RunStore(folder)
    info = {"fingerprint": "f", "status": "running", "config": {"model": "m", "epochs": epochs}}
    store.write_info(info)
    for epoch in range(epochs):
        for i in range(SAMPLES):
            status = "model_error" if (i + epoch) % 7 == 0 else "scored"
            store.append(
                {
                    "task": "t", "id": str(i), "epoch": epoch, "status": status,
                    "success": (i * epoch) % 3 == 0, "metrics": {"f1": (i % 5) / 4},
                    "message": f"line {epoch}: " + "x" * 500, "prediction": "p" * 50,
                }
            )  # fmt: skip
    store.close()
    store.write_info({**info, "status": "complete"})
    return folder


def _peak(work: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _finish(folder: Path, epochs: int) -> None:
    samples = [Sample(id=str(i), task="t", query="q", labels=("x",)) for i in range(SAMPLES)]
    prepared = [PreparedTask(MeanTask(), None, samples)]  # type: ignore[arg-type]
    store = RunStore(folder)
    store.prepare_resume()
    log = store.finished_log()
    _, finished = finish_info({"config": {"epochs": epochs}}, prepared, log)
    assert log.check.ok and finished == SAMPLES * epochs


def _report(folder: Path) -> None:
    run = LoadedRun(folder)
    assert run.log.ok
    summarize(run)


def test_resume_finish_and_report_do_not_grow_with_the_log(tmp_path: Path) -> None:
    small, large = _log(tmp_path / "small", 20), _log(tmp_path / "large", 200)
    log_bytes = (large / "samples.jsonl").stat().st_size
    assert log_bytes > 5_000_000  # 10,000 records: holding them would cost tens of MB
    works: list[Callable[[Path, int], Any]] = [
        lambda folder, epochs: RunStore(folder).prepare_resume(),
        _finish,
        lambda folder, epochs: _report(folder),
    ]
    for work in works:
        work(small, 20)  # first calls import modules and fill caches: not what is measured
        before = _peak(functools.partial(work, small, 20))
        grown = _peak(functools.partial(work, large, 200)) - before
        assert grown < 500_000, f"{work}: {grown} bytes more for 9,000 more records"
