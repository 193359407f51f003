"""Native tool calling through the model layer: cache keys, the OpenAI backend, the cache."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from tests.fakeserver import FakeOpenAIServer
from toolbench.models.base import ModelOptions
from toolbench.models.cache import CachedModel, cache_key
from toolbench.models.openai_compat import OpenAIModel
from toolbench.models.spec import make_model
from toolbench.types import GenerationRequest

WEATHER: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
TIME = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
MESSAGES = ({"role": "user", "content": "Weather in Paris?"},)
CHAT = GenerationRequest(messages=MESSAGES, tools=(WEATHER,))


def test_keys_of_requests_without_tools_are_unchanged() -> None:
    # Computed with the code before GenerationRequest had ``tools``: existing caches must hit.
    completion = GenerationRequest(prompt="2 + 2 =", max_tokens=8)
    chat = GenerationRequest(
        messages=(
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Call the weather API for Paris"},
        ),
        stop=("\n\n",),
        temperature=0.7,
        seed=3,
        epoch=1,
    )
    assert "tools" not in completion.cache_payload() and "tools" not in chat.cache_payload()
    assert (
        cache_key("openai:gpt-4o-mini", "https://api.openai.com/v1", completion)
        == "c6bca912e937ea14e75789689fa88c27e3323a2b01005eeaf4e1485a41361e70"
    )
    assert (
        cache_key("openai:fake", "http://127.0.0.1:8000/v1", chat)
        == "1b888c5d2daac94024e71ffc567ecdce93f2958ebbfc5a5e807e4301e3791445"
    )


def test_tools_are_part_of_the_key() -> None:
    def key(request: GenerationRequest) -> str:
        return cache_key("openai:m", None, request)

    no_tools = GenerationRequest(messages=MESSAGES)
    keys = {
        key(no_tools),
        key(GenerationRequest(messages=MESSAGES, tools=())),
        key(CHAT),
        key(GenerationRequest(messages=MESSAGES, tools=(TIME,))),
        key(GenerationRequest(messages=MESSAGES, tools=(WEATHER, TIME))),
        key(GenerationRequest(messages=MESSAGES, tools=(TIME, WEATHER))),  # order is shown
    }
    assert len(keys) == 6
    # Only the content counts, not the container types it arrives in.
    frozen = MappingProxyType({**WEATHER, "function": MappingProxyType(WEATHER["function"])})
    assert key(GenerationRequest(messages=MESSAGES, tools=(frozen,))) == key(CHAT)
    assert CHAT.cache_payload()["tools"] == [WEATHER]


async def test_openai_sdk_path_sends_tools_and_reads_tool_calls() -> None:
    reply = {
        "content": None,
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    }
    with FakeOpenAIServer(answer=lambda body: reply) as server:
        model = make_model("openai:fake", ModelOptions(base_url=server.base_url))
        generation = await model.generate(CHAT)
        await model.aclose()
        sent = server.requests[0]
    assert sent["tools"] == [WEATHER] and sent["tool_choice"] == "auto"
    assert sent["messages"] == [dict(m) for m in MESSAGES]
    assert generation.tool_calls == [
        {
            "id": "call_1_0",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert generation.text == "" and generation.finish_reason == "tool_calls"


async def test_text_beside_several_calls(server: FakeOpenAIServer) -> None:
    server.answer = lambda body: {
        "content": "Checking both.",
        "tool_calls": [
            {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
            {"name": "get_time", "arguments": "not json"},  # passed through as sent
        ],
    }
    model = OpenAIModel("fake", ModelOptions(base_url=server.base_url))
    generation = await model.generate(GenerationRequest(messages=MESSAGES, tools=(WEATHER, TIME)))
    await model.aclose()
    assert generation.text == "Checking both."
    assert [
        (c["id"], c["function"]["name"], c["function"]["arguments"]) for c in generation.tool_calls
    ] == [
        ("call_1_0", "get_weather", '{"city": "Oslo"}'),
        ("call_1_1", "get_time", "not json"),
    ]


async def test_requests_without_tools_send_no_tool_fields(server: FakeOpenAIServer) -> None:
    model = OpenAIModel("fake", ModelOptions(base_url=server.base_url))
    plain = await model.generate(GenerationRequest(messages=MESSAGES))
    await model.generate(GenerationRequest(messages=MESSAGES, tools=()))  # API rejects []
    await model.aclose()
    for sent in server.requests:
        assert "tools" not in sent and "tool_choice" not in sent
    assert plain.tool_calls == [] and plain.text == "echo: Weather in Paris?"


async def test_completion_request_with_tools_is_a_programming_error(
    server: FakeOpenAIServer,
) -> None:
    model = make_model("openai:fake", ModelOptions(base_url=server.base_url))
    with pytest.raises(ValueError, match="native tools need a chat request"):
        await model.generate(GenerationRequest(prompt="Weather in Paris?", tools=(WEATHER,)))
    await model.aclose()
    assert server.calls == 0


def test_parse_keeps_tool_calls_as_plain_openai_dicts() -> None:
    model = OpenAIModel("m", ModelOptions(base_url="http://127.0.0.1:9/v1"))
    calls: list[Any] = [
        {
            "id": "c1",
            "type": "function",
            "index": 0,  # extra keys some servers add are dropped
            "function": {"name": "f", "arguments": '{"a": 1}'},
        },
        {"id": "c2", "function": {"name": "g", "arguments": {"b": "é"}}},  # object arguments
        {"id": "c3", "type": "function", "function": {"name": "h"}},
        None,
    ]
    data = {"choices": [{"message": {"content": None, "tool_calls": calls}}]}
    generation = model._parse(data, 0.0)
    assert generation.text == ""
    assert generation.tool_calls == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": '{"b": "é"}'}},
        {"id": "c3", "type": "function", "function": {"name": "h", "arguments": ""}},
    ]


async def test_tool_calls_round_trip_through_the_cache(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.answer = {
        "content": None,
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
    }
    options = ModelOptions(base_url=server.base_url, cache_path=tmp_path / "c.sqlite")
    model = make_model("openai:fake", options)
    assert isinstance(model, CachedModel)
    first = await model.generate(CHAT)
    second = await model.generate(CHAT)
    other_tools = await model.generate(GenerationRequest(messages=MESSAGES, tools=(TIME,)))
    await model.aclose()
    assert (model.hits, model.misses, server.calls) == (1, 2, 2)
    assert second.cached and second.tool_calls == first.tool_calls
    assert not other_tools.cached

    # From disk, not from the in-memory write queue.
    reopened = make_model("openai:fake", options)
    assert isinstance(reopened, CachedModel)
    stored = await reopened.generate(CHAT)
    await reopened.aclose()
    assert server.calls == 2 and reopened.hits == 1
    assert stored.cached and stored.tool_calls == first.tool_calls
    assert stored.tool_calls[0]["function"]["arguments"] == '{"city": "Paris"}'
    assert (stored.text, stored.finish_reason) == ("", "tool_calls")
