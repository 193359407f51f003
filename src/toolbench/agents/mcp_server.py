"""One sample's world served as MCP tools, with the official SDK (``mcp``), over stdio or
streamable HTTP.

The server is a thin door onto ``AgentWorld``: ``tools/list`` is ``world.tools`` and
``tools/call`` is ``world.call``, whose reply (an API error included, in the API's own words)
is the tool result. Arguments are not checked against the schema here: the world answers bad
arguments itself, as the real API would, so the agent reads the same words a model's program
reads. Only the harness's own trouble (``InfraError``, a sandbox failure) becomes an MCP error
response, and it never stops the server.

``served_over_http`` gives the world's endpoint as an ASGI app with no port and no global
state, so the runner can mount one per sample under one loopback server in its own loop;
``serve_stdio`` and ``serve_http`` are the whole-process servers of ``toolbench serve --mcp``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from toolbench.agents.listen import listening_socket
from toolbench.core.agent import AgentWorld
from toolbench.core.bounded import bounded_text
from toolbench.types import InfraError

logger = logging.getLogger(__name__)

#: The path ``serve_http`` answers on (the runner mounts its own paths).
MCP_PATH = "/mcp"
#: An MCP error's message as the client gets it (the harness's trouble, not the API's).
MAX_ERROR_CHARS = 2_000
#: The longest MCP message read from stdin (one JSON-RPC line): agent output is bounded.
MAX_STDIN_LINE = 16 * 1024 * 1024
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def mcp_server(world: AgentWorld, name: str) -> Server[Any]:
    """The MCP server of ``world``: its tools listed as they are, each call run on the world.

    Calls reach the world one at a time (an agent's parallel calls in the order they arrive),
    as ``RecordingWorld`` does for the runner, so a bare world served by the CLI behaves the
    same. The server holds nothing but the world: build one per world.
    """
    listed = [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema={"type": "object", **spec.input_schema},  # MCP requires the type
        )
        for spec in world.tools
    ]
    lock = asyncio.Lock()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = params.arguments if params.arguments is not None else {}
        async with lock:
            try:
                reply = await world.call(params.name, arguments)
            except Exception as exc:  # the harness's trouble: an MCP error, the server lives on
                raise _harness_error(params.name, exc) from None
        return types.CallToolResult(
            content=[types.TextContent(text=reply.text)], is_error=reply.is_error
        )

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


def _harness_error(tool: str, exc: Exception) -> MCPError:
    """An MCP error response for a call the harness could not run (not the agent's fault)."""
    if not isinstance(exc, InfraError | RuntimeError | OSError):
        logger.exception("tool %r raised unexpectedly", tool)
    words = bounded_text(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS)
    return MCPError(code=types.INTERNAL_ERROR, message=f"the harness could not run {tool}: {words}")


def _security(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a loopback server (a web page in the user's browser must
    not drive the world); a server bound elsewhere on purpose accepts any Host header."""
    if host not in _LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


@contextlib.asynccontextmanager
async def served_over_http(
    world: AgentWorld, name: str, host: str = "127.0.0.1"
) -> AsyncIterator[ASGIApp]:
    """The world's streamable-HTTP MCP endpoint as an ASGI app, live inside the block.

    The app answers on whatever path it is mounted at; it has no port of its own and keeps
    its sessions in its own session manager, so many can be mounted in one server and one
    event loop. Leaving the block ends every session (the world itself is the caller's).
    """
    manager = StreamableHTTPSessionManager(
        app=mcp_server(world, name),
        json_response=True,
        security_settings=_security(host),
        session_idle_timeout=None,
    )

    async with manager.run():
        yield _Endpoint(manager)


class _Endpoint:
    """The session manager as a plain ASGI app. An object, not a function: Starlette's
    ``Route`` would take a function for a request handler (GET only) and answer POST 405."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Requests over ``MAX_REQUEST_BYTES`` are refused (413) before the SDK reads them:
        what an agent sends is hostile, and the SDK would hold a body of any size."""
        if _declared_length(scope) > MAX_REQUEST_BYTES:
            await _too_large(send)
            return
        await self.manager.handle_request(scope, _capped(receive), send)


#: The largest HTTP request body an agent may send (a tool call's JSON); larger is refused.
MAX_REQUEST_BYTES = 4_000_000


def _declared_length(scope: Scope) -> int:
    for key, value in scope.get("headers") or ():
        if key.lower() == b"content-length":
            with contextlib.suppress(ValueError):
                return int(value)
    return 0


def _capped(receive: Receive) -> Receive:
    """``receive`` that ends the request (as a client that went away) once its body passes
    ``MAX_REQUEST_BYTES``: a chunked body has no length to refuse up front."""
    seen = 0

    async def capped() -> Any:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_REQUEST_BYTES:
                return {"type": "http.disconnect"}
        return message

    return capped


async def _too_large(send: Send) -> None:
    body = f"a request body may be at most {MAX_REQUEST_BYTES:,} bytes\n".encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"text/plain; charset=utf-8")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def serve_stdio(world: AgentWorld, name: str) -> None:
    """Serve the world on this process's stdin/stdout until stdin ends (nothing else may be
    written to stdout meanwhile; the SDK points fd 1 at stderr while it serves).

    stdin is read by the event loop where it is a pipe, so cancelling the serving (a signal)
    ends it at once; the SDK's own reader blocks in a thread that nothing can interrupt, and
    is used only where stdin is a regular file (which ends by itself)."""
    from mcp.server.stdio import stdio_server

    server = mcp_server(world, name)
    async with _stdin_lines() as lines, stdio_server(stdin=lines) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class _PipeLines:
    """stdin's lines as text, read by the event loop (what the SDK's stdio reader iterates)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self.reader.readline()
        except ValueError:  # a line over MAX_STDIN_LINE: the session ends, as at EOF
            logger.error("an MCP message on stdin is over %d bytes; stopping", MAX_STDIN_LINE)
            raise StopAsyncIteration from None
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


@contextlib.asynccontextmanager
async def _stdin_lines() -> AsyncIterator[Any]:
    """stdin as ``_PipeLines`` over a duplicate of fd 0, or None (the SDK's reader) where the
    loop cannot watch it."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_STDIN_LINE)
    pipe = os.fdopen(os.dup(0), "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
    except (ValueError, OSError):  # a regular file, say: not a pipe the loop can watch
        pipe.close()
        yield None
        return
    try:
        yield _PipeLines(reader)
    finally:
        transport.close()
        with contextlib.suppress(OSError):  # the loop made the shared description non-blocking
            os.set_blocking(0, True)


async def serve_http(
    world: AgentWorld,
    name: str,
    host: str,
    port: int,
    announce: Callable[[str], None],
    started: Callable[[Any], None] | None = None,
) -> None:
    """Serve the world over streamable HTTP at ``http://HOST:PORT/mcp`` with uvicorn until
    the server is told to stop (``started`` gets the uvicorn server: set ``should_exit``).

    uvicorn's own signal handling is left out (it re-raises the signal after shutting down,
    which would kill the process before the caller judges the world): the caller decides
    what a signal does."""
    sock = listening_socket(host, port)
    actual = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    async with served_over_http(world, name, host) as endpoint:
        app = Starlette(routes=[Route(MCP_PATH, endpoint=endpoint)])
        server = _QuietServer(uvicorn.Config(app, log_level="warning", lifespan="off"))
        if started is not None:
            started(server)
        announce(f"http://{shown}:{actual}{MCP_PATH}")
        try:
            await server.serve(sockets=[sock])
        finally:
            sock.close()


class _QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers (see ``serve_http``)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
