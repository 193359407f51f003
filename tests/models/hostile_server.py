"""A hostile OpenAI-compatible server on 127.0.0.1: raw HTTP/1.1 on asyncio, in a thread.

Each POST is answered by ``post`` (an ``Answer``: a coroutine that writes the whole response
itself, so it can send what no framework would: a gigabyte without Content-Length, a gzip bomb,
a byte a second, a redirect). ``GET /v1/models`` gets a normal listing unless ``models`` says
otherwise. Bodies are generated as they are sent, never built in memory. The server stops when
its ``with`` block ends, and in any case ``LIFETIME_S`` after it started, so a test that fails
never leaves it running.

``requests`` records (method, path, started, ended) per request, ``ended`` when the answer was
written or the client went away (``time.monotonic``): what a test of deadlines measures.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Seconds after which the server stops by itself.
LIFETIME_S = 120.0
GIGABYTE = 1 << 30
CHUNK = 1 << 16
#: How a chat reply whose content is the rest of a huge body begins.
REPLY_HEAD = b'{"choices":[{"message":{"role":"assistant","content":"'

Writer = asyncio.StreamWriter
Answer = Callable[[asyncio.StreamReader, Writer], Awaitable[None]]


@dataclass
class Seen:
    method: str
    path: str
    started: float
    ended: float | None = None


def chat_reply(message: Any) -> dict[str, Any]:
    """A chat completion whose ``message`` is anything (the shapes a test sends)."""
    return {
        "id": "x",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1},
    }


def head(status: int, headers: dict[str, str] | None = None) -> bytes:
    fields = [f"{name}: {value}" for name, value in (headers or {}).items()]
    lines = [f"HTTP/1.1 {status} X", "Connection: close", *fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def send_json(value: Any, status: int = 200) -> Answer:
    """Answer with ``value`` as JSON (``bytes``: sent as they are)."""
    body = value if isinstance(value, bytes) else json.dumps(value).encode()

    async def answer(_reader: asyncio.StreamReader, writer: Writer) -> None:
        length = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        writer.write(head(status, length) + body)
        await writer.drain()

    return answer


def send_flood(
    total: int = GIGABYTE, status: int = 200, gzip: bool = False, first: bytes = REPLY_HEAD
) -> Answer:
    """Answer with ``first`` and then spaces, ``total`` bytes in all, with no Content-Length
    (the end is the connection's close); ``gzip``: compressed, ~1 KB per MB it expands to."""

    async def answer(_reader: asyncio.StreamReader, writer: Writer) -> None:
        headers = {"Content-Type": "application/json"}
        if gzip:
            headers["Content-Encoding"] = "gzip"
        writer.write(head(status, headers))
        for piece in (gzip_stream if gzip else plain_stream)(first, total):
            writer.write(piece)
            await writer.drain()  # raises once the client has gone: the flood stops

    return answer


def plain_stream(first: bytes, total: int) -> Iterator[bytes]:
    yield first
    block = b" " * CHUNK
    for _ in range((total - len(first)) // CHUNK):
        yield block


def gzip_stream(first: bytes, total: int) -> Iterator[bytes]:
    """A gzip stream of ``first`` + spaces, ``total`` bytes once decompressed, made of one
    compressed megabyte repeated: after a full flush the compressor starts afresh, so the same
    input gives the same bytes. (The trailer's CRC is not that of the data: no client that
    bounds its reading gets that far.)"""
    megabyte = b" " * (1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    yield compressor.compress(first) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(megabyte) + compressor.flush(zlib.Z_FULL_FLUSH)
    for _ in range(total // len(megabyte)):
        yield block
    yield compressor.flush()


def send_drip(length: int = 10_000, every_s: float = 1.0) -> Answer:
    """Headers at once, then one byte of the body every ``every_s`` until the client leaves."""

    async def answer(reader: asyncio.StreamReader, writer: Writer) -> None:
        writer.write(head(200, {"Content-Length": str(length)}) + REPLY_HEAD[:1])
        await writer.drain()
        for byte in REPLY_HEAD[1:] + b" " * length:
            with contextlib.suppress(asyncio.TimeoutError):
                if await asyncio.wait_for(reader.read(1), every_s) == b"":
                    return  # the client closed the connection
            writer.write(bytes([byte]))
            await writer.drain()

    return answer


def send_redirect(location: str, status: int = 307) -> Answer:
    async def answer(_reader: asyncio.StreamReader, writer: Writer) -> None:
        writer.write(head(status, {"Location": location, "Content-Length": "0"}))
        await writer.drain()

    return answer


LISTING = {"object": "list", "data": [{"id": "x", "object": "model", "max_model_len": 8192}]}


class HostileServer:
    """See the module doc. ``post`` may also be a list: the n-th POST gets ``post[n % len]``."""

    def __init__(self, post: Answer | list[Answer], models: Answer | None = None) -> None:
        self.post = post if isinstance(post, list) else [post]
        self.models = models or send_json(LISTING)
        self.requests: list[Seen] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def posts(self) -> list[Seen]:
        return [seen for seen in self.requests if seen.method == "POST"]

    async def _handle(self, reader: asyncio.StreamReader, writer: Writer) -> None:
        """One request per connection (every answer says ``Connection: close``)."""
        with contextlib.suppress(Exception):
            request = await reader.readuntil(b"\r\n\r\n")
            lines = request.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = next(
                (int(v) for k, _, v in (line.partition(":") for line in lines[1:])
                 if k.strip().lower() == "content-length"), 0,
            )  # fmt: skip
            await reader.readexactly(length)
            seen = Seen(method, path, time.monotonic())
            self.requests.append(seen)
            if method == "GET":
                answer = self.models
            elif path.endswith("completions"):
                answer = self.post[(len(self.posts) - 1) % len(self.post)]
            else:
                answer = send_json({"error": "not found"}, 404)
            try:
                await answer(reader, writer)
            finally:
                seen.ended = time.monotonic()
        writer.close()

    async def _serve(self, sock: socket.socket, started: threading.Event) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        server = await asyncio.start_server(self._handle, sock=sock)
        started.set()
        async with server:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), LIFETIME_S)

    def __enter__(self) -> HostileServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        started = threading.Event()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._serve(sock, started)), daemon=True
        )
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("hostile server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)
