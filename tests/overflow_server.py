"""An OpenAI-compatible server on 127.0.0.1 that refuses long prompts as vLLM does.

A prompt "fits" when its token count (here: whitespace-separated words, a stand-in for a
tokenizer) plus the request's ``max_tokens`` is at most ``context_length`` (vLLM's rule);
otherwise the answer is vLLM's HTTP 400 with the exact JSON body of its version (``style``):

- ``"v18"`` (vLLM 0.18 and later): ``{"error": {"message": "This model's maximum context
  length is C tokens. However, you requested M output tokens and your prompt contains P input
  tokens, for a total of T tokens. ... (parameter=input_tokens, value=P)", "type":
  "BadRequestError", "param": "input_tokens", "code": 400}}``;
- ``"v10"`` (0.10-0.17): ``'max_tokens' or 'max_completion_tokens' is too large: M. ...``;
- ``"old"`` (up to 0.9, flat body): ``{"object": "error", "message": "This model's maximum
  context length is C tokens. However, you requested T tokens (P in the messages, M in the
  completion). ...", "type": "BadRequestError", "param": null, "code": 400}``.

``GET /v1/models`` lists the model with ``max_model_len`` (as vLLM does). Other prompts get a
normal completion (``answer``). Used in a thread (``with OverflowServer(...) as server``) or
as its own process (``python -m tests.overflow_server --port 0 ...``, which prints
``port <n>`` once it listens), so a test can kill it outright.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

from aiohttp import web

#: One HTTP error body per vLLM generation of its context-length message.
STYLES = ("v18", "v10", "old")


def prompt_text(body: dict[str, Any]) -> str:
    if body.get("messages"):
        return "\n".join(str(m.get("content") or "") for m in body["messages"])
    return str(body.get("prompt") or "")


def vllm_refusal(style: str, context: int, prompt: int, asked: int) -> dict[str, Any]:
    """vLLM's 400 body for a request of ``prompt`` + ``asked`` tokens over ``context``."""
    if style == "old":
        message = (
            f"This model's maximum context length is {context} tokens. However, you requested "
            f"{prompt + asked} tokens ({prompt} in the messages, {asked} in the completion). "
            "Please reduce the length of the messages or completion."
        )
        return {
            "object": "error", "message": message, "type": "BadRequestError", "param": None,
            "code": 400,
        }  # fmt: skip
    if style == "v10":
        message = (
            f"'max_tokens' or 'max_completion_tokens' is too large: {asked}. This model's "
            f"maximum context length is {context} tokens and your request has {prompt} input "
            f"tokens ({asked} > {context} - {prompt})."
        )
        param = None
    else:
        message = (
            f"This model's maximum context length is {context} tokens. However, you requested "
            f"{asked} output tokens and your prompt contains {prompt} input tokens, for a total "
            f"of {prompt + asked} tokens. Please reduce the length of the input prompt or the "
            f"number of requested output tokens. (parameter=input_tokens, value={prompt})"
        )
        param = "input_tokens"
    return {"error": {"message": message, "type": "BadRequestError", "param": param, "code": 400}}


class OverflowServer:
    """POST /v1/completions and /v1/chat/completions, GET /v1/models; see the module doc."""

    def __init__(
        self,
        *,
        context_length: int = 2048,
        style: str = "v18",
        answer: Callable[[dict[str, Any]], str] | str = "search()",
        delay_s: float = 0.0,
        model: str = "x",
        port: int = 0,
    ) -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}")
        self.context_length, self.style, self.delay_s = context_length, style, delay_s
        self.answer = answer
        self.model, self.port = model, port
        self.refused = 0
        self.answered = 0
        self._stop: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def tokens(self, body: dict[str, Any]) -> int:
        return len(prompt_text(body).split())

    async def _generate(self, request: web.Request) -> web.Response:
        body = await request.json()
        prompt, asked = self.tokens(body), int(body.get("max_tokens") or 0)
        if prompt + asked > self.context_length:
            self.refused += 1
            refusal = vllm_refusal(self.style, self.context_length, prompt, asked)
            return web.json_response(refusal, status=400)
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        self.answered += 1
        text = self.answer(body) if callable(self.answer) else self.answer
        usage = {"prompt_tokens": prompt, "completion_tokens": len(text.split())}
        if "messages" in body:
            choice: dict[str, Any] = {"message": {"role": "assistant", "content": text}}
        else:
            choice = {"text": text}
        choice.update(index=0, finish_reason="stop")
        return web.json_response({"id": "x", "choices": [choice], "usage": usage})

    async def _models(self, _request: web.Request) -> web.Response:
        entry = {"id": self.model, "object": "model", "max_model_len": self.context_length}
        return web.json_response({"object": "list", "data": [entry]})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/completions", self._generate)
        app.router.add_post("/v1/chat/completions", self._generate)
        app.router.add_get("/v1/models", self._models)
        return app

    def listening_socket(self) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        return sock

    async def serve(self, sock: socket.socket, started: Callable[[], None]) -> None:
        stop = asyncio.Event()
        self._stop = (asyncio.get_running_loop(), stop)
        runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        await web.SockSite(runner, sock, backlog=1024).start()
        started()
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    def __enter__(self) -> OverflowServer:
        sock = self.listening_socket()
        ready = threading.Event()

        def run() -> None:
            with contextlib.suppress(BaseException):
                asyncio.run(self.serve(sock, ready.set))

        self._thread = threading.Thread(target=run, name="overflow-server", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("overflow server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None:
            loop, stop = self._stop
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout=10)


def main(argv: list[str] | None = None) -> None:
    """Serve in this process until killed; print ``port <n>`` once listening."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--context-length", type=int, default=1 << 20)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--answer", default="search()")
    args = parser.parse_args(argv)
    server = OverflowServer(
        context_length=args.context_length, delay_s=args.delay, answer=args.answer, port=args.port
    )
    sock = server.listening_socket()

    def started() -> None:
        print(f"port {server.port}", flush=True)

    asyncio.run(server.serve(sock, started))


if __name__ == "__main__":
    main(sys.argv[1:])
