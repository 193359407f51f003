"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

Runs FastAPI under uvicorn in a background thread on a free port, so clients exercise the real
SDK, HTTP stack and connection pool. Behaviour is set by attributes that may be changed while it
runs::

    with FakeOpenAIServer(delay_s=0.2, answer=lambda req: "ok") as srv:
        model = make_model("openai:fake", ModelOptions(base_url=srv.base_url))
        ...
        assert srv.calls == 1 and srv.requests[0]["max_tokens"] == 256

Failure injection (checked in this order, per request): ``fail_always``; the first
``fail_first`` calls; every ``fail_every``-th call. Failures answer ``fail_status`` (500 by
default) with a ``Retry-After: <retry_after>`` header when ``retry_after`` is set.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

Answer = Callable[[dict[str, Any]], str]


def default_answer(body: dict[str, Any]) -> str:
    """Echo the last user message or the prompt, so tests can tell requests apart."""
    if body.get("messages"):
        return f"echo: {body['messages'][-1].get('content', '')}"
    return f"echo: {body.get('prompt', '')}"


class FakeOpenAIServer:
    """POST /v1/chat/completions, POST /v1/completions and GET /v1/models, with knobs."""

    def __init__(
        self,
        *,
        delay_s: float = 0.0,
        answer: Answer | str = default_answer,
        fail_every: int = 0,
        fail_first: int = 0,
        fail_always: bool = False,
        fail_status: int = 500,
        retry_after: str | None = None,
        finish_reason: str = "stop",
    ) -> None:
        self.delay_s = delay_s
        self.answer: Answer = (lambda _body: answer) if isinstance(answer, str) else answer
        self.fail_every = fail_every
        self.fail_first = fail_first
        self.fail_always = fail_always
        self.fail_status = fail_status
        self.retry_after = retry_after
        self.finish_reason = finish_reason
        #: Requests received (including failed ones), failures sent, and every request body.
        self.calls = 0
        self.failures = 0
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0
        self.app = self._build_app()

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` / ``--base-url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        """Forget counted calls and recorded requests (behaviour knobs are kept)."""
        with self._lock:
            self.calls = self.failures = 0
            self.requests.clear()
            self.paths.clear()

    # ---- request handling ----

    def _should_fail(self, n: int) -> bool:
        if self.fail_always or n <= self.fail_first:
            return True
        return bool(self.fail_every) and n % self.fail_every == 0

    def _failure(self) -> JSONResponse:
        with self._lock:
            self.failures += 1
        headers = {"retry-after": self.retry_after} if self.retry_after is not None else {}
        body = {"error": {"message": f"injected failure {self.fail_status}", "type": "fake"}}
        return JSONResponse(body, status_code=self.fail_status, headers=headers)

    async def _handle(self, request: Request, kind: str) -> JSONResponse:
        body = await request.json()
        with self._lock:
            self.calls += 1
            n = self.calls
            self.requests.append(body)
            self.paths.append(request.url.path)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self._should_fail(n):
            return self._failure()
        text = self.answer(body)
        finish_reason = self.finish_reason
        stops = body.get("stop") or []
        for stop in [stops] if isinstance(stops, str) else stops:
            if stop and stop in text:
                text, finish_reason = text[: text.index(stop)], "stop"
        prompt = body.get("prompt") or " ".join(m.get("content", "") for m in body["messages"])
        usage = {
            "prompt_tokens": len(str(prompt).split()),
            "completion_tokens": len(text.split()),
            "total_tokens": len(str(prompt).split()) + len(text.split()),
        }
        base = {"id": f"fake-{n}", "created": int(time.time()), "model": body.get("model", "")}
        if kind == "chat":
            message = {"role": "assistant", "content": text}
            choice = {"index": 0, "message": message, "finish_reason": finish_reason}
            return JSONResponse({**base, "object": "chat.completion", "choices": [choice], "usage": usage})
        choice = {"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}
        return JSONResponse({**base, "object": "text_completion", "choices": [choice], "usage": usage})

    def _build_app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> JSONResponse:
            return await self._handle(request, "chat")

        @app.post("/v1/completions")
        async def completions(request: Request) -> JSONResponse:
            return await self._handle(request, "completion")

        @app.get("/v1/models")
        async def models() -> dict[str, Any]:
            return {"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "me"}]}

        return app

    # ---- lifecycle ----

    def start(self) -> FakeOpenAIServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app, log_level="warning", access_log=False, lifespan="off", backlog=2048
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="fake-openai", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
