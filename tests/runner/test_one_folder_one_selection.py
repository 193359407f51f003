"""A run folder is one selection of the data: runs into one folder, drawn at random (limits,
epochs, task lists, interrupted sessions), never leave run.json, the log and ``report --json``
disagreeing, never duplicate a record, and never count more done than planned.

A command that asks for at least the folder's selection extends the run; one that asks for
less, or for other tasks, is refused (exit 2 on the command line, ``UserError`` here) and
leaves the folder as it was."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import toolbench
from toolbench.cli import main
from toolbench.errors import UserError
from toolbench.models.base import Generation, GenerationRequest, ModelOptions
from toolbench.models.spec import make_model


@dataclass(frozen=True)
class Invocation:
    tasks: str
    limit: int | None
    epochs: int
    interrupt_after: int | None  # model calls before the session is interrupted (Ctrl-C)


class InterruptingOracle:
    """The oracle, under its own name (so its runs resume the oracle's), that raises
    KeyboardInterrupt at its n-th call, as a person's Ctrl-C would stop the run there."""

    name = "oracle"
    cacheable = False

    def __init__(self, calls_before_interrupt: int) -> None:
        self.inner = make_model("oracle", ModelOptions())
        self.left = calls_before_interrupt

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def generate(self, request: GenerationRequest) -> Generation:
        if self.left <= 0:
            raise KeyboardInterrupt
        self.left -= 1
        return await self.inner.generate(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


invocations = st.builds(
    Invocation,
    # mostly one task list, so most steps resume or extend; another one is refused
    tasks=st.sampled_from(["home_search"] * 4 + ["booking", "home_search,booking"]),
    limit=st.sampled_from([1, 2, 3]),
    epochs=st.integers(min_value=1, max_value=3),
    interrupt_after=st.one_of(st.none(), st.integers(min_value=0, max_value=4)),
)


def _invoke(folder: Path, step: Invocation) -> str:
    """One run into ``folder``: "done", "interrupted" or "refused"."""
    model: Any = (
        "oracle" if step.interrupt_after is None else InterruptingOracle(step.interrupt_after)
    )
    try:
        toolbench.run(step.tasks, model, out=folder, limit=step.limit, epochs=step.epochs)
    except KeyboardInterrupt:
        return "interrupted"
    except UserError as refused:
        assert "holds" in str(refused) or "different configuration" in str(refused), refused
        return "refused"
    return "done"


def _report_json(folder: Path) -> dict[str, Any]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert main(["report", str(folder), "--json"]) == 0
    return json.loads(buffer.getvalue())


def _log(folder: Path) -> list[dict[str, Any]]:
    path = folder / "samples.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _check_agreement(folder: Path) -> None:
    info = json.loads((folder / "run.json").read_text())
    records = _log(folder)
    keys = Counter((r["task"], str(r["id"]), r["epoch"]) for r in records)
    assert max(keys.values(), default=1) == 1, "a record was written twice"
    selection, config = info["selection"], info["config"]
    assert (selection["limit"], selection["epochs"]) == (config["limit"], config["epochs"])
    epochs = selection["epochs"]
    for task in config["tasks"]:
        n_selected = info["data"][task]["n_selected"]
        ids = {str(r["id"]) for r in records if r["task"] == task}
        assert len(ids) <= n_selected, f"{task}: records of samples outside the selection"
        assert all(r["epoch"] < epochs for r in records if r["task"] == task)
    assert {r["task"] for r in records} <= set(config["tasks"])
    planned = sum(info["data"][t]["n_selected"] for t in config["tasks"]) * epochs
    done = sum(1 for r in records if r["status"] != "infra_error")
    assert info["progress"] == {"done": done, "planned": planned} or info["status"] == "running"
    (status,) = _report_json(folder)["status"].values()
    assert (status["done"], status["planned"]) == (done, planned)
    assert status["done"] <= status["planned"]
    if info["status"] == "complete":
        counts = info["counts"]
        assert sum(c["scored"] + c["model_error"] for c in counts.values()) == done == planned


@pytest.mark.slow
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(invocations, min_size=2, max_size=4))
def test_runs_into_one_folder_always_agree(steps: list[Invocation]) -> None:
    root = Path(tempfile.mkdtemp(prefix="toolbench-selection-"))
    try:
        folder = root / "run"
        for step in steps:
            before = _log(folder)
            outcome = _invoke(folder, step)
            if outcome == "refused":
                assert _log(folder) == before, "a refused run changed the log"
            if (folder / "run.json").exists():
                _check_agreement(folder)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_smaller_selection_is_refused_and_a_larger_one_extends(cli: Any, tmp_path: Path) -> None:
    folder = tmp_path / "r"
    code, _, err = cli("run", "home_search", "--model", "oracle", "--limit", "3", "--epochs", "3",
                       "--out", str(folder))  # fmt: skip
    assert code == 0, err
    code, _, err = cli("run", "home_search", "--model", "oracle", "--limit", "2", "--epochs", "1",
                       "--out", str(folder))  # fmt: skip
    assert code == 2
    assert f"{folder}: holds the run of --limit 3 --epochs 3" in err
    assert "--limit 2 --epochs 1" in err and "another --out" in err
    assert len(_log(folder)) == 9
    code, _, err = cli("run", "home_search", "--model", "oracle", "--limit", "4", "--epochs", "3",
                       "--out", str(folder))  # fmt: skip
    assert code == 0, err
    info = json.loads((folder / "run.json").read_text())
    assert info["selection"] == {"limit": 4, "epochs": 3}
    assert info["progress"] == {"done": 12, "planned": 12}
    code, out, _ = cli("report", str(folder))
    assert "12 of 12 sample x epochs done (100%)" in out
    _check_agreement(folder)
