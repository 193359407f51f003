"""``toolbench run TASK --model agent:COMMAND`` end to end: an agent script of ours replays the
gold calls through each sample's MCP server (the SDK's client) and scores 1.000; agents that
crash, hang or flood are one failed sample each while the run goes on; an interrupted run
resumes with each record written once; a task with no tools is refused."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from toolbench.core.task import Resources, load_prepared
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.registry import get_task

AGENTS = Path(__file__).parents[1] / "agents" / "agents_for_tests"
N = 4  # samples whose gold calls the agent can replay


@pytest.fixture(scope="module")
def gold_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[str]]]:
    """home_search's first samples' gold calls, as the replaying agent reads them."""
    task = get_task("home_search")
    with SandboxPool(workers=1) as sandbox:
        data = load_prepared(task, "v0", None, sandbox)
        samples = data.samples[:N]

        async def calls() -> dict[str, list[dict[str, Any]]]:
            found: dict[str, list[dict[str, Any]]] = {}
            for sample in samples:
                resources = Resources(data=data, sandbox=sandbox, prompter=None)  # type: ignore[arg-type]
                world = task.agent_world(data, sample, resources)
                try:
                    found[sample.id] = [
                        {"name": c.name, "arguments": dict(c.arguments)}
                        for c in await world.gold_calls()
                    ]
                finally:
                    await world.close()
            return found

        plan = asyncio.run(calls())
    path = tmp_path_factory.mktemp("gold") / "calls.json"
    path.write_text(json.dumps(plan))
    yield path, [s.id for s in samples]


def _agent(gold: Path, *special: str) -> str:
    return f"agent:{sys.executable} {AGENTS / 'replay.py'} {gold} {' '.join(special)}".strip()


@pytest.mark.slow  # each agent process imports the MCP SDK: seconds apiece
def test_an_agent_replaying_the_gold_calls_scores_full_marks(
    cli: Callable[..., CliResult], tmp_path: Path, gold_file: tuple[Path, list[str]]
) -> None:
    gold, _ = gold_file
    out = tmp_path / "run"
    code, stdout, stderr = cli(
        "run", "home_search", "--model", _agent(gold), "--limit", "3", "--out", str(out)
    )
    assert code == 0, stderr
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert info["metrics"]["home_search"]["success_rate"] == 1.0
    assert "1.000" in stdout
    for record in records:
        assert record["status"] == "scored" and record["success"] is True
        assert record["prediction"].endswith("done\n") and record["cached"] is False
        assert record["details"]["agent"]["exit_code"] == 0
        steps = [step for step in record["trace"] if step["step"] == "tool"]
        assert steps and steps[-1]["tool"] == "search" and not any(s["error"] for s in steps)
        assert record["details"]["agent"]["tool_calls"] == len(steps)


def test_crash_hang_and_flood_are_one_failed_sample_each(
    cli: Callable[..., CliResult], tmp_path: Path, gold_file: tuple[Path, list[str]]
) -> None:
    gold, ids = gold_file
    out = tmp_path / "run"
    special = (f"{ids[0]}=crash", f"{ids[1]}=sleep", f"{ids[2]}=flood", f"{ids[3]}=quiet")
    code, _, stderr = cli(
        "run", "home_search", "--model", _agent(gold, *special), "--limit", "4",
        "--agent-timeout", "2", "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    info, records = read_run(out)
    by_id = {r["id"]: r for r in records}
    assert len(records) == 4 and info["status"] == "complete"
    assert "exited with code 3: boom" in by_id[ids[0]]["message"]
    assert "ran past its 2 s limit" in by_id[ids[1]]["message"]
    assert "printed more than 1 MB" in by_id[ids[2]]["message"]
    for failed in ids[:3]:
        assert by_id[failed]["status"] == "model_error"
        assert by_id[failed]["details"]["agent"]["exit_code"] != 0
    # The run went on: the quiet agent ended well and its world was judged by the task (it
    # called nothing, which the task counts as its own failure, in the task's words).
    quiet = by_id[ids[3]]
    assert quiet["details"]["agent"]["exit_code"] == 0 and quiet["success"] is False
    assert quiet["prediction"] == "nothing to do\n"
    assert not any(words in quiet["message"] for words in ("exited", "limit", "printed"))


@pytest.mark.slow
def test_an_interrupted_agent_run_resumes_writing_each_record_once(
    cli: Callable[..., CliResult], tmp_path: Path, gold_file: tuple[Path, list[str]]
) -> None:
    gold, _ = gold_file
    out = tmp_path / "run"
    args = ["run", "home_search", "--model", _agent(gold), "--limit", "4",
            "--concurrency", "1", "--out", str(out)]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolbench.cli", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for_records(out / "samples.jsonl", 1)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    info, partial = read_run(out)
    assert info["status"] == "interrupted" and 1 <= len(partial) < 4
    code, _, stderr = cli(*args)
    assert code == 0, stderr
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert len({r["id"] for r in records}) == len(records) == 4
    assert info["metrics"]["home_search"]["success_rate"] == 1.0


def test_a_task_without_tools_is_refused_naming_it(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, _, stderr = cli(
        "run", "aware", "--model", f"agent:{sys.executable} x.py", "--out", str(tmp_path / "r")
    )
    assert code == 2
    assert "task aware cannot be solved by an agent" in stderr
    assert not (tmp_path / "r").exists()


def test_a_bad_agent_command_is_refused(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    code, _, stderr = cli(
        "run", "home_search", "--model", "agent:no-such-agent-xyz", "--out", str(tmp_path / "r")
    )
    assert code == 2 and "'no-such-agent-xyz' is not an executable program" in stderr


def _wait_for_records(path: Path, count: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().count("\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {count} records")
