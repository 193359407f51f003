"""OpenAIModel against a real HTTP server: what it sends, what it reads back."""

from __future__ import annotations

import pytest

from tests.fakeserver import FakeOpenAIServer
from toolbench.errors import UserError
from toolbench.models.base import Model, ModelOptions
from toolbench.models.openai_compat import OpenAIModel, resolve_api_key
from toolbench.types import GenerationRequest, InfraError


async def test_chat_request_and_response(server: FakeOpenAIServer) -> None:
    model = OpenAIModel("fake", ModelOptions(base_url=server.base_url))
    request = GenerationRequest(
        messages=(
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi there"},
        ),
        stop=("s1", "s2", "s3", "s4", "s5"),
        max_tokens=17,
        temperature=0.3,
        seed=5,
    )
    generation = await model.generate(request)
    await model.aclose()

    assert server.paths == ["/v1/chat/completions"]
    assert server.requests == [
        {
            "model": "fake",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi there"},
            ],
            "stop": ["s1", "s2", "s3", "s4"],  # the API allows four
            "max_tokens": 17,
            "temperature": 0.3,
            "seed": 5,
        }
    ]
    assert generation.text == "echo: hi there"
    assert (generation.prompt_tokens, generation.completion_tokens) == (4, 3)
    assert generation.finish_reason == "stop"
    assert generation.latency_s > 0
    assert not generation.cached


async def test_completion_request_applies_stop_and_counts_usage(server: FakeOpenAIServer) -> None:
    server.answer = lambda body: "first line\nsecond line"
    server.finish_reason = "length"
    model = OpenAIModel("fake", ModelOptions(base_url=server.base_url))
    generation = await model.generate(GenerationRequest(prompt="a b c", stop=("\n",)))
    plain = await model.generate(GenerationRequest(prompt="a b c", seed=None))
    await model.aclose()

    assert server.paths == ["/v1/completions", "/v1/completions"]
    assert server.requests[0] == {
        "model": "fake",
        "prompt": "a b c",
        "stop": ["\n"],
        "max_tokens": 256,
        "temperature": 0.0,
        "seed": 0,
    }
    assert "stop" not in server.requests[1] and "seed" not in server.requests[1]
    assert generation.text == "first line"
    assert generation.finish_reason == "stop"
    assert (generation.prompt_tokens, generation.completion_tokens) == (3, 2)
    assert plain.text == "first line\nsecond line"
    assert plain.finish_reason == "length"


async def test_satisfies_the_protocol(server: FakeOpenAIServer) -> None:
    model = OpenAIModel("gpt-x", ModelOptions(base_url=server.base_url))
    assert isinstance(model, Model)
    assert model.name == "openai:gpt-x"
    assert model.cacheable is True
    assert model.base_url == server.base_url
    await model.aclose()


def test_api_key_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert resolve_api_key(ModelOptions(api_key="sk-opt", base_url="http://x")) == "sk-opt"
    assert resolve_api_key(ModelOptions(base_url="http://localhost:8000/v1")) == "EMPTY"
    with pytest.raises(UserError, match="set OPENAI_API_KEY or pass --api-key"):
        resolve_api_key(ModelOptions())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert resolve_api_key(ModelOptions()) == "sk-env"
    assert resolve_api_key(ModelOptions(api_key="sk-opt")) == "sk-opt"


def test_parse_tolerates_sparse_compatible_servers() -> None:
    model = OpenAIModel("m", ModelOptions(base_url="http://127.0.0.1:9/v1"))
    generation = model._parse({"choices": [{"message": {"content": None}}]}, 0.1)
    assert (generation.text, generation.prompt_tokens, generation.finish_reason) == ("", 0, None)
    calls = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    generation = model._parse({"choices": [{"message": {"content": "", "tool_calls": calls}}]}, 0)
    assert generation.tool_calls == calls
    bad_replies: list[object] = [{"choices": []}, {"error": "boom"}, "<html>oops</html>"]
    for bad in bad_replies:
        with pytest.raises(InfraError, match="no choices"):
            model._parse(bad, 0.1)


def test_request_bodies_encode_as_their_plain_form() -> None:
    """Messages go to the encoder as they are (no per-turn copy of the transcript); the bytes
    must be those of the plain form whatever the messages are made of."""
    import json
    from types import MappingProxyType

    from toolbench.models import openai_compat

    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    transcripts = [
        ({"role": "user", "content": "Find homes in Austin \u2028 \ud83c\udfe0"},),
        (
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": None, "tool_calls": (call,)},
            {"role": "tool", "tool_call_id": "c1", "content": "[]"},
        ),
        (MappingProxyType({"role": "user", "content": "a read-only mapping"}),),
        ({"role": "user", "content": "x", "extra": MappingProxyType({"k": (1, 2.5, None)})},),
    ]
    for messages in transcripts:
        request = GenerationRequest(messages=messages)
        body = {"model": "m", "messages": request.messages}
        plain = {"model": "m", "messages": request.plain_messages()}
        expected = json.dumps(plain, separators=(",", ":")).encode()
        assert openai_compat._encode(body) == expected
    with pytest.raises(TypeError):
        openai_compat._encode({"messages": ({"role": "user", "content": object()},)})
