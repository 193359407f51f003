"""the_cat_api as tools for agents: gold calls score full marks on every v0 sample, the world
lives across calls, refused calls change nothing, and the judged world is the one all calls
left behind."""

from __future__ import annotations

import asyncio
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core.agent import ToolCall, Untranslatable
from toolbench.kinds.curl_agent import CurlAgentWorld
from toolbench.kinds.curl_task import CurlTask
from toolbench.tasks.registry import get_task
from toolbench.types import Status

TASK: CurlTask = get_task("the_cat_api")  # type: ignore[assignment]
API = "https://api.thecatapi.com/v1"
DATA = TASK.load("v0", None)
asyncio.run(TASK.prepare(DATA, None))  # type: ignore[arg-type]


def world(index: int) -> CurlAgentWorld:
    return TASK.agent_world(DATA, DATA.samples[index], None)  # type: ignore[arg-type,return-value]


def first(tool: str) -> int:
    """The first sample whose gold is a call of ``tool``."""
    for index in range(len(DATA.samples)):
        if asyncio.run(world(index).gold_calls())[0].name == tool:
            return index
    raise AssertionError(f"no sample uses {tool}")


def state(w: CurlAgentWorld) -> Any:
    return TASK.service.snapshot(w._state)


def test_every_gold_scores_full_marks() -> None:
    async def go(index: int) -> None:
        w = world(index)
        for call in await w.gold_calls():
            reply = await w.call(call.name, call.arguments)
            assert not reply.is_error, (DATA.samples[index].labels, reply.text[:300])
        outcome = await w.outcome()
        assert outcome.success is True, (DATA.samples[index].labels, outcome)
        assert outcome.metrics == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
        await w.close()

    for index in range(len(DATA.samples)):
        asyncio.run(go(index))


def test_tools_are_valid() -> None:
    tools = world(0).tools
    assert len({t.name for t in tools}) == len(tools) == 14
    for tool in tools:
        assert tool.description.strip()
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
    vote = next(t for t in tools if t.name == "create_vote").input_schema
    assert vote["required"] == ["image_id", "value"] and "sub_id" in vote["properties"]


@pytest.mark.parametrize(
    ("tool", "change"),
    [
        ("create_vote", lambda a: {**a, "value": -a["value"]}),
        ("create_favourite", lambda a: {**a, "sub_id": "someone-else"}),
        ("search_images", lambda a: {**a, "limit": a.get("limit", 1) + 1}),
    ],
)
def test_one_wrong_argument_fails(tool: str, change: Any) -> None:
    index = first(tool)

    async def go() -> None:
        w = world(index)
        call = (await w.gold_calls())[0]
        reply = await w.call(call.name, change(dict(call.arguments)))
        assert not reply.is_error
        assert (await w.outcome()).success is False

    asyncio.run(go())


def test_a_read_after_the_write_keeps_the_write_as_answer_but_a_second_write_fails() -> None:
    index = first("create_vote")

    async def go(extra: bool) -> Any:
        w = world(index)
        call = (await w.gold_calls())[0]
        await w.call("list_votes", {})
        await w.call(call.name, call.arguments)
        listed = await w.call("list_votes", {"order": "DESC", "limit": 1})
        assert call.arguments["image_id"] in listed.text  # the world lives across calls
        if extra:
            await w.call(call.name, call.arguments)  # the same vote twice: another world
        return await w.outcome()

    outcome = asyncio.run(go(False))
    assert outcome.success is True and outcome.details["answer_call"] == 1
    assert asyncio.run(go(True)).success is False


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("delete_vote", {"vote_id": "1"}, "HTTP 400: INVALID_ACCOUNT"),
        ("delete_vote", {"vote_id": "../favourites/1"}, "does not match"),
        ("delete_vote", {"vote_id": ""}, "vote_id"),
        ("create_vote", {"image_id": "nope-not-an-image", "value": 1}, "Couldn't find an image"),
        ("create_vote", {"image_id": "abc", "value": 5}, "HTTP 400"),
        ("create_vote", {"image_id": "abc", "value": "1"}, "not of type 'integer'"),
        ("create_vote", {"image_id": "abc"}, "'value' is a required property"),
        ("create_favourite", {"image_id": "abc", "api_key": "x"}, "Additional properties"),
        ("search_images", {"size": "huge"}, "HTTP 400"),
        ("search_images", {"has_breeds": 2}, "has_breeds"),
        ("adopt_cat", {}, "unknown tool"),
        ("list_votes", "garbage", "must be an object"),
    ],
)
def test_refused_calls_are_errors_and_change_nothing(
    name: str, arguments: Any, expected: str
) -> None:
    index = first("delete_vote")

    async def go() -> None:
        w = world(index)
        before = state(w)
        reply = await w.call(name, arguments)
        assert reply.is_error and expected in reply.text, reply.text
        assert state(w) == before
        outcome = await w.outcome()
        assert outcome.status is Status.MODEL_ERROR

    asyncio.run(go())


def test_failed_is_a_model_error_with_zero_metrics() -> None:
    outcome = world(0).failed("timed out")
    assert outcome.status is Status.MODEL_ERROR and outcome.success is False
    assert outcome.metrics == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_string_only_samples_are_judged_on_response_and_world() -> None:
    index = next(i for i, s in enumerate(DATA.samples) if s.fields.get("compare_string_only"))

    async def go() -> Any:
        w = world(index)
        for call in await w.gold_calls():
            await w.call(call.name, call.arguments)
        return await w.outcome()

    outcome = asyncio.run(go())
    assert outcome.success is True and "compared" not in outcome.details


def test_translate() -> None:
    w = world(0)
    body = '{"image_id":"abc", "value":-1, "sub_id":"me"}'
    assert asyncio.run(w.translate(f"curl -X POST '{API}/votes' --data '{body}'")) == [
        ToolCall("create_vote", {"image_id": "abc", "value": -1, "sub_id": "me"})
    ]
    assert asyncio.run(w.translate(f"curl '{API}/images/search?has_breeds=true&limit=2'")) == [
        ToolCall("search_images", {"has_breeds": True, "limit": 2})
    ]
    assert asyncio.run(w.translate(f"curl '{API}/images/search/'")) == [
        ToolCall("search_images", {})
    ]
    assert asyncio.run(w.translate(f"curl -X DELETE '{API}/favourites/42'")) == [
        ToolCall("delete_favourite", {"favourite_id": "42"})
    ]


@pytest.mark.parametrize(
    "text",
    [
        "",
        f"curl -X POST '{API}/votes' --data 'image_id=abc&value=1'",  # a form body
        f"curl -X POST '{API}/votes' --data '[1, 2]'",
        f'curl -X POST \'{API}/votes\' --data \'{{"image_id":"abc","value":1,"x":2}}\'',
        f"curl -X PUT '{API}/votes/12'",
        f"curl '{API}/images/search?colour=black'",
        f"curl '{API}/breeds/abys/extra'",
    ],
)
def test_untranslatable(text: str) -> None:
    with pytest.raises(Untranslatable):
        asyncio.run(world(0).translate(text))


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from([t.name for t in world(0).tools]),
    st.dictionaries(
        st.sampled_from(["image_id", "value", "sub_id", "vote_id", "favourite_id", "limit", "q"]),
        st.one_of(
            st.none(), st.booleans(), st.integers(), st.text(max_size=20), st.lists(st.integers())
        ),
        max_size=3,
    ),
)
def test_any_call_answers_and_errors_change_nothing(name: str, arguments: dict[str, Any]) -> None:
    w = world(first("delete_vote"))
    before = state(w)
    reply = asyncio.run(w.call(name, arguments))
    if reply.is_error:
        assert state(w) == before
