"""End to end through the CLI: the harness's scripted agents (``--model agent:oracle``,
``agent:replay:FILE``: the reference agent's player, contained like any agent, making calls
the harness translated) reproduce the oracle's full marks on every task that has an agent
world, and a replay file's per-sample successes, as the same predictions score under
``--model replay:FILE``."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.core.agent import HasAgentWorld
from toolbench.tasks.registry import all_tasks, get_task

pytest.importorskip("mcp")

AGENT = f"{shlex.quote(sys.executable)} -m toolbench.agents.reference"
FAST = ("--limit", "2", "--concurrency", "2", "--no-cache")


def agent_tasks() -> list[str]:
    return sorted(task.name for task in all_tasks() if isinstance(task, HasAgentWorld))


def run(cli: Callable[..., CliResult], out: Path, task: str, model: str, *extra: str) -> list:
    code, stdout, stderr = cli("run", task, "--model", model, "--out", str(out), *extra)
    assert code == 0, stdout + stderr
    return read_run(out)[1]


@pytest.mark.slow
@pytest.mark.parametrize("task", agent_tasks())
def test_oracle_behind_the_agent_scores_full_marks(
    cli: Callable[..., CliResult], tmp_path: Path, task: str
) -> None:
    records = run(cli, tmp_path / "run", task, "agent:oracle", *FAST)
    assert len(records) == 2
    for record in records:
        assert record["status"] == "scored", record.get("message")
        assert record["success"] is True, record.get("message")
        assert any(step.get("step") == "tool" for step in record.get("trace", [])), record
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["metrics"][task].get("success_rate", 1.0) == 1.0  # where the task has one
    assert info["agent_isolation"]["level"] in ("full", "none")


def test_the_oracle_cannot_run_behind_a_users_agent_command(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """The reference agent refuses the scripted models: it sees neither data nor gold, so
    only the harness can play them (the sample's record says how to)."""
    records = run(cli, tmp_path / "run", "home_search", f"agent:{AGENT} --model oracle",
                  "--limit", "1", "--no-cache")  # fmt: skip
    assert records[0]["status"] == "model_error"
    assert "--model agent:oracle instead" in records[0]["message"]


def test_home_search_is_among_the_agent_tasks() -> None:
    assert "home_search" in agent_tasks()


#: Tasks whose gold labels are action texts a replay file can hold (tabletop's golds come from
#: the expert and web_shop's from the episode, so neither has one to replay).
REPLAYABLE = ("home_search", "booking", "open_weather", "the_cat_api", "google_sheets",
              "virtual_home")  # fmt: skip


#: Tasks whose agent worlds leave a refused step out of the plan they judge (the agent reads
#: why and may try again; docs/agents.md), where the replayed plan fails at that step.
DROPS_REFUSED_STEPS = {"virtual_home"}


def _replay_lines(task: str) -> list[dict[str, str]]:
    """Predictions that are right, wrong and broken: a gold; another sample's gold; a gold
    without its last line (for a one-line action: nothing); and no action at all."""
    samples = get_task(task).load("v0", None).samples[:4]
    gold = [s.labels[0].strip().splitlines() for s in samples]
    predictions = [
        "\n".join(gold[0]),
        "\n".join(gold[2]),
        "\n".join(gold[2][:-1]),
        "this is not an action (",
    ]
    return [{"id": s.id, "prediction": p} for s, p in zip(samples, predictions, strict=True)]


def model_empty_plan(task: str) -> dict[str, float]:
    """The metrics the task gives a model's empty reply (scored directly, no run)."""
    import asyncio

    from toolbench.core.task import load_prepared
    from toolbench.sandbox.pool import SandboxPool

    chosen = get_task(task)
    with SandboxPool(workers=1) as pool:
        data = load_prepared(chosen, "v0", None, pool)
        sample = data.samples[3]
        outcome = asyncio.run(chosen.score(data, sample, "", pool))  # type: ignore[attr-defined]
    return outcome.metrics


def _scores(records: list[dict]) -> dict[str, tuple]:
    return {r["id"]: (r["status"], r["success"], r["metrics"]) for r in records}


@pytest.mark.slow
@pytest.mark.parametrize("task", REPLAYABLE)
def test_replay_behind_the_agent_matches_the_replay_model(
    cli: Callable[..., CliResult], tmp_path: Path, task: str
) -> None:
    """Per sample the same status, success and metrics as the replay model's own run: the
    agent's calls are the replayed action, judged by the same scorer; a prediction that is no
    action is a model_error both ways."""
    lines = _replay_lines(task)
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    flags = ("--limit", "4", "--concurrency", "2", "--no-cache")
    direct = run(cli, tmp_path / "direct", task, f"replay:{replay}", *flags)
    agent = f"agent:replay:{replay}"
    behind = run(cli, tmp_path / "agent", task, agent, *flags)
    scores, agent_scores = _scores(direct), _scores(behind)
    if task in DROPS_REFUSED_STEPS:
        # Another sample's gold: this household refuses some of its steps.
        refused = lines[1]["id"]
        assert scores.pop(refused)[2]["executable_in_world"] == 0.0
        assert agent_scores.pop(refused)[2]["executable_in_world"] == 1.0
        # No action: the replay's text is graded as an unparseable plan, the agent (no calls)
        # left an empty plan, which the task grades as executable (as a model's empty reply).
        nothing = lines[-1]["id"]
        assert scores.pop(nothing)[2]["executability_rate"] == 0.0
        assert agent_scores.pop(nothing)[1:] == (False, model_empty_plan(task))
    assert agent_scores == scores
    assert scores[lines[0]["id"]][1] is True  # the gold
