"""The listening socket of a loopback server (``toolbench serve``, with or without ``--mcp``),
kept apart from the MCP server so serving a plain simulator needs no ``mcp`` extra, and
uvicorn serving on it with a stop that does not wait for its clients.

uvicorn's own shutdown waits for every request in flight (and, from Python 3.12, for every
open connection) to finish: a client that sends half a request and never the rest (a
slowloris, or 200 of them) keeps the process up after SIGTERM for as long as it likes.
``serve_until_cancelled`` drops them instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Iterator
from typing import Any

from toolbench.errors import UserError


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening socket, or a one-line ``UserError`` naming --host/--port and the fix
    (bound here first, so a taken port is one line, not uvicorn's exit, and ``--port 0``
    can say which port it got)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UserError(f"--host {host}: not an address of this machine; try 127.0.0.1") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise UserError(
                f"--port {port}: already in use; pick another (--port 0 picks a free one)"
            ) from None
        raise UserError(
            f"--host {host} --port {port}: cannot listen there ({exc.strerror})"
        ) from None
    sock.listen(128)  # connections made right after the announcement wait, not fail
    return sock


#: How long a cancelled ``serve_until_cancelled`` takes at most to stop serving.
STOP_S = 1.0


async def serve_until_cancelled(app: Any, sock: socket.socket) -> None:
    """Serve ``app`` with uvicorn on ``sock`` until cancelled; then stop within ``STOP_S``
    whatever the connections are doing: each is cut (a client half-way through its request
    gets no answer), each request still running is cancelled, and then the cancel goes on.

    uvicorn's signal handlers are left out (it would re-raise the signal after shutting down,
    killing the process before its caller is done): the caller decides what a signal does.
    Its log records go to the logging tree, not to a handler of its own, so the caller decides
    where they go too."""
    import uvicorn  # deferred: uvicorn (~35 modules) only where a server really serves

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    server = Server(uvicorn.Config(app, log_level="warning", log_config=None, lifespan="off"))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    except asyncio.CancelledError:
        await _stop_now(server, serving)
        raise
    finally:
        sock.close()


async def _stop_now(server: Any, serving: asyncio.Future[None]) -> None:
    """``uvicorn`` stopped at once, not through its graceful shutdown (which ticks, then waits for
    every request): no new connections, every open one cut, every request task cancelled,
    and the whole bounded by ``STOP_S``."""
    server.should_exit = server.force_exit = True
    for listener in getattr(server, "servers", ()):
        listener.close()
    for connection in list(server.server_state.connections):
        transport = getattr(connection, "transport", None)
        if transport is not None:
            transport.abort()
    requests = {task for task in server.server_state.tasks if not task.done()}
    serving.cancel()
    for task in requests:
        task.cancel()
    await asyncio.wait({serving, *requests}, timeout=STOP_S)
    if serving.done() and not serving.cancelled():
        serving.exception()  # retrieved: a failure while stopping is not the stop's business
