"""Runs you can trust: kill -9 and resume, flaky servers, dead servers, warm caches.

The model is a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/fakeserver.py) that
answers with the gold program for most queries and a deliberately incomplete one for others,
so the expected metrics are known and non-trivial.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.fakeserver import FakeOpenAIServer
from toolbench.data.layout import read_test_jsonl
from toolbench.tasks.registry import get_task

TASK = get_task("home_search")
GOLD = {
    s.query: s.labels[0]
    for s in read_test_jsonl(TASK.package_dir / "data" / "v0" / "test.jsonl", "home_search")  # type: ignore[attr-defined]
}


def scripted_answer(body: dict[str, Any]) -> str:
    """Gold for two queries in three; the gold minus its last call (search()) otherwise."""
    prompt = body.get("prompt") or body["messages"][-1]["content"]
    query = prompt.rsplit("Task: ", 1)[1].split("\nAction:")[0].strip()
    program = GOLD[query]
    if int(hashlib.sha256(query.encode()).hexdigest(), 16) % 3 == 0:
        return program.rsplit("\n", 1)[0]
    return program


def wait_for_records(path: Path, count: int, timeout_s: float = 60) -> None:
    """Wait until a run log holds ``count`` records (the moment to interrupt a run midway)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().count("\n") >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {count} records")


def _args(server: FakeOpenAIServer, out: Path, *extra: str) -> list[str]:
    return [
        "run", "home_search", "--model", "openai:fake", "--base-url", server.base_url,
        "--out", str(out), "--limit", "40", "--concurrency", "4", *extra,
    ]  # fmt: skip


def test_kill_9_midway_then_resume_equals_uninterrupted(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    with FakeOpenAIServer(delay_s=0.03, answer=scripted_answer) as server:
        reference = tmp_path / "reference"
        assert cli(*_args(server, reference, "--no-cache", "--epochs", "2"))[0] == 0
        expected, _ = read_run(reference)

        resumed = tmp_path / "resumed"
        command = [
            sys.executable,
            "-m",
            "toolbench.cli",
            *_args(server, resumed, "--no-cache", "--epochs", "2"),
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
        )
        samples = resumed / "samples.jsonl"
        wait_for_records(samples, 25)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        partial = samples.read_text().count("\n")
        assert 25 <= partial < 80, "the run must be killed midway"

        code, _, _ = cli(*_args(server, resumed, "--no-cache", "--epochs", "2"))
        assert code == 0
    info, records = read_run(resumed)
    keys = [(r["id"], r["epoch"]) for r in records]
    assert len(keys) == len(set(keys)) == 80
    assert info["status"] == "complete"
    assert info["metrics"] == expected["metrics"]
    assert info["counts"] == expected["counts"]
    assert 0.3 < info["metrics"]["home_search"]["success_rate"] < 0.95


def test_flaky_server_gives_a_complete_correct_run(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    with FakeOpenAIServer(answer=scripted_answer) as clean:
        assert cli(*_args(clean, tmp_path / "clean", "--no-cache"))[0] == 0
    expected, _ = read_run(tmp_path / "clean")
    with FakeOpenAIServer(
        answer=scripted_answer, fail_every=3, fail_status=429, retry_after="0"
    ) as flaky:
        code, stdout, stderr = cli(*_args(flaky, tmp_path / "flaky", "--no-cache"))
        assert flaky.failures >= 10
    info, records = read_run(tmp_path / "flaky")
    unscored = [(r["id"], r.get("message")) for r in records if r["status"] != "scored"]
    assert code == 0, (stdout[-500:], stderr[-1000:], unscored)
    assert info["status"] == "complete"
    assert info["counts"]["home_search"]["infra_error"] == 0
    assert info["metrics"] == expected["metrics"]
    assert len(records) == 40


def test_dead_server_gives_infra_errors_retried_on_resume(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(
        answer=scripted_answer, fail_always=True, fail_status=503, retry_after="0"
    ) as server:
        code, stdout, _ = cli(*_args(server, out, "--max-retries", "1", "--limit", "10"))
        assert code == 3
        assert "infra errors remain" in stdout
        info, records = read_run(out)
        assert info["status"] == "incomplete"
        assert info["counts"]["home_search"] == {"scored": 0, "model_error": 0, "infra_error": 10,
                                                 "context_overflow": 0}  # fmt: skip
        assert info["metrics"]["home_search"] == {}  # excluded from the score, not scored as 0
        assert all(r["status"] == "infra_error" and "503" in r["message"] for r in records)

        server.fail_always = False
        code, _, _ = cli(*_args(server, out, "--max-retries", "1", "--limit", "10"))
    assert code == 0
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert info["counts"]["home_search"]["scored"] == 10
    assert len(records) == 10 and all(r["status"] == "scored" for r in records)
    assert (out / "attempts.jsonl").read_text().count("\n") == 10


def test_second_identical_run_makes_zero_model_calls(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    with FakeOpenAIServer(answer=scripted_answer) as server:
        assert cli(*_args(server, tmp_path / "cold"))[0] == 0
        calls = server.calls
        assert calls == 40
        assert cli(*_args(server, tmp_path / "warm"))[0] == 0
        assert server.calls == calls
    cold, _ = read_run(tmp_path / "cold")
    warm, records = read_run(tmp_path / "warm")
    assert warm["model_calls"] == {"live": 0, "cached": 40}
    assert all(r["cached"] for r in records)
    assert warm["metrics"] == cold["metrics"]


@pytest.mark.parametrize("mode", ["completion", "chat"])
def test_modes_reach_the_server_with_the_right_endpoint(
    cli: Callable[..., CliResult], tmp_path: Path, mode: str
) -> None:
    with FakeOpenAIServer(
        answer=lambda body: "```python\n" + scripted_answer(body) + "\n```"
    ) as server:
        code, _, _ = cli(*_args(server, tmp_path / mode, "--mode", mode, "--limit", "6"))
        assert code == 0
        request = server.requests[0]
    assert ("messages" in request) == (mode == "chat")
    assert request["temperature"] == 0.0 and request["seed"] == 0
    # Chat mode sends no stops: the template's end of turn ends a reply (prompts.builder).
    assert request.get("stop") == (["------", "Task:"] if mode == "completion" else None)
    info, _ = read_run(tmp_path / mode)
    assert info["counts"]["home_search"]["scored"] == 6


def test_ctrl_c_leaves_a_resumable_run(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(delay_s=0.05, answer=scripted_answer) as server:
        command = [sys.executable, "-m", "toolbench.cli", *_args(server, out, "--no-cache")]
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for_records(out / "samples.jsonl", 10)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert b"run the same command again to resume" in err
        info, partial = read_run(out)
        assert info["status"] == "interrupted"
        assert 10 <= len(partial) < 40
        assert cli(*_args(server, out, "--no-cache"))[0] == 0
    info, records = read_run(out)
    assert info["status"] == "complete" and info["timing"]["sessions"] == 2
    assert len({r["id"] for r in records}) == len(records) == 40
