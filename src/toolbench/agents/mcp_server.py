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
import io
import logging
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError

from toolbench.agents.listen import serve_until_cancelled
from toolbench.core.agent import AgentWorld
from toolbench.core.bounded import bounded_text
from toolbench.errors import UserError
from toolbench.types import InfraError

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

#: The path ``serve_http`` answers on (the runner mounts its own paths).
MCP_PATH = "/mcp"
#: An MCP error's message as the client gets it (the harness's trouble, not the API's).
MAX_ERROR_CHARS = 2_000
#: The longest MCP message read from stdin (one JSON-RPC line): agent output is bounded.
MAX_STDIN_LINE = 16 * 1024 * 1024
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


class PendingWorld:
    """A world still being built, served at once: ``initialize`` is answered without it, and
    ``tools/list`` and ``tools/call`` wait for it. Building a sample's world executes its golds
    (seconds on a busy machine), and MCP clients give the handshake a deadline.

    ``ready`` resolves to the world, or raises why it could not be built: then every request
    that needs the world is an MCP error saying so in one line (the server lives on).
    ``wanted``, if given, is set by the first request that needs the world: a builder may
    wait for it (or a while) so as not to compete with the handshake for the CPU."""

    def __init__(self, ready: asyncio.Future[Any], wanted: asyncio.Event | None = None) -> None:
        self.ready, self.wanted = ready, wanted

    async def get(self) -> AgentWorld:
        if self.wanted is not None:
            self.wanted.set()
        # shielded: a request cancelled while it waits (its client went away) must not
        # cancel the build that every other request waits for too
        try:
            return await asyncio.shield(self.ready)
        except asyncio.CancelledError:
            if not self.ready.cancelled():
                raise  # this request was cancelled, not the build
            why = "the server is stopping"
        except Exception as exc:
            why = one_line(exc)
        raise MCPError(code=types.INTERNAL_ERROR, message=f"the world could not be built: {why}")


def one_line(exc: BaseException) -> str:
    """An exception as one bounded line (``Type: words``; a UserError is its words)."""
    words = " ".join(str(exc).split())
    text = words if isinstance(exc, UserError) else f"{type(exc).__name__}: {words}"
    return bounded_text(text.rstrip(": "), MAX_ERROR_CHARS)


def mcp_server(world: AgentWorld | PendingWorld, name: str) -> Server[Any]:
    """The MCP server of ``world``: its tools listed as they are, each call run on the world.

    Calls reach the world one at a time (an agent's parallel calls in the order they arrive),
    as ``RecordingWorld`` does for the runner, so a bare world served by the CLI behaves the
    same. The server holds nothing but the world: build one per world.
    """
    get_world: Callable[[], Awaitable[AgentWorld]]
    listed: list[types.Tool] = []
    if isinstance(world, PendingWorld):
        get_world = world.get
    else:
        get_world, listed = _ready(world), _listed(world)
    lock = asyncio.Lock()

    async def the_world() -> AgentWorld:
        built = await get_world()
        if not listed:  # a pending world's tools, once it is there
            listed.extend(_listed(built))
        return built

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await the_world()
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = params.arguments if params.arguments is not None else {}
        built = await the_world()
        async with lock:
            try:
                reply = await built.call(params.name, arguments)
            except Exception as exc:  # the harness's trouble: an MCP error, the server lives on
                raise _harness_error(params.name, exc) from None
        return types.CallToolResult(
            content=[types.TextContent(text=reply.text)], is_error=reply.is_error
        )

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


def _ready(world: AgentWorld) -> Callable[[], Awaitable[AgentWorld]]:
    async def ready() -> AgentWorld:
        return world

    return ready


def _listed(world: AgentWorld) -> list[types.Tool]:
    return [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema={"type": "object", **spec.input_schema},  # MCP requires the type
        )
        for spec in world.tools
    ]


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
    world: AgentWorld | PendingWorld, name: str, host: str = "127.0.0.1"
) -> AsyncIterator[ASGIApp]:
    """The world's streamable-HTTP MCP endpoint as an ASGI app, live inside the block.

    The app answers on whatever path it is mounted at; it has no port of its own and keeps
    its sessions in its own session manager, so many can be mounted in one server and one
    event loop. Leaving the block ends every session (the world itself is the caller's).
    """
    # deferred: the streamable HTTP transport's only
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(
        app=mcp_server(world, name),
        json_response=True,
        security_settings=_security(host),
        session_idle_timeout=None,
    )

    async with manager.run():
        yield _Endpoint(manager)


#: The largest HTTP request body an agent may send (a tool call's JSON); larger is refused.
MAX_REQUEST_BYTES = 4_000_000
#: How much more of a refused body is read (and dropped) before the 413 is sent: a client
#: still sending when the server closes gets a reset, not the answer.
MAX_DRAIN_BYTES = 16_000_000


class _Gone(Exception):
    """The client went away before its request was read whole."""


class _Endpoint:
    """The session manager as a plain ASGI app. An object, not a function: Starlette's
    ``Route`` would take a function for a request handler (GET only) and answer POST 405."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The body is read here, whole and at most ``MAX_REQUEST_BYTES`` (else 413, declared
        or chunked), before the SDK sees it: what an agent sends is hostile, and the SDK
        would hold a body of any size. A client gone mid-request, or a stop that cancels
        the request, ends it quietly: neither is the server's failure, and uvicorn would
        print a traceback for it."""
        from starlette.requests import ClientDisconnect  # deferred: the HTTP transport's only

        try:
            body = await _read_body(receive, _declared_length(scope))
            if body is None:
                await _too_large(send)
                return
            await self.manager.handle_request(scope, _replayed(body, receive), send)
        except (_Gone, ClientDisconnect, asyncio.CancelledError):
            return


def _declared_length(scope: Scope) -> int:
    for key, value in scope.get("headers") or ():
        if key.lower() == b"content-length":
            with contextlib.suppress(ValueError):
                return int(value)
    return 0


async def _read_body(receive: Receive, declared: int) -> bytes | None:
    """The request's body, or None when it is over ``MAX_REQUEST_BYTES`` (its length declared
    or not); the rest of a refused body is read and dropped, up to ``MAX_DRAIN_BYTES``, so
    the client is done sending when the 413 comes."""
    parts: list[bytes] = []
    seen = 0
    refused = declared > MAX_REQUEST_BYTES
    if declared > MAX_REQUEST_BYTES + MAX_DRAIN_BYTES:
        return None  # not worth reading: answered at once
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone
        if message["type"] != "http.request":
            continue
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > MAX_REQUEST_BYTES and not refused:
            refused, parts = True, []
        if not refused:
            parts.append(chunk)
        if not message.get("more_body", False) or seen > MAX_REQUEST_BYTES + MAX_DRAIN_BYTES:
            return None if refused else b"".join(parts)


def _replayed(body: bytes, receive: Receive) -> Receive:
    """``receive`` for the SDK: the body read already, as one message, then the client's own
    ``receive`` (which tells of a disconnect)."""
    given = False

    async def replay() -> Any:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


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


async def serve_stdio(world: AgentWorld | PendingWorld, name: str, wire: int | None = None) -> None:
    """Serve the world on this process's stdin/stdout until stdin ends.

    ``wire``: a descriptor of the real stdout that the caller took before pointing fd 1 at
    stderr (so that nothing printed, by a task being built on another thread say, reaches
    the session); without it the SDK does the same while it serves.

    stdin is read by the event loop where it is a pipe, so cancelling the serving (a signal)
    ends it at once; the SDK's own reader blocks in a thread that nothing can interrupt, and
    is used only where stdin is a regular file (which ends by itself)."""
    from mcp.server.stdio import stdio_server  # deferred: the stdio transport's only

    server = mcp_server(world, name)
    async with (
        _stdin_lines() as lines,
        _wire_out(wire) as out,
        stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream),
    ):
        await server.run(read_stream, write_stream, server.create_initialization_options())


@contextlib.asynccontextmanager
async def _wire_out(wire: int | None) -> AsyncIterator[Any]:
    """The session's stdout as the SDK writes it (UTF-8 text on ``wire``), or None."""
    if wire is None:
        yield None
        return
    import anyio  # deferred: the stdio transport's only

    text = io.TextIOWrapper(open(wire, "wb", closefd=False), encoding="utf-8")  # noqa: SIM115
    try:
        yield anyio.wrap_file(text)
    finally:
        with contextlib.suppress(OSError, ValueError):  # a reader gone: nothing to flush to
            text.close()


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
    """``stdin`` as ``_PipeLines`` over a duplicate of fd 0, or None (the SDK's reader) where the
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
    world: AgentWorld | PendingWorld,
    name: str,
    host: str,
    sock: socket.socket,
    announce: Callable[[str], None],
) -> None:
    """Serve the world over streamable HTTP at ``http://HOST:PORT/mcp`` on ``sock`` (bound
    by the caller, so a taken port is refused before anything is served) until cancelled.

    A cancel stops it within ``listen.STOP_S`` whatever its connections are doing (see
    ``listen.serve_until_cancelled``); signals are the caller's to handle."""
    # deferred: the HTTP transport's only (Starlette app)
    from starlette.applications import Starlette
    from starlette.routing import Route  # deferred: the HTTP transport's only (Starlette app)

    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    async with served_over_http(world, name, host) as endpoint:
        app = Starlette(routes=[Route(MCP_PATH, endpoint=endpoint)])
        announce(f"http://{shown}:{port}{MCP_PATH}")
        await serve_until_cancelled(app, sock)
