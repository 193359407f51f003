"""The run's event loop (``runner/aio.py``): uvloop when installed, asyncio's own on request,
and the same records either way (end to end through the CLI)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.runner import aio

uvloop = pytest.importorskip("uvloop")

# Fields that depend on timing or on the run's random chain seed, not on the loop.
UNPINNABLE = {"latency_s", "chain"}


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


def test_uvloop_runs_the_work_unless_asyncio_is_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(aio.LOOP_ENV, raising=False)
    assert issubclass(aio.run(_loop_type()), uvloop.Loop)
    monkeypatch.setenv(aio.LOOP_ENV, "asyncio")
    assert not issubclass(aio.run(_loop_type()), uvloop.Loop)
    assert aio.loop_factory() is None


def test_a_failure_inside_the_loop_propagates_unchanged() -> None:
    async def fails() -> None:
        raise ValueError("from inside the loop")

    with pytest.raises(ValueError, match="from inside the loop"):
        aio.run(fails())


def _records(folder: Path) -> list[dict[str, object]]:
    _info, records = read_run(folder)
    strip = lambda value: (  # noqa: E731 - a small recursive projection
        {k: strip(v) for k, v in value.items() if k not in UNPINNABLE}
        if isinstance(value, dict)
        else [strip(v) for v in value]
        if isinstance(value, list)
        else value
    )
    return sorted((strip(r) for r in records), key=lambda r: (r["task"], r["id"], r["epoch"]))


def test_both_loops_write_the_same_records(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right and wrong answers (the baseline gets some home_search samples wrong) and
    model errors alike: the loop changes how fast records come, never what they say."""
    args = ("run", "home_search", "--model", "baseline", "--limit", "12", "--no-cache")
    folders = {}
    for loop in ("uvloop", "asyncio"):
        monkeypatch.setenv(aio.LOOP_ENV, loop)
        folders[loop] = tmp_path / loop
        code, _out, err = cli(*args, "--out", str(folders[loop]))
        assert code == 0, err
    assert _records(folders["uvloop"]) == _records(folders["asyncio"])
    info, records = read_run(folders["uvloop"])
    assert len(records) == 12 and info["status"] == "complete"
    assert {r["status"] for r in records} <= {"scored", "model_error"}
