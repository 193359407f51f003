"""The reference agent's loop against an in-process world served by our MCP server (the SDK's
in-process client), with scripted models that return tool calls: calls reach the world, replies
(errors marked) reach the model, the final text ends the loop, turns are bounded."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("mcp")

from mcp import Client

from toolbench.agents import reference
from toolbench.agents.mcp_server import mcp_server
from toolbench.agents.reference import (
    SYSTEM_PROMPT,
    AgentFailed,
    Brief,
    LoopSettings,
    McpTools,
    openai_tools,
    parse_arguments,
    parser,
    tool_loop,
)
from toolbench.core.agent import ToolCall, ToolReply, ToolSpec
from toolbench.errors import UserError
from toolbench.models.base import ModelOutputError
from toolbench.types import Generation, GenerationRequest, Outcome, Status

SCHEMA = {
    "type": "object",
    "properties": {"key": {"type": "string"}, "value": {"type": "integer"}},
    "required": ["key", "value"],
    "additionalProperties": False,
}


class CounterWorld:
    """A world of named counters: ``put`` sets one, ``get`` reads one."""

    def __init__(self) -> None:
        self.state: dict[str, int] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return [
            ToolSpec("put", "Set a counter.", SCHEMA),
            ToolSpec("get", "Read a counter.", {"type": "object", "properties": {}}),
        ]

    @property
    def request(self) -> str:
        return "set a to 1"

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        self.calls.append((name, dict(arguments)))
        if name == "put":
            if not isinstance(arguments.get("value"), int):
                return ToolReply("value must be an integer", is_error=True)
            self.state[str(arguments.get("key"))] = arguments["value"]
            return ToolReply("ok")
        if name == "get":
            return ToolReply(json.dumps(self.state))
        return ToolReply(f"no tool named {name}", is_error=True)

    async def outcome(self) -> Outcome:
        return Outcome(Status.SCORED, success=self.state == {"a": 1})

    def failed(self, message: str) -> Outcome:
        return Outcome(Status.MODEL_ERROR, message=message)

    async def translate(self, action: str) -> list[ToolCall]:
        return []

    async def gold_calls(self) -> list[ToolCall]:
        return [ToolCall("put", {"key": "a", "value": 1})]

    async def close(self) -> None:
        return None


def call(name: str, arguments: Any, ident: str = "") -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": text}}


class ScriptedModel:
    """Answers each turn with the next scripted generation; keeps every request it got."""

    name = "scripted"
    cacheable = False

    def __init__(self, turns: list[Generation]) -> None:
        self.turns = list(turns)
        self.requests: list[GenerationRequest] = []

    async def generate(self, request: GenerationRequest) -> Generation:
        self.requests.append(request)
        if not self.turns:
            return Generation(text="still going", tool_calls=[call("get", {})])
        return self.turns.pop(0)

    async def aclose(self) -> None:
        return None


async def run_loop(world: CounterWorld, model: ScriptedModel, max_turns: int = 20) -> str:
    async with Client(mcp_server(world, "counters")) as client:
        return await tool_loop(
            model, McpTools(client), world.request, LoopSettings(max_turns=max_turns)
        )


async def test_calls_reach_the_world_and_replies_reach_the_model() -> None:
    world = CounterWorld()
    model = ScriptedModel(
        [
            Generation(text="", tool_calls=[call("put", {"key": "a", "value": 1}, "c1")]),
            Generation(text="", tool_calls=[call("get", {})]),
            Generation(text="a is 1 now"),
        ]
    )
    final = await run_loop(world, model)
    assert final == "a is 1 now"
    assert world.calls == [("put", {"key": "a", "value": 1}), ("get", {})]
    assert (await world.outcome()).success
    first = model.requests[0]
    assert first.messages is not None and first.messages[0]["content"] == SYSTEM_PROMPT
    assert first.messages[1] == {"role": "user", "content": "set a to 1"}
    assert first.sample is None  # a real model is told nothing but the request and tools
    assert [t["function"]["name"] for t in first.tools or ()] == ["put", "get"]
    last = model.requests[-1].messages
    assert last is not None
    assert last[2]["tool_calls"][0]["id"] == "c1"
    assert last[3] == {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    # A call without an id gets one, and its reply answers that id.
    assert last[4]["tool_calls"][0]["id"] == "call_2_0"
    assert last[5]["tool_call_id"] == "call_2_0" and json.loads(last[5]["content"]) == {"a": 1}


async def test_errors_are_told_to_the_model_and_the_loop_goes_on() -> None:
    world = CounterWorld()
    model = ScriptedModel(
        [
            Generation(
                text="",
                tool_calls=[
                    call("put", {"key": "a", "value": "one"}),  # the world refuses it
                    call("put", "{not json"),  # never sent
                    call("put", "[1, 2]"),  # not an object: never sent
                    call("nope", {}),  # unknown tool: the world's words
                ],
            ),
            Generation(text="gave up"),
        ]
    )
    assert await run_loop(world, model) == "gave up"
    assert [name for name, _ in world.calls] == ["put", "nope"]
    messages = model.requests[-1].messages
    assert messages is not None
    replies = [m["content"] for m in messages if m["role"] == "tool"]
    assert replies[0] == "Error: value must be an integer"
    assert replies[1].startswith("Error: arguments are not valid JSON")
    assert replies[2] == "Error: arguments must be a JSON object"
    assert replies[3] == "Error: no tool named nope"
    assert not (await world.outcome()).success


async def test_turns_are_bounded() -> None:
    world = CounterWorld()
    model = ScriptedModel([])  # calls a tool forever
    assert await run_loop(world, model, max_turns=3) == "still going"
    assert len(model.requests) == 3 and len(world.calls) == 3


def test_openai_tools_shape() -> None:
    shaped = openai_tools([ToolSpec("put", "Set a counter.", SCHEMA)])
    assert shaped == (
        {
            "type": "function",
            "function": {"name": "put", "description": "Set a counter.", "parameters": SCHEMA},
        },
    )


@given(st.text(max_size=200))
def test_parse_arguments_never_raises(text: str) -> None:
    parsed = parse_arguments(text)
    assert isinstance(parsed, (dict, str))


@given(st.dictionaries(st.text(max_size=10), st.integers() | st.text(max_size=10), max_size=5))
def test_parse_arguments_reads_objects(value: dict[str, Any]) -> None:
    assert parse_arguments(json.dumps(value)) == value


def test_parse_arguments_deep_nesting_is_refused_not_raised() -> None:
    assert isinstance(parse_arguments("[" * 100_000), str)


def test_brief_from_environment() -> None:
    env = {
        "TOOLBENCH_MCP_URL": "http://127.0.0.1:1/mcp/x",
        "TOOLBENCH_REQUEST": "from env",
        "TOOLBENCH_TASK": "home_search",
        "TOOLBENCH_SAMPLE_ID": "7",
        "TOOLBENCH_EPOCH": "2",
        "TOOLBENCH_DATA_VERSION": "v0",
    }
    brief = Brief.from_environment(env, "from stdin")
    assert (brief.request, brief.task, brief.sample_id, brief.epoch) == (
        "from stdin",
        "home_search",
        "7",
        2,
    )
    assert Brief.from_environment(env, "").request == "from env"
    with pytest.raises(UserError, match="TOOLBENCH_MCP_URL"):
        Brief.from_environment({}, "x")


class FailingModel(ScriptedModel):
    async def generate(self, request: GenerationRequest) -> Generation:
        raise ModelOutputError("the model said nothing usable")


def args_for(model: str) -> argparse.Namespace:
    return parser().parse_args(["--model", model])


async def test_a_failing_model_is_an_agent_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reference, "make_model", lambda spec, options: FailingModel([]))
    world = CounterWorld()
    brief = Brief(request="set a to 1", mcp_url="unused")
    with pytest.raises(AgentFailed, match="ModelOutputError: the model said nothing usable"):
        await reference.run(brief, args_for("openai:x"), server=mcp_server(world, "c"))
    assert world.calls == []


async def test_the_loop_through_run_prints_nothing_and_returns_the_final_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    turns = [
        Generation(text="", tool_calls=[call("put", {"key": "a", "value": 1})]),
        Generation(text="done"),
    ]
    monkeypatch.setattr(reference, "make_model", lambda spec, options: ScriptedModel(turns))
    world = CounterWorld()
    brief = Brief(request="set a to 1", mcp_url="unused")
    assert await reference.run(brief, args_for("openai:x"), server=mcp_server(world, "c")) == "done"
    assert (await world.outcome()).success


@pytest.mark.slow
def test_an_unreachable_server_is_exit_1_with_one_line() -> None:
    env = {**os.environ, "TOOLBENCH_MCP_URL": "http://127.0.0.1:9/mcp/none"}
    done = subprocess.run(
        [sys.executable, "-m", "toolbench.agents.reference", "--script"],
        input='{"calls": [], "final": "x"}',
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "cannot reach the MCP server at http://127.0.0.1:9/mcp/none" in lines[0]
