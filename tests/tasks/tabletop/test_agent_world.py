"""tabletop as tools: the expert's program, recorded as API calls, passes every check."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import jsonschema
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core.agent import ToolCall, Untranslatable
from toolbench.core.task import Resources, TaskData, load_prepared
from toolbench.sandbox import Limits, SandboxPool
from toolbench.tasks.tabletop import TASK
from toolbench.tasks.tabletop.agent_world import TabletopWorld, api_tools
from toolbench.tasks.tabletop.world import Table
from toolbench.types import Status

LIMITS = Limits(wall_s=10.0, cpu_s=10.0, memory_mb=512, max_host_calls=64, max_host_depth=8)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2, limits=LIMITS) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def data(pool: SandboxPool) -> TaskData:
    return load_prepared(TASK, "v0", None, pool)


def _world(data: TaskData, pool: SandboxPool, index: int = 0) -> TabletopWorld:
    resources = Resources(data=data, sandbox=pool, prompter=None)  # type: ignore[arg-type]
    world = TASK.agent_world(data, data.samples[index], resources)
    assert isinstance(world, TabletopWorld)
    return world


async def _run(world: TabletopWorld, calls: list[ToolCall]) -> None:
    for call in calls:
        reply = await world.call(call.name, call.arguments)
        assert not reply.is_error, (call, reply.text)


def _one_per_template(data: TaskData) -> list[int]:
    seen: dict[str, list[int]] = {}
    for index, sample in enumerate(data.samples):
        seen.setdefault(sample.fields["tester_id"], []).append(index)
    return [i for indices in seen.values() for i in indices[:4]]


def test_gold_calls_pass_the_checks(data: TaskData, pool: SandboxPool) -> None:
    chosen = _one_per_template(data)
    assert len(chosen) == 60  # 4 samples of each of the 15 templates

    async def check(index: int) -> None:
        world = _world(data, pool, index)
        calls = await world.gold_calls()
        assert any(c.name == "put_first_on_second" for c in calls) or not calls
        await _run(world, calls)
        outcome = await world.outcome()
        sample = data.samples[index]
        assert outcome.status is Status.SCORED, outcome.message
        assert outcome.success is True, (sample.id, outcome.details)
        assert outcome.metrics["success_rate_strict"] == 1.0, (sample.id, outcome.details)
        await world.close()

    async def every() -> None:
        await asyncio.gather(*(check(i) for i in chosen))

    asyncio.run(every())


def test_one_wrong_argument_fails(data: TaskData, pool: SandboxPool) -> None:
    async def go() -> None:
        world = _world(data, pool)
        calls = await world.gold_calls()
        moves = [i for i, c in enumerate(calls) if c.name == "put_first_on_second"]
        wrong = calls[moves[-1]]
        calls[moves[-1]] = ToolCall(wrong.name, {**wrong.arguments, "arg2": "top left corner"})
        await _run(world, calls)
        outcome = await world.outcome()
        assert outcome.status is Status.SCORED and outcome.success is False
        assert outcome.metrics["success_rate_strict"] == 0.0

    asyncio.run(go())


def test_float32_positions_go_back_exactly(data: TaskData, pool: SandboxPool) -> None:
    async def go() -> None:
        world = _world(data, pool)
        block = data.samples[0].fields["configs"]["block_list"][0]
        reply = await world.call("get_obj_pos", {"obj_name": block})
        assert not reply.is_error
        import json

        xy = json.loads(reply.text)
        before = world.table.snapshot()
        await _run(world, [ToolCall("put_first_on_second", {"arg1": xy, "arg2": "middle"})])
        assert world.table.snapshot()["objects"] != before["objects"]  # the block was picked
        assert (await world.call("get_obj_pos", {"obj_name": block})).text == "[0.0, -0.5]"

    asyncio.run(go())


@pytest.mark.parametrize(
    ("name", "arguments", "words"),
    [
        ("fly", {}, "unknown tool"),
        ("get_obj_pos", {}, "missing argument"),
        ("get_obj_pos", {"obj_name": 3}, "must be a string"),
        ("get_obj_pos", {"obj_name": "red block", "x": 1}, "unexpected argument"),
        ("get_obj_pos", {"obj_name": "dragon"}, "unknown object"),
        ("get_obj_pos", ["red block"], "must be an object"),
        ("put_first_on_second", {"arg1": "middle", "arg2": [5.0, 5.0]}, "cannot reach"),
        ("put_first_on_second", {"arg1": [0, "x"], "arg2": "middle"}, "position"),
        ("put_first_on_second", {"arg1": [0, True], "arg2": "middle"}, "position"),
        ("put_first_on_second", {"arg1": [1, 2, 3, 4], "arg2": "middle"}, "position"),
        ("denormalize_xy", {"pos_normalized": [[0, 1], [2]]}, "point"),
        ("get_corner_name", {"pos": "middle"}, "position"),
    ],
)
def test_bad_calls_are_error_replies_and_change_nothing(
    data: TaskData, pool: SandboxPool, name: str, arguments: Any, words: str
) -> None:
    async def go() -> None:
        world = _world(data, pool)
        before = world.table.snapshot()
        reply = await world.call(name, arguments)
        assert reply.is_error and words in reply.text, reply.text
        assert world.table.snapshot() == before
        await _run(world, await world.gold_calls())
        assert (await world.outcome()).success is True

    asyncio.run(go())


def test_replies_are_json(data: TaskData, pool: SandboxPool) -> None:
    async def go() -> None:
        world = _world(data, pool)
        names = await world.call("get_obj_names", {})
        assert names.text.startswith('["')
        bbox = await world.call("get_bbox", {"obj_name": "middle"})
        assert bbox.is_error
        corner = await world.call("get_corner_name", {"pos": [0.3, -0.8]})
        assert corner.text == '"botom right corner"'
        points = await world.call("denormalize_xy", {"pos_normalized": [[0, 0], [1, 1]]})
        assert points.text == "[[-0.25, -0.75], [0.25, -0.25]]"
        assert (await world.call("say", {"msg": "hi"})).text == "null"
        assert world.table.said == ["hi"]

    asyncio.run(go())


def test_translate_records_the_calls_a_program_makes(data: TaskData, pool: SandboxPool) -> None:
    world = _world(data, pool)
    blocks = data.samples[0].fields["configs"]["block_list"]
    program = (
        f"p = get_obj_pos({blocks[0]!r}) + np.array([0.01, 0.0], dtype=np.float32)\n"
        "for i in range(2):\n    say('step %d' % i)\n"
        f"put_first_on_second({blocks[0]!r}, p)\nis_obj_visible(5)"
    )
    calls = asyncio.run(world.translate(program))
    assert [c.name for c in calls] == ["get_obj_pos", "say", "say", "put_first_on_second"]
    moved = calls[-1].arguments["arg2"]
    assert isinstance(moved, list) and len(moved) == 2
    asyncio.run(_run(world, calls))  # the same table as the program's, to the last bit
    table = Table(data.samples[0].fields["configs"])
    offset = np.array([0.01, 0.0], dtype=np.float32)
    table.put_first_on_second(blocks[0], table.get_obj_pos(blocks[0]) + offset)
    assert world.table.pos[blocks[0]].tolist() == table.pos[blocks[0]].tolist()
    assert world.table.said == ["step 0", "step 1"]
    for bad in ("1/0", "put_first_on_second('red block', [0, 0])", "def f(:"):
        with pytest.raises(Untranslatable):
            asyncio.run(world.translate(bad))


def test_failed_is_a_crash_with_zeros(data: TaskData, pool: SandboxPool) -> None:
    outcome = _world(data, pool).failed("x")
    assert outcome.status is Status.MODEL_ERROR and outcome.message == "x"
    assert outcome.metrics == {"success_rate_strict": 0.0}


def test_tools_are_valid(data: TaskData, pool: SandboxPool) -> None:
    tools = api_tools()
    names = [tool.name for tool in tools]
    assert len(names) == len(set(names)) == 10 and "put_first_on_second" in names
    for tool in tools:
        jsonschema.Draft202012Validator.check_schema(dict(tool.input_schema))
        assert tool.description
    put = next(tool for tool in tools if tool.name == "put_first_on_second")
    assert put.input_schema["required"] == ["arg1", "arg2"]
    world = _world(data, pool)
    assert world.request.startswith(data.samples[0].query)
    assert "objects = [" in world.request


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)


@settings(max_examples=50, deadline=None)
@given(
    name=st.sampled_from([tool.name for tool in api_tools()]),
    arguments=st.dictionaries(
        st.sampled_from(["obj_name", "pos", "arg1", "arg2", "msg", "pos_normalized", "x"]),
        _JSON,
        max_size=3,
    ),
)
def test_any_json_arguments_get_a_reply(
    data: TaskData, pool: SandboxPool, name: str, arguments: dict[str, Any]
) -> None:
    world = _world(data, pool)
    before = world.table.snapshot()
    reply = asyncio.run(world.call(name, arguments))
    assert isinstance(reply.text, str) and reply.text
    if reply.is_error:
        assert world.table.snapshot() == before
