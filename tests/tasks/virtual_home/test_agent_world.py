"""virtual_home as tools: gold calls score full marks, refused calls change nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tasks.virtual_home.test_task import ORIGINAL_RECORDS, _original_folder
from toolbench.core.agent import ToolCall, Untranslatable
from toolbench.core.task import Resources, TaskData, load_prepared
from toolbench.tasks.virtual_home import TASK
from toolbench.tasks.virtual_home.agent_world import VirtualHomeWorld
from toolbench.types import Status

ALL_METRICS = (
    "executability_rate",
    "lcs_score",
    "lcs_score_if_executable",
    "executable_in_world",
    "goal_success",
)


@pytest.fixture(scope="module")
def data() -> TaskData:
    return load_prepared(TASK, "v0", None, sandbox=None)  # type: ignore[arg-type]


def _world(data: TaskData, index: int = 0) -> VirtualHomeWorld:
    resources = Resources(data=data, sandbox=None, prompter=None)  # type: ignore[arg-type]
    world = TASK.agent_world(data, data.samples[index], resources)
    assert isinstance(world, VirtualHomeWorld)
    return world


async def _run(world: VirtualHomeWorld, calls: list[ToolCall]) -> None:
    for call in calls:
        reply = await world.call(call.name, call.arguments)
        assert not reply.is_error, (call, reply.text)


def test_gold_calls_score_full_marks_on_every_sample(data: TaskData) -> None:
    async def check(index: int) -> None:
        world = _world(data, index)
        await _run(world, await world.gold_calls())
        outcome = await world.outcome()
        assert outcome.success is True, (data.samples[index].id, outcome.message)
        assert all(outcome.metrics[m] == 1.0 for m in ALL_METRICS), outcome.metrics
        await world.close()
        await world.close()

    async def every() -> None:
        for index in range(len(data.samples)):
            await check(index)

    assert len(data.samples) >= 150
    asyncio.run(every())


def test_one_wrong_argument_fails(data: TaskData) -> None:
    async def go() -> None:
        world = _world(data)
        calls = await world.gold_calls()
        last = calls[-1]  # Agent.Put(toothbrush, bathroom_sink) in sample 1
        assert last.name == "put"
        await _run(world, calls[:-1])
        wrong = ToolCall("put", {**last.arguments, "object2": "bathtub"})
        assert (await world.call(wrong.name, wrong.arguments)).is_error  # not within reach
        outcome = await world.outcome()
        assert outcome.status is Status.SCORED and outcome.success is False
        assert outcome.metrics["goal_success"] == 0.0 and outcome.metrics["lcs_score"] < 1

    asyncio.run(go())


@pytest.mark.parametrize(
    ("name", "arguments", "words"),
    [
        ("fly", {"object": "milk"}, "unknown tool"),
        ("grab", {}, "missing argument"),
        ("grab", {"object": 3}, "must be a string"),
        ("grab", {"object": "milk", "extra": 1}, "unexpected argument"),
        ("grab", {"object": "dragon"}, "valid_object_lists.json"),
        ("grab", {"object": "milk) ; Agent.Grab(x"}, "valid_object_lists.json"),
        ("grab", ["milk"], "must be an object"),
        ("grab", {"object": "toothbrush"}, "not within reach"),  # the agent is elsewhere
        ("stand_up", {}, "not sitting"),
    ],
)
def test_bad_calls_are_error_replies_and_change_nothing(
    data: TaskData, name: str, arguments: Any, words: str
) -> None:
    async def go() -> None:
        world = _world(data)
        assert not (await world.call("walk_to", {"object": "bathroom"})).is_error
        before = world.plan
        reply = await world.call(name, arguments)
        assert reply.is_error and words in reply.text, reply.text
        assert world.plan == before
        calls = await world.gold_calls()
        await _run(world, calls[1:])  # the state was not changed by the refused call
        assert (await world.outcome()).success is True

    asyncio.run(go())


def test_refused_step_then_a_fix(data: TaskData) -> None:
    async def go() -> None:
        world = _world(data)
        await _run(world, [ToolCall("walk_to", {"object": "toothbrush"})])
        assert (await world.call("wash", {"object": "toothbrush"})).is_error  # no water here
        reply = await world.call("grab", {"object": "toothbrush"})
        assert "holding toothbrush" in reply.text

    asyncio.run(go())


def test_failed_is_a_model_error_with_zeros(data: TaskData) -> None:
    outcome = _world(data).failed("x")
    assert outcome.status is Status.MODEL_ERROR and outcome.message == "x"
    assert outcome.metrics and set(outcome.metrics.values()) == {0.0}
    assert "goal_success" in outcome.metrics


def test_tools_are_valid_and_from_the_docs(data: TaskData) -> None:
    world = _world(data)
    names = [tool.name for tool in world.tools]
    assert len(names) == len(set(names)) == len(data.context.functions) == 23
    assert {"walk_to", "grab", "put", "put_on", "stand_up", "switch_on"} <= set(names)
    for tool in world.tools:
        jsonschema.Draft202012Validator.check_schema(dict(tool.input_schema))
        assert tool.description and "plan line: Agent." in tool.description
    put = next(tool for tool in world.tools if tool.name == "put")
    assert put.input_schema["required"] == ["object1", "object2"]
    assert "fridge" in put.input_schema["properties"]["object2"]["enum"]
    assert world.tools == _world(data, 3).tools
    assert world.request == data.samples[0].query


def test_translate(data: TaskData) -> None:
    world = _world(data)
    plan = "1. Agent.WalkTo(kitchen)\nAgent.Put(milk, fridge)\nAgent.StandUp()\nTask: more"
    calls = asyncio.run(world.translate(plan))
    assert calls == [
        ToolCall("walk_to", {"object": "kitchen"}),
        ToolCall("put", {"object1": "milk", "object2": "fridge"}),
        ToolCall("stand_up", {}),
    ]
    for bad in ("Agent.WalkTo (kitchen)", "Agent.Fly(kitchen)", "Agent.Put(milk)", "go home"):
        with pytest.raises(Untranslatable):
            asyncio.run(world.translate(bad))


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=300))
def test_translate_and_calls_never_raise_on_garbage(data: TaskData, text: str) -> None:
    world = _world(data)
    try:
        calls = asyncio.run(world.translate(text))
    except Untranslatable:
        calls = []
    for call in calls:
        asyncio.run(world.call(call.name, call.arguments))
    asyncio.run(world.call(text[:20], {"object": text}))


def test_an_original_layout_folder_derives_its_household(tmp_path: Path) -> None:
    root = _original_folder(tmp_path / "data", ORIGINAL_RECORDS)
    data = load_prepared(TASK, "v0", root, sandbox=None)  # type: ignore[arg-type]

    async def go() -> None:
        for index in range(len(data.samples)):
            world = _world(data, index)
            assert [t.name for t in world.tools][:2] == ["walk_to", "find"]
            await _run(world, await world.gold_calls())
            outcome = await world.outcome()
            assert outcome.success is True and outcome.metrics["lcs_score"] == 1.0
            # the first record's gold cannot run in its derived household: grounding only
            assert ("goal_success" in outcome.metrics) is (index == 1)
        assert (await _world(data, 0).call("grab", {"object": "cereal"})).text.startswith("done")
        reply = await _world(data, 1).call("grab", {"object": "jumper"})
        assert reply.is_error and "not within reach" in reply.text

    asyncio.run(go())
