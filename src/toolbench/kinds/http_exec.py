"""Sending a parsed curl request to a simulated service (in-process) or, opt-in, the live API.

Simulated: one httpx client over an ASGI transport per event loop; the world of each execution
travels in a context variable and is injected into the ASGI scope, so concurrent executions
never share state and no socket is opened. Live: the same parsed request over the network, with
the user's key, backoff on 429/5xx, and responses cached in SQLite (answers change by the hour,
and rate limits are tight). Neither path ever involves a shell.

Model output is hostile, so neither executor lets an exception about one request escape: a
request httpx cannot build is a ``CurlError`` (the model's line was unsendable), and anything a
simulated app raises becomes a 500 result naming the exception type. Both end as that sample's
``model_error`` in the task; the run goes on. Simulators validate their inputs too (400s in
each API's own shape); this is the backstop for whatever they miss.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import json
import random
import sqlite3
import threading
import xml.etree.ElementTree as ET
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import httpx

from toolbench.kinds.service import SimulatedService
from toolbench.sandbox.curl import CurlError, HttpRequest
from toolbench.types import InfraError

_WORLD: contextvars.ContextVar[Any] = contextvars.ContextVar("toolbench_world")
ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


@dataclass(frozen=True)
class HttpResult:
    status: int
    body: Any  # parsed JSON, or the text (XML, HTML, plain)
    content_type: str
    state: Any = None  # the world's mutable state after the call (simulated services only)


def bind_world(app: ASGIApp, world: Callable[[], Any] = _WORLD.get) -> ASGIApp:
    """An ASGI app that hands ``world()`` to handlers as ``request.state.world``."""

    async def bound(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") in ("http", "websocket"):
            scope = {**scope, "state": {**scope.get("state", {}), "world": world()}}
        await app(scope, receive, send)

    return bound


def serving_app(service: SimulatedService) -> ASGIApp:
    """The service as a standalone app with one long-lived world (state persists across calls,
    like a real account), for ``toolbench serve``."""
    world = service.new_state({})
    return bind_world(service.app, lambda: world)


def decode_body(response: httpx.Response) -> tuple[Any, str]:
    """(parsed JSON or text, content type); never raises, since a live body is untrusted too."""
    content_type = response.headers.get("content-type", "").split(";")[0].strip()
    text = response.text
    if "json" in content_type or text[:1] in ("{", "["):
        try:
            return json.loads(text), content_type
        except (ValueError, RecursionError):  # bad JSON, >4300-digit ints, deep nesting
            pass
    return text, content_type


def one_line(text: str, limit: int = 200) -> str:
    """``text`` as one short printable line, safe to show and store: whitespace runs become
    one space, other non-printables (NUL, bidi controls, lone surrogates) are escaped. Error
    texts often echo hostile input back."""
    text = " ".join(text[: limit * 4].split())[:limit]
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def brief_error(exc: BaseException, limit: int = 160) -> str:
    """``Type: message`` on one short line (see ``one_line``)."""
    text = one_line(str(exc), limit)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def build_request(
    client: httpx.AsyncClient, request: HttpRequest, extra: tuple[tuple[str, str], ...] = ()
) -> httpx.Request:
    """The httpx request for ``request``; ``CurlError`` if httpx refuses to build it (a URL
    over its length cap, a header it cannot encode): the model's line was unsendable."""
    try:
        return client.build_request(
            request.method,
            request.url(),
            headers=[*request.headers, *extra],
            content=request.body,
        )
    except Exception as exc:  # httpx raises InvalidURL, UnicodeEncodeError, TypeError, ...
        raise CurlError(f"request cannot be sent ({brief_error(exc)})") from exc


class SimulatedExecutor:
    """Executes requests against fresh worlds of one simulated service."""

    def __init__(self, service: SimulatedService, memo_size: int = 4096) -> None:
        self.service = service
        self._app = bind_world(service.app)
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        # A service whose worlds have no mutable state answers as a pure function of the
        # request and the sample's fields, so identical requests (a gold and a correct
        # prediction, or epochs) are answered once. Stateful services always execute.
        self._stateless = service.snapshot(service.new_state({})) is None
        self._memo: OrderedDict[str, HttpResult] = OrderedDict()
        self._memo_size = memo_size

    def _client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            transport = httpx.ASGITransport(app=cast(Any, self._app))
            client = httpx.AsyncClient(transport=transport, trust_env=False)
            self._clients = {loop: client}  # a finished loop's client is dropped with it
        return client

    async def execute(self, request: HttpRequest, fields: Mapping[str, Any]) -> HttpResult:
        if not self._stateless:
            return await self._execute(request, fields)
        key = json.dumps(
            [request.method, request.url(), request.headers, (request.body or b"").hex(), fields],
            sort_keys=True,
            default=str,
        )
        found = self._memo.get(key)
        if found is None:
            found = await self._execute(request, fields)
            self._memo[key] = found
            if len(self._memo) > self._memo_size:
                self._memo.popitem(last=False)
        return found

    async def _execute(self, request: HttpRequest, fields: Mapping[str, Any]) -> HttpResult:
        """One request on a fresh world."""
        return await self.execute_in(request, self.service.new_state(fields))

    async def execute_in(self, request: HttpRequest, state: Any) -> HttpResult:
        """One request on ``state``, a world that outlives it (an agent's world takes many
        calls; never memoised). Whatever the simulated app raises (a bug a hostile request
        found) is this request's 500, naming the exception, never the caller's."""
        client = self._client()
        built = build_request(client, request)
        token = _WORLD.set(state)
        try:
            response = await client.send(built)
        except Exception as exc:
            message = f"the simulated API failed on this request ({brief_error(exc)})"
            return HttpResult(500, {"message": message}, "application/json")
        finally:
            _WORLD.reset(token)
        body, content_type = decode_body(response)
        return HttpResult(response.status_code, body, content_type, self.service.snapshot(state))


class LiveExecutor:
    """Executes requests against the real API, with backoff and an SQLite response cache."""

    def __init__(
        self,
        extra_headers: tuple[tuple[str, str], ...],
        cache_path: Path | None,
        max_retries: int = 5,
        timeout_s: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._headers = extra_headers
        self._max_retries = max_retries
        self._timeout = timeout_s
        self._transport = transport
        self._sleep = sleep
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if cache_path is not None:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(cache_path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS live (key TEXT PRIMARY KEY, value TEXT)")
        self.calls = 0

    def _key(self, request: HttpRequest) -> str:
        material = [request.method, request.url(), (request.body or b"").decode("utf-8", "replace")]
        return hashlib.sha256(json.dumps(material).encode()).hexdigest()

    async def execute(self, request: HttpRequest, fields: Mapping[str, Any]) -> HttpResult:
        key = self._key(request)
        if self._db is not None:
            with self._lock:
                row = self._db.execute("SELECT value FROM live WHERE key = ?", (key,)).fetchone()
            if row is not None:
                status, body, content_type = json.loads(row[0])
                return HttpResult(status, body, content_type)
        response = await self._send(request)
        body, content_type = decode_body(response)
        if self._db is not None and response.status_code < 500:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO live VALUES (?, ?)",
                    (key, json.dumps([response.status_code, body, content_type])),
                )
        return HttpResult(response.status_code, body, content_type)

    async def _send(self, request: HttpRequest) -> httpx.Response:
        async with httpx.AsyncClient(timeout=self._timeout, transport=self._transport) as client:
            built = build_request(client, request, self._headers)
            for attempt in range(self._max_retries + 1):
                try:
                    self.calls += 1
                    response = await client.send(built)
                except httpx.TransportError as exc:
                    if attempt == self._max_retries:
                        raise InfraError(f"live {request.host}: {type(exc).__name__}") from exc
                    await self._sleep(_backoff(attempt, None))
                    continue
                if response.status_code == 429 or response.status_code >= 500:
                    if attempt == self._max_retries:
                        raise InfraError(
                            f"live {request.host}: HTTP {response.status_code} after "
                            f"{attempt + 1} attempts"
                        )
                    await self._sleep(_backoff(attempt, response.headers.get("retry-after")))
                    continue
                return response
        raise InfraError(f"live {request.host}: no response")  # unreachable


def _backoff(attempt: int, retry_after: str | None) -> float:
    if retry_after is not None:
        try:
            return min(float(retry_after), 60.0)
        except ValueError:
            pass
    return random.uniform(0, min(30.0, 0.5 * 2**attempt))


def response_view(body: Any, drop_keys: tuple[str, ...] = ()) -> dict[Any, Any]:
    """A response as the flat dict the original compared key by key.

    JSON objects keep their top-level keys (minus ``drop_keys``, e.g. a created resource's id);
    lists become index -> item; XML becomes element path -> text/attributes; other text is one
    value.
    """
    if isinstance(body, dict):
        return {k: v for k, v in body.items() if k not in drop_keys}
    if isinstance(body, list):
        return dict(enumerate(body))
    if isinstance(body, str) and body.lstrip().startswith("<"):
        try:
            return _flatten_xml(ET.fromstring(body))
        except ET.ParseError:
            pass
    return {"text": body}


def _flatten_xml(root: ET.Element) -> dict[Any, Any]:
    flat: dict[Any, Any] = {}
    counts: dict[str, int] = {}

    def walk(element: ET.Element, path: str) -> None:
        counts[path] = counts.get(path, 0) + 1
        here = f"{path}[{counts[path]}]"
        if element.attrib:
            flat[here + "@"] = dict(sorted(element.attrib.items()))
        if element.text and element.text.strip():
            flat[here] = element.text.strip()
        for child in element:
            walk(child, f"{here}/{child.tag}")

    walk(root, root.tag)
    return flat


#: What a curl task's load holds (``TaskData[HttpExecutor].runtime``): the simulated service,
#: or with --live the real API.
HttpExecutor = SimulatedExecutor | LiveExecutor
