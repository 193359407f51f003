"""``--mode tools`` end to end through the CLI, against a loopback OpenAI-compatible server
that answers with tool calls: right, wrong, malformed, a tool that does not exist, a model
that never stops calling; plus the oracle, the cache and tasks without a tools mode."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.fakeserver import FakeOpenAIServer
from toolbench.kinds.tool_calling import ToolSet, gold_calls
from toolbench.tasks.booking.tools import TOOLSET as BOOKING
from toolbench.tasks.home_search.tools import TOOLSET as HOME
from toolbench.tasks.registry import get_task

LIMIT = "4"


def _gold_by_task(name: str, toolset: ToolSet) -> dict[str, list[dict[str, Any]]]:
    """'Task: <query>' -> the gold's calls in the fake server's reply shape."""
    samples = get_task(name).load("v0", None).samples
    return {
        f"Task: {s.query}": [
            {"name": tool, "arguments": args} for tool, args in gold_calls(toolset, s.labels[0])
        ]
        for s in samples
    }


GOLD = {**_gold_by_task("home_search", HOME), **_gold_by_task("booking", BOOKING)}


def _turn(body: dict[str, Any]) -> int:
    return 1 + sum(m["role"] == "assistant" for m in body["messages"])


def _query(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def right(body: dict[str, Any]) -> dict[str, Any]:
    """All the gold's calls at once, then a closing reply."""
    if _turn(body) == 1:
        return {"content": None, "tool_calls": GOLD[_query(body)]}
    return {"content": "Done.", "tool_calls": []}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=right) as srv:
        yield srv


def _run(
    cli: Callable[..., CliResult], out: Path, server: FakeOpenAIServer | None, *flags: str
) -> tuple[int, str]:
    model = ("--model", "oracle")
    if server is not None:
        model = ("--model", "openai:fake", "--base-url", server.base_url, "--max-retries", "0")
    code, _, err = cli(
        "run", "home_search,booking", "--mode", "tools", "--limit", LIMIT, "--out", str(out),
        *model, *flags,
    )  # fmt: skip
    return code, err


def test_the_oracle_scores_one_in_tools_mode(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    code, err = _run(cli, tmp_path / "run", None, "--limit", "25")
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    for task in ("home_search", "booking"):
        assert info["metrics"][task]["success_rate"] == 1.0
        assert info["metrics"][task]["crash_rate"] == 0.0
        assert info["counts"][task] == {"scored": 25, "model_error": 0, "infra_error": 0,
                                       "context_overflow": 0}  # fmt: skip
    record = records[0]
    assert [c["step"] for c in record["calls"]] == ["turn-1", "turn-2"]
    assert record["prediction"].endswith("API.search()")
    assert all(t["result"] == "ok" for t in record["trace"])


def test_right_calls_from_a_server_score_one_and_the_server_sees_tools_and_results(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, err = _run(cli, tmp_path / "run", server)
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert info["metrics"]["home_search"]["success_rate"] == 1.0
    assert info["metrics"]["booking"]["success_rate"] == 1.0
    first = server.requests[0]
    second = next(r for r in server.requests if _turn(r) == 2)
    names = {tool["function"]["name"] for tool in first["tools"]}
    assert {"set_location", "search"} <= names or {"select_booking_type", "search"} <= names
    assert first["tool_choice"] == "auto" and "stop" not in first
    # Turn 2 carries the assistant's calls and one tool message per call, matched by id.
    assistant = second["messages"][2]
    results = second["messages"][3:]
    assert [c["id"] for c in assistant["tool_calls"]] == [m["tool_call_id"] for m in results]
    assert all(m["role"] == "tool" and m["content"] == "ok" for m in results)
    assert all(r["details"]["finished"] for r in records)


def test_a_wrong_value_is_scored_by_the_state_it_leaves(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    def wrong(body: dict[str, Any]) -> dict[str, Any]:
        reply = right(body)
        calls = [
            {**call, "arguments": {"value": "Atlantis"}} if call["name"] == "set_location" else call
            for call in reply["tool_calls"]
        ]
        return {**reply, "tool_calls": calls}

    server.answer = wrong
    code, err = _run(cli, tmp_path / "run", server)
    assert code == 0, err
    info, _ = read_run(tmp_path / "run")
    home = info["metrics"]["home_search"]
    assert home["success_rate"] == 0.0 and 0.5 < home["f1"] < 1.0
    assert home["crash_rate"] == 0.0
    assert info["metrics"]["booking"]["success_rate"] == 1.0


def test_malformed_arguments_and_an_unknown_tool_get_errors_and_the_model_recovers(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    def clumsy(body: dict[str, Any]) -> dict[str, Any]:
        turn = _turn(body)
        if turn == 1:
            bad = [
                {"name": "book_it_all", "arguments": "{}"},
                {"name": "search", "arguments": '{"oops": '},
                {"name": GOLD[_query(body)][0]["name"], "arguments": '{"value": [1, 2]}'},
            ]
            return {"content": "Let me try.", "tool_calls": bad}
        if turn == 2:
            return {"content": None, "tool_calls": GOLD[_query(body)]}
        return {"content": "Done.", "tool_calls": []}

    server.answer = clumsy
    code, err = _run(cli, tmp_path / "run", server)
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert info["metrics"]["home_search"]["success_rate"] == 1.0
    assert info["metrics"]["booking"]["success_rate"] == 1.0
    record = records[0]
    results = [t["result"] for t in record["trace"] if t["step"] == "turn-1"]
    assert results[0].startswith("error: there is no tool named 'book_it_all'")
    assert results[1].startswith("error: the arguments are not valid JSON")
    assert results[2].startswith("error: ")
    assert record["details"]["tool_errors"] == 3
    assert [c["step"] for c in record["calls"]] == ["turn-1", "turn-2", "turn-3"]
    turn_two = next(r for r in server.requests if _turn(r) == 2)
    errors = [m["content"] for m in turn_two["messages"] if m["role"] == "tool"]
    assert len(errors) == 3 and all(e.startswith("error: ") for e in errors)


def test_a_refused_call_changes_nothing_and_its_error_reaches_the_model(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    def out_of_order(body: dict[str, Any]) -> dict[str, Any]:
        if _turn(body) == 1:
            gold = GOLD[_query(body)]
            return {"content": None, "tool_calls": [gold[1], *gold]}  # second call first
        return {"content": "Done.", "tool_calls": []}

    server.answer = out_of_order
    code, err = _run(cli, tmp_path / "run", server, "--limit", "2")
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert info["metrics"]["home_search"]["success_rate"] == 1.0
    home = next(r for r in records if r["task"] == "home_search")
    assert home["trace"][0]["line"] is None
    assert "call set_location before set_buy_or_rent" in home["trace"][0]["result"]


def test_too_many_turns_ends_the_sample_and_scores_the_state_reached(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    def endless(body: dict[str, Any]) -> dict[str, Any]:
        gold = GOLD[_query(body)]
        turn = _turn(body)
        return {"content": None, "tool_calls": [gold[min(turn, len(gold)) - 1]]}

    server.answer = endless
    code, err = _run(cli, tmp_path / "run", server, "--max-turns", "3")
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    for record in records:
        assert record["status"] == "scored" and record["success"] is False
        assert record["message"].startswith("turn limit")
        assert len(record["calls"]) == 3 and record["details"]["finished"] is False
        assert len(record["prediction"].splitlines()) == 3
    assert 0.0 < info["metrics"]["home_search"]["f1"] < 1.0


def test_a_model_that_never_calls_a_tool_wrote_an_empty_program(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    server.answer = "API.set_location('Boise')"  # code as text is not a tool call
    code, err = _run(cli, tmp_path / "run", server)
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert info["metrics"]["home_search"]["crash_rate"] == 1.0
    assert all(r["status"] == "model_error" and "empty program" in r["message"] for r in records)


def test_a_second_run_comes_from_the_cache_turn_by_turn(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, err = _run(cli, tmp_path / "one", server)
    assert code == 0, err
    asked = server.calls
    code, err = _run(cli, tmp_path / "two", server)
    assert code == 0, err
    assert server.calls == asked
    one, two = read_run(tmp_path / "one")[1], read_run(tmp_path / "two")[1]
    predictions = [{(r["task"], r["id"]): r["prediction"] for r in run} for run in (one, two)]
    assert predictions[0] == predictions[1]
    assert all(c["cached"] for r in two for c in r["calls"])


@pytest.mark.parametrize("task", ["open_weather", "the_cat_api", "google_sheets"])
def test_a_task_without_tools_mode_is_refused_with_one_line(
    task: str, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, _, err = cli("run", task, "--mode", "tools", "--model", "oracle", "--out", str(out))
    assert code == 2
    assert err.count("\n") == 1 and f"task {task} has no tools mode" in err
    assert not out.exists()


def test_prompt_shows_the_tools(cli: Callable[..., CliResult]) -> None:
    code, out, err = cli("prompt", "booking", "--sample", "0", "--mode", "tools")
    assert code == 0, err
    assert "calling the API through the tools" in out
    shown = out[: out.rindex(" generation ")].rstrip("─-")  # max_tokens and stops come last
    tools = json.loads(shown[shown.rindex("\n[\n") :])
    assert out.endswith("stop: none\n")  # tools mode sends no stop sequences
    assert tools[0]["function"]["name"] == "select_booking_type"
