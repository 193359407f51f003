"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

Runs FastAPI under uvicorn in a background thread on a free port, so clients exercise the real
SDK, HTTP stack and connection pool. Behaviour is set by attributes that may be changed while it
runs::

    with FakeOpenAIServer(delay_s=0.2, answer=lambda req: "ok") as srv:
        model = make_model("openai:fake", ModelOptions(base_url=srv.base_url))
        ...
        assert srv.calls == 1 and srv.requests[0]["max_tokens"] == 256

``answer`` maps the request JSON to the reply text (or is a fixed string); stop sequences in
the request are applied to it like a real server would. For native tool calling, ``answer`` may
instead return (or be) a dict ``{"content": str | None, "tool_calls": [{"name": str,
"arguments": dict | str}]}``: a chat reply then carries ``message.tool_calls`` in the OpenAI
shape (ids ``call_<n>_<i>`` for the n-th request's i-th call, ``type: "function"``,
``arguments`` as a JSON string), ``content`` as given (``None`` stays ``null``), and
``finish_reason: "tool_calls"`` when there is at least one call. A completion reply uses only
the ``content``. The request's ``tools``/``tool_choice`` are recorded in ``requests`` like any
other field; the server does not check calls against them. Failure injection (checked in this
order, per request): ``fail_always``; the first ``fail_first`` calls; every ``fail_every``-th
call, except that a request body whose previous attempt failed that way succeeds and the
failure passes to the next other request (a periodic rule would otherwise starve one of several
clients retrying in lockstep, which made retry tests flaky: with three clients retrying at once,
the same one always drew the failing turn); the share of failed calls stays 1 in N.
Failures answer ``fail_status`` (500 by default) with a ``Retry-After: <retry_after>`` header
when ``retry_after`` is set.

``subprocess=True`` runs the server in a forked child process instead of a thread. Use it for
throughput measurements: in a thread the server's CPU time competes with the client for the
GIL, so the benchmark would measure both. ``engine="aiohttp"`` serves the same routes with the
same behaviour from ``aiohttp.web`` (C HTTP parser) instead of FastAPI under uvicorn (pure-Python
h11): ~0.2 instead of ~0.9 ms of CPU per request, which matters when the server shares a
2-core machine with the harness it stands in for (a real server runs on its own hardware).
With ``subprocess=True``, ``calls``/``failures``/``requests``/``reset()`` go over HTTP to the
child, and knobs changed after ``start()`` do not reach it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import socket
import threading
import time
import urllib.request
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import uvicorn
from aiohttp import web
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

#: A reply: the text, or ``{"content": str | None, "tool_calls": [{"name", "arguments"}]}``.
Reply = str | dict[str, Any]
Answer = Callable[[dict[str, Any]], Reply]


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
        answer: Answer | Reply = default_answer,
        fail_every: int = 0,
        fail_first: int = 0,
        fail_always: bool = False,
        fail_status: int = 500,
        retry_after: str | None = None,
        finish_reason: str = "stop",
        subprocess: bool = False,
        engine: str = "uvicorn",
    ) -> None:
        if engine not in ("uvicorn", "aiohttp"):
            raise ValueError(f"engine must be 'uvicorn' or 'aiohttp', not {engine!r}")
        self.delay_s = delay_s
        self.answer = answer
        self.fail_every = fail_every
        self.fail_first = fail_first
        self.fail_always = fail_always
        self.fail_status = fail_status
        self.retry_after = retry_after
        self.finish_reason = finish_reason
        self.subprocess = subprocess
        self.engine = engine
        self.port = 0
        self._calls = 0
        self._failures = 0
        self._failed_last: set[str] = set()  # bodies whose last attempt got a periodic failure
        self._owed = 0  # periodic failures passed on to the next request that may take one
        self._requests: list[dict[str, Any]] = []
        self._paths: list[str] = []
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._aio: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._thread: threading.Thread | None = None
        self._process: BaseProcess | None = None
        self._control: Connection | None = None
        self.app = self._build_app()

    @property
    def answer(self) -> Answer:
        """The reply function; setting a fixed string or dict makes one that always gives it."""
        return self._answer

    @answer.setter
    def answer(self, answer: Answer | Reply) -> None:
        self._answer: Answer = (lambda _body: answer) if isinstance(answer, (str, dict)) else answer

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` / ``--base-url``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # ---- what the server saw ----

    def _stats(self) -> dict[str, Any]:
        if self._process is None:
            with self._lock:
                return {
                    "calls": self._calls,
                    "failures": self._failures,
                    "requests": list(self._requests),
                    "paths": list(self._paths),
                }
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_fake/stats") as response:
            stats: dict[str, Any] = json.load(response)
        return stats

    @property
    def calls(self) -> int:
        """Requests received, including the ones answered with an injected failure."""
        return int(self._stats()["calls"])

    @property
    def failures(self) -> int:
        """Injected failures sent."""
        return int(self._stats()["failures"])

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in arrival order."""
        return list(self._stats()["requests"])

    @property
    def paths(self) -> list[str]:
        """The URL path of every request received (e.g. ``/v1/completions``)."""
        return list(self._stats()["paths"])

    def reset(self) -> None:
        """Forget counted calls and recorded requests (behaviour knobs are kept)."""
        if self._process is None:
            self._reset_local()
            return
        url = f"http://127.0.0.1:{self.port}/_fake/reset"
        urllib.request.urlopen(urllib.request.Request(url, method="POST")).close()

    def _reset_local(self) -> None:
        with self._lock:
            self._calls = self._failures = 0
            self._requests.clear()
            self._paths.clear()
            self._failed_last.clear()
            self._owed = 0

    # ---- request handling ----

    def _should_fail(self, n: int, body: dict[str, Any]) -> bool:
        if self.fail_always or n <= self.fail_first:
            return True
        if not self.fail_every:
            return False
        key = json.dumps(body, sort_keys=True)
        with self._lock:
            if n % self.fail_every == 0:
                self._owed += 1
            if self._owed and key not in self._failed_last:
                self._owed -= 1
                self._failed_last.add(key)
                return True
            self._failed_last.discard(key)
        return False

    def _failure(self) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            self._failures += 1
        headers = {"retry-after": self.retry_after} if self.retry_after is not None else {}
        body = {"error": {"message": f"injected failure {self.fail_status}", "type": "fake"}}
        return self.fail_status, headers, body

    async def _handle(self, request: Request, kind: str) -> JSONResponse:
        status, headers, reply = await self._reply(await request.json(), request.url.path, kind)
        return JSONResponse(reply, status_code=status, headers=headers)

    async def _aio_handle(self, request: web.Request, kind: str) -> web.Response:
        status, headers, reply = await self._reply(await request.json(), request.path, kind)
        return web.json_response(reply, status=status, headers=headers)

    async def _reply(
        self, body: dict[str, Any], path: str, kind: str
    ) -> tuple[int, dict[str, str], dict[str, Any]]:
        """(status, headers, JSON body) of the answer to one request, after the delay."""
        with self._lock:
            self._calls += 1
            n = self._calls
            self._requests.append(body)
            self._paths.append(path)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self._should_fail(n, body):
            return self._failure()
        reply_spec = self.answer(body)
        if isinstance(reply_spec, dict):
            content: str | None = reply_spec.get("content")
            tool_calls = [
                _tool_call(n, i, call) for i, call in enumerate(reply_spec.get("tool_calls") or [])
            ]
        else:
            content, tool_calls = reply_spec, []
        text = content or ""
        finish_reason = self.finish_reason
        stops = body.get("stop") or []
        for stop in [stops] if isinstance(stops, str) else stops:
            if stop and stop in text:
                text, finish_reason = text[: text.index(stop)], "stop"
        if content is not None:
            content = text
        prompt = body.get("prompt") or " ".join(
            str(m.get("content") or "") for m in body["messages"]
        )
        prompt_tokens = len(str(prompt).split())
        completion_tokens = len(text.split()) + sum(
            1 + len(call["function"]["arguments"].split()) for call in tool_calls
        )
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        base = {"id": f"fake-{n}", "created": int(time.time()), "model": body.get("model", "")}
        if kind == "chat":
            message: dict[str, Any] = {"role": "assistant", "content": content}
            if tool_calls:
                message["tool_calls"] = tool_calls
                finish_reason = "tool_calls"
            choice = {"index": 0, "message": message, "finish_reason": finish_reason}
            reply = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        else:
            choice = {"index": 0, "text": text, "finish_reason": finish_reason, "logprobs": None}
            reply = {**base, "object": "text_completion", "choices": [choice], "usage": usage}
        return 200, {}, reply

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

        @app.get("/_fake/stats")
        async def stats() -> dict[str, Any]:
            return self._stats()

        @app.post("/_fake/reset")
        async def reset() -> dict[str, Any]:
            self._reset_local()
            return {}

        return app

    def _build_aio_app(self) -> web.Application:
        """The same routes as ``_build_app``, on aiohttp.web."""

        async def chat(request: web.Request) -> web.Response:
            return await self._aio_handle(request, "chat")

        async def completions(request: web.Request) -> web.Response:
            return await self._aio_handle(request, "completion")

        async def models(_request: web.Request) -> web.Response:
            data = [{"id": "fake", "object": "model", "owned_by": "me"}]
            return web.json_response({"object": "list", "data": data})

        async def stats(_request: web.Request) -> web.Response:
            return web.json_response(self._stats())

        async def reset(_request: web.Request) -> web.Response:
            self._reset_local()
            return web.json_response({})

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", chat)
        app.router.add_post("/v1/completions", completions)
        app.router.add_get("/v1/models", models)
        app.router.add_get("/_fake/stats", stats)
        app.router.add_post("/_fake/reset", reset)
        return app

    # ---- lifecycle ----

    def start(self) -> FakeOpenAIServer:
        return self._start_process() if self.subprocess else self._start_thread()

    @staticmethod
    def _listening_socket() -> socket.socket:
        # proto must be IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted
        # sockets whose proto says TCP, and without it Nagle + delayed ACK add ~40 ms to every
        # request on a reused connection.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        return sock

    def _start_thread(self) -> FakeOpenAIServer:
        if self.engine == "aiohttp":
            return self._start_aio_thread()
        sock = self._listening_socket()
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

    def _start_aio_thread(self) -> FakeOpenAIServer:
        sock = self._listening_socket()
        self.port = sock.getsockname()[1]
        started = threading.Event()
        failed: list[BaseException] = []

        async def serve() -> None:
            stop = asyncio.Event()
            self._aio = (asyncio.get_running_loop(), stop)
            runner = web.AppRunner(self._build_aio_app(), access_log=None)
            try:
                await runner.setup()
                await web.SockSite(runner, sock, backlog=2048).start()
            except BaseException as error:
                failed.append(error)
                started.set()
                raise
            started.set()
            try:
                await stop.wait()
            finally:
                await runner.cleanup()

        def run() -> None:
            with contextlib.suppress(BaseException):
                asyncio.run(serve())

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not started.wait(10) or failed:
            raise RuntimeError(f"fake OpenAI server did not start: {failed}")
        return self

    def _start_process(self) -> FakeOpenAIServer:
        # fork, not spawn: the answer function may be a lambda, which cannot be pickled.
        context = multiprocessing.get_context("fork")
        self._control, child = context.Pipe()
        self._process = context.Process(
            target=_serve_in_child, args=(self, child), name="fake-openai", daemon=True
        )
        self._process.start()
        child.close()
        if not self._control.poll(10):
            self.stop()
            raise RuntimeError("fake OpenAI server process did not start")
        self.port = self._control.recv()
        return self

    def stop(self) -> None:
        """Stop serving; safe to call twice."""
        if self._process is not None:
            if self._control is not None:
                with contextlib.suppress(OSError):
                    self._control.send("stop")
                self._control.close()
            self._process.join(timeout=10)
            if self._process.is_alive():
                self._process.kill()
                self._process.join()
            self._process = self._control = None
        if self._server is not None:
            self._server.should_exit = True
        if self._aio is not None:
            loop, stop = self._aio
            with contextlib.suppress(RuntimeError):  # the loop has already finished
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server = self._thread = self._aio = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _tool_call(n: int, i: int, call: dict[str, Any]) -> dict[str, Any]:
    """The i-th scripted call of the n-th request in the OpenAI ``message.tool_calls`` shape."""
    arguments = call.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {
        "id": f"call_{n}_{i}",
        "type": "function",
        "function": {"name": call["name"], "arguments": arguments},
    }


def _serve_in_child(server: FakeOpenAIServer, control: Connection) -> None:
    """Child process body: serve in a thread until the parent says stop or goes away."""
    server._process = server._control = None  # the parent's handles mean nothing here
    server._aio = None
    server._start_thread()
    control.send(server.port)
    with contextlib.suppress(EOFError):
        control.recv()
    server.stop()
