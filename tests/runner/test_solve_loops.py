"""The engine under multi-turn episodes and nested model calls, end to end through the CLI.

Every call is recorded with its step; an interrupted or failed episode is re-run alone on
resume and its earlier turns come from the cache; a second run is served entirely from the
cache; a replay file keyed by step reproduces the run; totals count every session.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.fakeserver import FakeOpenAIServer
from tests.runner.scripted_tasks import COUNTER_TARGETS, CounterTask, PlanTask, counter_reply
from toolbench.tasks import registry

COMPARED = ("task", "id", "epoch", "status", "success", "metrics", "message", "prediction")


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[CounterTask]:
    counter = CounterTask()
    monkeypatch.setitem(registry.REGISTERED, "counter", counter)
    monkeypatch.setitem(registry.REGISTERED, "plan", PlanTask())
    yield counter


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=counter_reply) as srv:
        yield srv


def _run(cli: Callable[..., CliResult], out: Path, *flags: str) -> tuple[int, str]:
    code, _, err = cli("run", "counter,plan", "--out", str(out), *flags)
    return code, err


def _fake(server: FakeOpenAIServer) -> tuple[str, ...]:
    return ("--model", "openai:fake", "--base-url", server.base_url, "--max-retries", "0")


def _scores(records: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[Any, ...]]:
    return {(r["task"], r["id"]): tuple(r[f] for f in COMPARED) for r in records}


def test_the_oracle_answers_every_step_and_each_call_is_recorded(
    scripted: CounterTask, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, err = _run(cli, tmp_path / "run", "--model", "oracle")
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert info["metrics"]["counter"]["success_rate"] == 1.0
    assert info["metrics"]["plan"]["success_rate"] == 1.0
    by_key = {(r["task"], r["id"]): r for r in records}
    seven = by_key[("counter", str(COUNTER_TARGETS.index(7)))]
    assert [c["step"] for c in seven["calls"]] == ["turn-1", "turn-2", "turn-3"]
    assert [c["text"] for c in seven["calls"]] == ["3", "3", "1"]
    assert [t["total"] for t in seven["trace"]] == [3, 6, 7]
    three = by_key[("plan", "2")]
    steps = [c["step"] for c in three["calls"]]
    assert steps == ["plan", "parse_obj_name", "parse_obj_name#2", "parse_obj_name#3"]
    assert three["details"]["picked"] == ["blue", "yellow_bowl", "red_block"]
    assert info["metric_names"]["counter"] == ["success_rate", "crash_rate", "turns"]


def test_turn_limit_ends_an_episode(
    scripted: CounterTask, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, err = _run(cli, tmp_path / "run", "--model", "oracle", "--max-turns", "2")
    assert code == 0, err
    _, records = read_run(tmp_path / "run")
    nine = next(r for r in records if r["task"] == "counter" and r["id"] == "4")
    assert nine["success"] is False and nine["message"] == "turn limit"
    assert len(nine["calls"]) == 2


def test_a_failed_episode_alone_is_rerun_and_its_earlier_turns_come_from_the_cache(
    scripted: CounterTask,
    server: FakeOpenAIServer,
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    def broken_at_nine_after_six(body: dict[str, Any]) -> str:
        content = body["messages"][-1]["content"]
        if content.startswith("target 9; total 6"):
            raise RuntimeError("server fell over")  # a 500: an infra error after retries
        return counter_reply(body)

    server.answer = broken_at_nine_after_six
    out = tmp_path / "run"
    code, _ = _run(cli, out, *_fake(server))
    assert code == 3  # finished, with an infra error left to retry
    info, records = read_run(out)
    assert info["counts"]["counter"]["infra_error"] == 1
    first_calls = server.calls
    server.answer = counter_reply
    code, err = _run(cli, out, *_fake(server))
    assert code == 0, err
    info, records = read_run(out)
    assert info["metrics"]["counter"]["success_rate"] == 1.0
    # Only the nine-episode ran again: its turns 1-2 from the cache, turn 3 from the server.
    asked = [r["messages"][-1]["content"] for r in server.requests[first_calls:]]
    assert asked == ["target 9; total 6; how much to add?"]
    nine = next(r for r in records if r["task"] == "counter" and r["id"] == "4")
    assert [c["cached"] for c in nine["calls"]] == [True, True, False]
    assert info["timing"]["sessions"] == 2


def test_a_second_run_is_served_from_the_cache_and_replay_by_step_reproduces_it(
    scripted: CounterTask,
    server: FakeOpenAIServer,
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    assert _run(cli, tmp_path / "first", *_fake(server))[0] == 0
    calls = server.calls
    assert _run(cli, tmp_path / "second", *_fake(server))[0] == 0
    assert server.calls == calls
    first_info, first = read_run(tmp_path / "first")
    second_info, second = read_run(tmp_path / "second")
    assert _scores(first) == _scores(second)
    assert all(c["cached"] for r in second for c in r["calls"])
    first_total = first_info["model_calls"]["live"] + first_info["model_calls"]["cached"]
    assert second_info["model_calls"] == {"live": 0, "cached": first_total}

    replay = tmp_path / "steps.jsonl"
    lines = [
        {"task": r["task"], "id": r["id"], "step": c["step"], "prediction": c["text"]}
        for r in first
        for c in r["calls"]
    ]
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, err = _run(cli, tmp_path / "replayed", "--model", f"replay:{replay}")
    assert code == 0, err
    _, replayed = read_run(tmp_path / "replayed")
    assert _scores(replayed) == _scores(first)


def test_totals_count_every_session_after_an_interruption(
    scripted: CounterTask,
    server: FakeOpenAIServer,
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    scripted.interrupt_at = 9
    out = tmp_path / "run"
    code, _ = _run(cli, out, *_fake(server), "--concurrency", "1")
    assert code == 130
    partial_info, partial = read_run(out)
    assert partial_info["status"] == "interrupted"
    assert partial_info["model_calls"]["live"] == sum(len(r["calls"]) for r in partial) > 0
    assert _run(cli, out, *_fake(server))[0] == 0
    info, records = read_run(out)
    assert info["timing"]["sessions"] == 2
    recorded = sum(len(r["calls"]) for r in records)
    assert info["model_calls"]["live"] + info["model_calls"]["cached"] == recorded
    # Generated and cached tokens apart; together, every recorded call's.
    tokens = info["tokens"]
    assert tokens["prompt"] + tokens["cached"]["prompt"] == sum(r["prompt_tokens"] for r in records)
    calls = [c for r in records for c in r["calls"]]
    assert tokens["prompt"] == sum(c["prompt_tokens"] for c in calls if not c["cached"])
    assert tokens["cached"]["prompt"] == sum(c["prompt_tokens"] for c in calls if c["cached"]) > 0
