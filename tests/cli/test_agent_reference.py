"""End to end through the CLI: the reference agent behind ``--model agent:`` reproduces the
oracle's full marks on every task that has an agent world, and a replay file's per-sample
successes, as the same predictions score under ``--model replay:FILE``."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.tasks.registry import all_tasks, get_task

pytest.importorskip("mcp")

AGENT = f"{shlex.quote(sys.executable)} -m toolbench.agents.reference"
FAST = ("--limit", "2", "--concurrency", "2", "--no-cache")


def agent_tasks() -> list[str]:
    return sorted(task.name for task in all_tasks() if task.has_agent_world)


def run(cli: Callable[..., CliResult], out: Path, task: str, model: str, *extra: str) -> list:
    code, stdout, stderr = cli("run", task, "--model", model, "--out", str(out), *extra)
    assert code == 0, stdout + stderr
    return read_run(out)[1]


@pytest.mark.slow
@pytest.mark.parametrize("task", agent_tasks())
def test_oracle_behind_the_agent_scores_full_marks(
    cli: Callable[..., CliResult], tmp_path: Path, task: str
) -> None:
    records = run(cli, tmp_path / "run", task, f"agent:{AGENT} --model oracle", *FAST)
    assert len(records) == 2
    for record in records:
        assert record["status"] == "scored", record.get("message")
        assert record["success"] is True, record.get("message")
        assert any(step.get("step") == "tool" for step in record.get("trace", [])), record
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["metrics"][task].get("success_rate", 1.0) == 1.0  # where the task has one


def test_home_search_is_among_the_agent_tasks() -> None:
    assert "home_search" in agent_tasks()


def _replay_lines(task: str) -> list[dict[str, str]]:
    """Right and wrong predictions that translate into calls: golds, a gold missing its first
    call, a gold missing its last call; and one that is no action at all."""
    samples = get_task(task).load("v0", None).samples[:5]
    gold = [s.labels[0].strip().splitlines() for s in samples]
    predictions = [
        "\n".join(gold[0]),
        "\n".join(gold[1][1:]),
        "\n".join(gold[2]),
        "\n".join(gold[3][:-1]),
        "this is not a program (",
    ]
    return [{"id": s.id, "prediction": p} for s, p in zip(samples, predictions, strict=True)]


@pytest.mark.slow
def test_replay_behind_the_agent_matches_the_replay_model(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    task = "home_search"
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(line) + "\n" for line in _replay_lines(task)))
    flags = ("--limit", "5", "--concurrency", "2", "--no-cache")
    direct = run(cli, tmp_path / "direct", task, f"replay:{replay}", *flags)
    agent = f"agent:{AGENT} --model {shlex.quote(f'replay:{replay}')}"
    behind = run(cli, tmp_path / "agent", task, agent, *flags)
    by_id = {r["id"]: r["success"] for r in direct}
    assert {r["id"]: r["success"] for r in behind} == by_id
    assert list(by_id.values()).count(True) == 2  # the two golds; every wrong one fails
