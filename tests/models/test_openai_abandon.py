"""A request that times out (or is cancelled, as Ctrl-C does) is abandoned with its
connection closed, so the server sees the client go and can abort the generation, instead of
computing answers nobody reads while retries pile more onto it."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator

import openai
import pytest
from aiohttp import web

from toolbench.models.base import ModelOptions
from toolbench.models.openai_compat import OpenAIModel
from toolbench.types import GenerationRequest

HANG_S = 60.0  # what a handler would take if nobody hung up


class HangingServer:
    """Answers after ``HANG_S`` (``partial``: sends the headers and half a body first);
    ``gone`` is set when a handler learns that its client disconnected (aiohttp cancels the
    handler then, with ``handler_cancellation``)."""

    def __init__(self, partial: bool) -> None:
        self.partial = partial
        self.gone = threading.Event()
        self.started = 0
        self.port = 0
        self._stop: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.started += 1
        try:
            if self.partial:
                response = web.StreamResponse(headers={"Content-Type": "application/json"})
                response.content_length = 1000
                await response.prepare(request)
                await response.write(b'{"choices": [')
                await asyncio.sleep(HANG_S)
                return response
            await asyncio.sleep(HANG_S)
            return web.json_response({"choices": [{"text": "late"}]})
        except asyncio.CancelledError:
            self.gone.set()
            raise

    async def serve(self, sock: socket.socket, ready: threading.Event) -> None:
        stop = asyncio.Event()
        self._stop = (asyncio.get_running_loop(), stop)
        app = web.Application()
        app.router.add_post("/v1/completions", self.handle)
        runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        ready.set()
        try:
            await stop.wait()
        finally:
            await runner.cleanup()


@contextlib.contextmanager
def hanging(partial: bool) -> Iterator[HangingServer]:
    server = HangingServer(partial)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server.port = sock.getsockname()[1]
    ready = threading.Event()
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sock, ready)), daemon=True, name="hanging"
    )
    thread.start()
    assert ready.wait(10)
    try:
        yield server
    finally:
        assert server._stop is not None
        loop, stop = server._stop
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)


@pytest.mark.parametrize("partial", [False, True], ids=["before-headers", "mid-body"])
async def test_a_timed_out_request_closes_its_connection(partial: bool) -> None:
    with hanging(partial) as server:
        model = OpenAIModel(
            "x", ModelOptions(base_url=f"http://127.0.0.1:{server.port}/v1", timeout_s=0.3)
        )
        with pytest.raises(openai.APITimeoutError):
            await model.generate(GenerationRequest(prompt="hi"))
        # The server learns of it long before its handler would have finished.
        seen = await asyncio.to_thread(server.gone.wait, HANG_S / 4)
        await model.aclose()
    assert seen and server.started == 1


async def test_a_cancelled_request_closes_its_connection() -> None:
    with hanging(partial=True) as server:
        model = OpenAIModel("x", ModelOptions(base_url=f"http://127.0.0.1:{server.port}/v1"))
        task = asyncio.create_task(model.generate(GenerationRequest(prompt="hi")))
        while server.started == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        seen = await asyncio.to_thread(server.gone.wait, HANG_S / 4)
        await model.aclose()
    assert seen
