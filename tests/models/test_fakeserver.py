"""The fake OpenAI server's own knobs, so the tests and benchmarks built on it can trust it."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.fakeserver import FakeOpenAIServer

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
# Both HTTP stacks must behave the same: benchmarks use the cheaper aiohttp one.
ENGINES = pytest.mark.parametrize("engine", ["uvicorn", "aiohttp"])


@ENGINES
def test_failure_knobs_and_counters(engine: str) -> None:
    server = FakeOpenAIServer(fail_every=2, fail_status=429, retry_after="3", engine=engine)
    with server, httpx.Client(base_url=server.base_url) as client:
        statuses = [client.post("/chat/completions", json=CHAT) for _ in range(4)]
        assert [r.status_code for r in statuses] == [200, 429, 200, 429]
        assert statuses[1].headers["retry-after"] == "3"
        assert statuses[0].json()["choices"][0]["message"]["content"] == "echo: hi"
        assert (server.calls, server.failures) == (4, 2)

        server.fail_every, server.fail_first = 0, 6  # calls 5 and 6 fail
        codes = [client.post("/completions", json=CHAT).status_code for _ in range(3)]
        assert codes == [429, 429, 200]
        server.reset()
        assert (server.calls, server.failures, server.requests) == (0, 0, [])
        server.fail_always, server.fail_status = True, 400
        assert client.post("/completions", json={"model": "m", "prompt": "x"}).status_code == 400
        assert client.get("/models").json()["data"][0]["id"] == "fake"


@ENGINES
def test_delay_and_scripted_answer(engine: str) -> None:
    answer = lambda body: body["prompt"].upper()  # noqa: E731
    with FakeOpenAIServer(delay_s=0.2, answer=answer, engine=engine) as server:
        start = time.perf_counter()
        reply = httpx.post(f"{server.base_url}/completions", json={"model": "m", "prompt": "ab"})
        assert time.perf_counter() - start >= 0.2
        assert reply.json()["choices"][0]["text"] == "AB"
        assert server.paths == ["/v1/completions"]


@ENGINES
def test_subprocess_mode_reports_over_http(engine: str) -> None:
    with FakeOpenAIServer(answer="fixed", subprocess=True, engine=engine) as server:
        with httpx.Client(base_url=server.base_url) as client:
            for _ in range(3):
                assert (
                    client.post("/chat/completions", json=CHAT).json()["choices"][0]["message"][
                        "content"
                    ]
                    == "fixed"
                )
        assert server.calls == 3 and server.requests[0] == CHAT
        server.reset()
        assert server.calls == 0
    assert not server.subprocess or server._process is None


TOOL_REPLY = {
    "content": None,
    "tool_calls": [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_time", "arguments": '{"city": "Paris"}'},
    ],
}


def first_choice(response: httpx.Response) -> dict[str, Any]:
    choice: dict[str, Any] = response.json()["choices"][0]
    return choice


@ENGINES
def test_scripted_tool_calls_in_openai_shape(engine: str) -> None:
    server = FakeOpenAIServer(answer=lambda body: TOOL_REPLY, engine=engine)
    with server, httpx.Client(base_url=server.base_url) as client:
        client.post("/chat/completions", json=CHAT)
        tools = [{"type": "function", "function": {"name": "get_weather"}}]
        choice = first_choice(client.post("/chat/completions", json={**CHAT, "tools": tools}))
        assert choice["finish_reason"] == "tool_calls"
        assert choice["message"] == {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_2_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_2_1",
                    "type": "function",
                    "function": {"name": "get_time", "arguments": '{"city": "Paris"}'},
                },
            ],
        }
        assert server.requests[1]["tools"] == tools

        # Text beside the calls, cut at a stop sequence; a completion reply is the text.
        server.answer = {"content": "one. two", "tool_calls": [{"name": "f"}]}
        message = first_choice(client.post("/chat/completions", json={**CHAT, "stop": ["."]}))[
            "message"
        ]
        assert message["content"] == "one"
        assert message["tool_calls"][0]["function"] == {"name": "f", "arguments": "{}"}
        text = client.post("/completions", json={"model": "m", "prompt": "x"}).json()
        assert text["choices"][0]["text"] == "one. two"

        # No calls: a plain reply with the configured finish reason.
        server.answer = {"content": "just text", "tool_calls": []}
        choice = first_choice(client.post("/chat/completions", json=CHAT))
        assert choice["finish_reason"] == "stop" and "tool_calls" not in choice["message"]

        # A conversation that went through a tool call has a null content.
        history = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "tool_call_id": "call_1_0", "content": "sunny"},
        ]
        reply = client.post("/chat/completions", json={"model": "m", "messages": history})
        assert reply.status_code == 200 and reply.json()["usage"]["prompt_tokens"] == 2


def test_subprocess_mode_scripts_tool_calls() -> None:
    with FakeOpenAIServer(answer=TOOL_REPLY, subprocess=True) as server:
        reply = httpx.post(f"{server.base_url}/chat/completions", json=CHAT).json()
        calls = reply["choices"][0]["message"]["tool_calls"]
        assert [c["id"] for c in calls] == ["call_1_0", "call_1_1"]
        assert server.calls == 1


def test_unknown_engine_is_refused() -> None:
    with pytest.raises(ValueError, match="engine"):
        FakeOpenAIServer(engine="gunicorn")
