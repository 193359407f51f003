"""One loopback HTTP server for all the worlds a run's agents reach at once.

An agent process reaches its sample's world over MCP's streamable HTTP at the address it is
handed (``$TOOLBENCH_MCP_URL``). Starting a server per sample would cost a port and a server
start each time; instead one uvicorn server per run listens on 127.0.0.1 (a free port the OS
picks), started lazily in the run's own event loop, and routes ``/mcp/<token>`` to the ASGI
app of the world registered under that token (``agents.mcp_server.served_over_http``). The
token is random and lives only while its attempt runs: an agent cannot reach another
sample's world by guessing, and a request after its attempt ended is answered 404. Agents in
an empty network namespace (``--agent-network none``) reach the same server through a Unix
socket the hub also listens on (``unix_path``), bound into their sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from toolbench.types import InfraError

if TYPE_CHECKING:
    import uvicorn

    from toolbench.core.agent import AgentWorld

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Where a world's app answers MCP requests, inside the app (the SDK's own default path).
INNER_PATH = "/mcp"
#: The URL path prefix of the hub's routes (a world's address is PREFIX + token).
PREFIX = "/mcp/"
#: Seconds the server waits for open connections when the run ends before closing them.
GRACEFUL_SHUTDOWN_S = 2


class Hub:
    """The run's one server of worlds (see module doc); ``close`` stops it."""

    def __init__(self, unix_path: str | None = None) -> None:
        self.unix_path = unix_path
        self._apps: dict[str, ASGIApp] = {}
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._port: int | None = None
        self._starting = asyncio.Lock()

    @property
    def live_tokens(self) -> int:
        """How many worlds are reachable now (for tests: none once their attempts ended)."""
        return len(self._apps)

    @contextlib.asynccontextmanager
    async def serving(self, world: AgentWorld, name: str) -> AsyncIterator[str]:
        """``world`` reachable at the URL this yields, for the block's duration."""
        # deferred: the MCP SDK is the optional extra toolbench[mcp]
        from toolbench.agents.mcp_server import served_over_http

        port = await self._start()
        async with served_over_http(world, name) as app:
            token = secrets.token_urlsafe(24)
            self._apps[token] = app
            try:
                yield f"http://127.0.0.1:{port}{PREFIX}{token}"
            finally:
                self._apps.pop(token, None)

    async def _start(self) -> int:
        """The server's port, starting it first if this is the run's first attempt."""
        async with self._starting:
            if self._port is not None:
                return self._port
            # deferred: uvicorn (~35 modules) only once a run serves agents over HTTP
            import uvicorn

            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", 0))  # the OS picks a free port; we know it before serving
            sockets = [sock]
            if self.unix_path is not None:
                sockets.append(_unix_socket(self.unix_path))
            config = uvicorn.Config(
                self,
                lifespan="off",  # each world's app runs its own lifespan (served_over_http)
                log_level="warning",
                access_log=False,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
            )
            server = _QuietServer(config)
            self._server = server
            self._task = asyncio.create_task(_serve(server, sockets))
            while not server.started:
                if self._task.done():
                    self._task.result()  # raises what stopped it
                    raise InfraError("the MCP hub stopped while starting")
                await asyncio.sleep(0.01)
            self._port = int(sock.getsockname()[1])
            return self._port

    async def close(self) -> None:
        """Stop the server (its worlds' attempts are over by now); idempotent."""
        server, task = self._server, self._task
        self._server, self._task, self._port = None, None, None
        self._apps.clear()
        if server is None or task is None:
            return
        server.should_exit = True
        with contextlib.suppress(Exception):
            await task

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Route ``/mcp/<token>[/...]`` to that world's app; anything else is a 404."""
        if scope["type"] != "http":
            return  # no websockets; lifespan is off
        path = str(scope.get("path", ""))
        app = None
        rest = ""
        if path.startswith(PREFIX):
            token, slash, tail = path[len(PREFIX) :].partition("/")
            app = self._apps.get(token)
            rest = slash + tail if tail else ""
        if app is None:
            await _not_found(send)
            return
        inner = dict(scope)
        inner["path"] = INNER_PATH + rest
        inner["raw_path"] = inner["path"].encode()
        inner["root_path"] = ""
        await app(inner, receive, send)


def _unix_socket(path: str) -> socket.socket:
    """A listening-to-be Unix socket at ``path`` (a folder only the harness's user enters)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    os.chmod(path, 0o666)  # the agent may run as another uid inside its user namespace
    return sock


async def _serve(server: uvicorn.Server, sockets: list[socket.socket]) -> None:
    try:
        await server.serve(sockets=sockets)
    except SystemExit as exc:  # uvicorn exits the process when it cannot start: not ours
        raise InfraError(f"the MCP hub could not start (exit {exc.code})") from None
    finally:
        for sock in sockets:
            sock.close()


async def _not_found(send: Send) -> None:
    body = b"no such world: its attempt has ended or never began\n"
    await send(
        {
            "type": "http.response.start",
            "status": 404,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _quiet_server_class() -> type[uvicorn.Server]:
    import uvicorn  # deferred: uvicorn (~35 modules) only once a run serves agents over HTTP

    class QuietServer(uvicorn.Server):
        """uvicorn's server without its signal handlers: Ctrl-C belongs to the run (which
        stops its samples and closes the hub), not to the hub."""

        @contextlib.contextmanager
        def capture_signals(self) -> Any:
            yield

    return QuietServer


def _QuietServer(config: uvicorn.Config) -> uvicorn.Server:
    return _quiet_server_class()(config)
