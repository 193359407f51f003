"""open_weather as tools for agents: gold calls score full marks, bad calls are error replies."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolbench.core.agent import ToolCall, Untranslatable
from toolbench.core.task import TaskData
from toolbench.kinds.curl_agent import CurlAgentWorld
from toolbench.kinds.curl_task import CurlTask
from toolbench.tasks.registry import get_task
from toolbench.types import Status

TASK: CurlTask = get_task("open_weather")  # type: ignore[assignment]
BASE = "https://api.openweathermap.org"


def _subset() -> TaskData:
    """The shipped v0 data, cut to the first few samples of each gold endpoint variant (the
    golds' forecasts are slow to compute for all 100), with golds prepared."""
    data = TASK.load("v0", None)
    probe = TASK.agent_world(data, data.samples[0], None)  # type: ignore[arg-type]
    kept, seen = [], dict[str, int]()
    for sample in data.samples:
        tool = asyncio.run(probe.translate(sample.labels[0]))[0].name
        if seen.get(tool, 0) < 1:
            seen[tool] = seen.get(tool, 0) + 1
            kept.append(sample)
    data.samples = kept
    asyncio.run(TASK.prepare(data, None))  # type: ignore[arg-type]
    return data


DATA = _subset()


def world(index: int = 0) -> CurlAgentWorld:
    return TASK.agent_world(DATA, DATA.samples[index], None)  # type: ignore[arg-type,return-value]


async def run(w: CurlAgentWorld, calls: list[ToolCall]) -> list[Any]:
    return [await w.call(c.name, c.arguments) for c in calls]


def test_subset_covers_every_tool() -> None:
    used = {asyncio.run(world(i).gold_calls())[0].name for i in range(len(DATA.samples))}
    assert used == {spec.name for spec in world().tools}


@pytest.mark.parametrize("index", range(len(DATA.samples)))
def test_gold_calls_score_full_marks(index: int) -> None:
    async def go() -> None:
        w = world(index)
        calls = await w.gold_calls()
        assert len(calls) == 1
        replies = await run(w, calls)
        assert not replies[0].is_error, replies[0].text[:300]
        outcome = await w.outcome()
        assert outcome.success is True, outcome
        assert outcome.metrics == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
        await w.close()
        await w.close()  # idempotent

    asyncio.run(go())


def _wrong(arguments: dict[str, Any]) -> dict[str, Any]:
    """One argument changed to another valid value of its type."""
    name = next(n for n in ("q", "zip", "lat", *sorted(arguments)) if n in arguments)
    value = arguments[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        changed: Any = "Oslo" if name == "q" else "10001" if name == "zip" else f"{value}x"
    else:
        changed = value + (1 if name not in ("lat",) else -1)
    return {**arguments, name: changed}


@pytest.mark.parametrize("index", range(len(DATA.samples)))
def test_one_wrong_argument_fails(index: int) -> None:
    async def go() -> None:
        w = world(index)
        call = (await w.gold_calls())[0]
        await w.call(call.name, _wrong(dict(call.arguments)))
        assert (await w.outcome()).success is False

    asyncio.run(go())


def test_tools_are_valid_and_never_ask_for_the_key() -> None:
    tools = world().tools
    assert len({t.name for t in tools}) == len(tools) == 12
    for tool in tools:
        assert tool.description.strip()
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["additionalProperties"] is False
        assert "appid" not in tool.input_schema["properties"]
        assert set(tool.input_schema["required"]) <= set(tool.input_schema["properties"])
    by_name = {t.name: t for t in tools}
    assert by_name["get_forecast_by_city"].input_schema["required"] == ["q"]
    assert by_name["get_forecast_by_coordinates"].input_schema["properties"]["cnt"] == {
        "type": "integer",
        "description": by_name["get_forecast_by_zip"].input_schema["properties"]["cnt"][
            "description"
        ],
    }


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("get_weather", {"q": "Paris"}, "unknown tool"),
        ("get_current_weather_by_city", {}, "'q' is a required property"),
        ("get_current_weather_by_city", {"q": "Paris", "appid": "k"}, "Additional"),
        ("get_current_weather_by_coordinates", {"lat": "north", "lon": 2}, "not of type"),
        ("get_current_weather_by_city", ["q", "Paris"], "must be an object"),
        ("get_current_weather_by_city", {"q": "Nowhereville"}, "HTTP 404"),
        ("get_current_weather_by_coordinates", {"lat": 91, "lon": 2}, "wrong latitude"),
    ],
)
def test_bad_calls_are_error_replies(name: str, arguments: Any, expected: str) -> None:
    async def go() -> None:
        w = world()
        reply = await w.call(name, arguments)
        assert reply.is_error and expected in reply.text
        outcome = await w.outcome()  # nothing answered
        assert outcome.status is Status.MODEL_ERROR and outcome.success is False

    asyncio.run(go())


def test_answer_is_the_last_successful_call() -> None:
    async def go(after: ToolCall | None) -> Any:
        w = world()
        gold = (await w.gold_calls())[0]
        await w.call("geocode_zip", {"zip": "10001"})  # a look-up first
        await w.call(gold.name, gold.arguments)
        await w.call("get_current_weather_by_city", {"q": "Nowhereville"})  # an error: no answer
        if after is not None:
            await w.call(after.name, after.arguments)
        return await w.outcome()

    outcome = asyncio.run(go(None))
    assert outcome.success is True and outcome.details["answer_call"] == 1
    assert asyncio.run(go(ToolCall("geocode_zip", {"zip": "10001"}))).success is False


def test_failed_is_a_model_error_with_zero_metrics() -> None:
    outcome = world().failed("agent crashed\nbadly")
    assert outcome.status is Status.MODEL_ERROR and outcome.success is False
    assert outcome.metrics == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert "\n" not in (outcome.message or "")


def test_translate_fills_types_and_drops_the_key() -> None:
    line = f"curl '{BASE}/data/2.5/forecast?lat=-22.9&lon=43&appid={{API_KEY}}&cnt=04&lang=es'"
    call = asyncio.run(world().translate(f"Sure:\n```\n{line}\n```"))
    assert call == [
        ToolCall("get_forecast_by_coordinates", {"lat": -22.9, "lon": 43, "cnt": 4, "lang": "es"})
    ]


@pytest.mark.parametrize(
    "text",
    [
        "no command here",
        "curl -X GET 'https://example.com/data/2.5/weather?q=Paris'",  # another host
        f"curl '{BASE}/data/2.5/weather?id=2988507&appid={{API_KEY}}'",  # undocumented id
        f"curl '{BASE}/data/2.5/weather?q=Paris&lat=1&lon=2&appid={{API_KEY}}'",  # two ways
        f"curl '{BASE}/data/2.5/weather?q=Paris&appid=someone-elses-key'",
        f"curl '{BASE}/data/2.5/weather?q=Paris&q=Rome&appid={{API_KEY}}'",
        f"curl '{BASE}/data/2.5/forecast?q=Paris&cnt=many&appid={{API_KEY}}'",
        f"curl -X POST '{BASE}/data/2.5/weather?q=Paris&appid={{API_KEY}}'",
        f"curl '{BASE}/data/3.0/onecall?lat=1&lon=2&appid={{API_KEY}}'",
    ],
)
def test_untranslatable(text: str) -> None:
    with pytest.raises(Untranslatable):
        asyncio.run(world().translate(text))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from([t.name for t in world().tools] + ["nope"]),
    st.dictionaries(
        st.sampled_from(["q", "zip", "lat", "lon", "cnt", "units", "limit", "x"]),
        st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30)),
        max_size=4,
    ),
)
def test_any_call_answers_without_raising(name: str, arguments: dict[str, Any]) -> None:
    reply = asyncio.run(world().call(name, arguments))
    assert isinstance(reply.text, str) and len(reply.text) <= 20_000


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200).map(lambda tail: f"curl '{BASE}/data/2.5/weather?{tail}"))
def test_translate_raises_only_untranslatable(text: str) -> None:
    try:
        calls = asyncio.run(world().translate(text))
    except Untranslatable:
        return
    assert len(calls) == 1 and json.dumps(calls[0].arguments)
