"""The fake OpenAI server's own knobs, so the tests and benchmarks built on it can trust it."""

from __future__ import annotations

import time

import httpx

from tests.fakeserver import FakeOpenAIServer

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_failure_knobs_and_counters() -> None:
    server = FakeOpenAIServer(fail_every=2, fail_status=429, retry_after="3")
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


def test_delay_and_scripted_answer() -> None:
    with FakeOpenAIServer(delay_s=0.2, answer=lambda body: body["prompt"].upper()) as server:
        start = time.perf_counter()
        reply = httpx.post(f"{server.base_url}/completions", json={"model": "m", "prompt": "ab"})
        assert time.perf_counter() - start >= 0.2
        assert reply.json()["choices"][0]["text"] == "AB"
        assert server.paths == ["/v1/completions"]


def test_subprocess_mode_reports_over_http() -> None:
    with FakeOpenAIServer(answer="fixed", subprocess=True) as server:
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
