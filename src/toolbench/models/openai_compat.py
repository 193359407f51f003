"""A model served over the OpenAI HTTP API: OpenAI itself or any compatible server.

vLLM, SGLang, TGI, Ollama and llama.cpp all speak this API, so one backend covers them through
``base_url``. The SDK's own retries are switched off: ``RetryingModel`` owns retrying so that
every backend gets the same policy, the same attempt accounting and the same ``InfraError``.

The official SDK decides everything about a request except its transport: the URL (base URL,
``OPENAI_BASE_URL``), the headers (auth, user agent, platform headers), and the exceptions a
failure raises (``openai.APIStatusError`` subclasses built by the SDK from the response,
``APIConnectionError``, ``APITimeoutError``), so ``RetryingModel`` sees exactly what the SDK
would raise. The bytes go over one ``aiohttp`` session per event loop, because the SDK's own
request path (option models, ``httpx2`` request and URL objects, its aiohttp adapter) costs
~1.2 ms of CPU per request on this class of machine, which alone caps a 2-core run at
``--concurrency 128`` against a 200 ms server well below its 640 answers/s; the direct path
costs ~0.3 ms.

Everything the server sends is bounded (``models.replies``), so that no server can cost the run
more than one sample: a body is read incrementally and decompressed here, at most
``--max-response-bytes`` of it (received and decompressed; over it, a success reply is the
sample's ``InfraError``, an error status's body is cut at ``ERROR_BODY_BYTES``, a listing is
ignored); each attempt ends within ``--timeout`` however slowly the bytes drip (aiohttp's
``total`` deadline, which covers reading the body); JSON is parsed within a depth and a value
count; a reply of the wrong shape is one line naming the field. Redirects are not followed: a
3xx would send the prompt to a server nobody named, so it is the sample's ``InfraError`` naming
its ``Location`` (give the final URL as ``--base-url``). All of these are ``InfraError``, not
``model_error``: the server broke the protocol, the model did nothing wrong, so the sample is
left out of the score and run again on resume.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from typing import Any

import aiohttp
import httpx2
import openai
from multidict import CIMultiDict
from openai import AsyncOpenAI
from openai._models import FinalRequestOptions

from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.models.endpoints import EndpointPool, NotAnAPI, Unreachable
from toolbench.models.openai_setup import OpenAIArgs
from toolbench.models.replies import (
    ACCEPT_ENCODING,
    BadReply,
    context_length_of,
    not_served,
    parse_json,
    read_body,
    read_reply,
    shown,
    too_large,
)
from toolbench.types import Generation, GenerationRequest, InfraError
from toolbench.types import _plain as plain

#: The completions and chat APIs reject more than four stop sequences.
MAX_STOP_SEQUENCES = 4
#: Open connections per model (the SDK's own default). ``--concurrency`` bounds the requests in
#: flight, so this is only a ceiling; aiohttp's default of 100 would queue ``--concurrency 128``.
MAX_CONNECTIONS = 1000
#: The most of a ``GET /models`` answer that is read (a listing is a few KB).
MAX_LISTING_BYTES = 1 << 20
#: The paths ``preflight`` checks are served (a POST without a body; either one will do).
API_PATHS = ("/chat/completions", "/completions")
#: The most of a check's answer to a POST that is read (its start tells JSON from a page).
PROBE_BYTES = 4096
#: The most of an error status's body that is read: only its message is used (the overflow
#: check reads its first 16 KB), and the retry layer splits the message into words.
ERROR_BODY_BYTES = 64 * 1024
#: Headers of an error reply not handed on with its body: the body is already decoded here.
_BODY_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
#: Compact JSON, one encoder for all requests (``json.dumps`` with options builds one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def resolve_api_key(options: ModelOptions) -> str:
    """The key to send: explicit option, then the environment, then a dummy for local servers.

    Local OpenAI-compatible servers ignore the key but the SDK insists on one, so a base URL
    without a key gets ``"EMPTY"`` (the vLLM convention) instead of an error.
    """
    key = options.api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if options.base_url:
        return "EMPTY"
    raise UserError("set OPENAI_API_KEY or pass --api-key")


def _encode(body: dict[str, Any]) -> bytes:
    """The compact JSON of a request body, byte for byte that of its plain form (mappings as
    dicts, tuples as lists: ``GenerationRequest.plain_messages``).

    A chat's messages are nearly always plain dicts already, and the encoder writes a tuple as
    a list and a dict subclass as a dict, so they are encoded as they are; only when the
    encoder refuses something (a mapping that is not a dict) is the body made plain first.
    Making a transcript plain costs a Python call per message and field on every turn, which
    would make each turn of a long episode dearer than a single-turn call.
    """
    try:
        return _ENCODER.encode(body).encode()
    except (TypeError, ValueError):  # retried in plain form; what that cannot encode either raises
        return _ENCODER.encode(_plain_body(body)).encode()


def _plain_body(body: dict[str, Any]) -> dict[str, Any]:
    if body.get("messages") is None:
        return body
    return {**body, "messages": [plain(message) for message in body["messages"]]}


def _cause(error: BaseException) -> str:
    """What went wrong underneath, in a few words ("Connection refused", "Name or service not
    known"), for messages that must say which kind of failure it was."""
    inner = getattr(error, "os_error", None) or error.__cause__ or error
    code = getattr(inner, "errno", None)
    if isinstance(code, int) and code > 0:
        return os.strerror(code)  # "Connection refused", not "Connect call failed (...)"
    text = getattr(inner, "strerror", None) or str(inner) or type(inner).__name__
    return " ".join(str(text).split())[:200]


class OpenAIModel:
    """Chat or completion requests against one model name on one endpoint; with several
    (``options.base_urls``), a ``PooledOpenAIModel`` over one of these per endpoint."""

    cacheable = True

    def __new__(cls, model: str = "", options: ModelOptions | None = None) -> OpenAIModel:
        if cls is OpenAIModel and options is not None and len(options.base_urls) > 1:
            return super().__new__(PooledOpenAIModel)
        return super().__new__(cls)

    def __init__(self, model: str, options: ModelOptions) -> None:
        if not model:
            raise UserError("openai model needs a name, e.g. 'openai:gpt-4o-mini'")
        self.model = model
        self.name = f"openai:{model}"
        # Never sends anything itself: it is the source of the URL, headers and exceptions.
        self._client = AsyncOpenAI(
            api_key=resolve_api_key(options),
            base_url=options.base_url,
            timeout=options.timeout_s,
            max_retries=0,
        )
        # Part of the cache key: the same model name on two servers may be two different models.
        # Taken from the client so that OPENAI_BASE_URL and the default endpoint count too.
        self.base_url: str | None = str(self._client.base_url).rstrip("/")
        # One deadline for the whole attempt (connecting, sending, the reply's headers and every
        # byte of its body): a server that drips a byte a second cannot hold a sample longer.
        t = options.timeout_s
        self._timeout = aiohttp.ClientTimeout(total=t, connect=t, sock_connect=t, sock_read=t)
        #: The most bytes of one reply that are read (``--max-response-bytes``).
        self.max_response_bytes = options.args(OpenAIArgs).max_response_bytes
        self._targets: dict[str, tuple[str, CIMultiDict[str]]] = {}  # path -> (url, headers)
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        #: The model's context window in tokens, from the server's listing (``preflight``);
        #: None when the server does not say.
        self.context_length: int | None = None

    def _common_args(self, request: GenerationRequest) -> dict[str, Any]:
        args: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.stop:
            args["stop"] = list(request.stop[:MAX_STOP_SEQUENCES])
        if request.seed is not None:
            args["seed"] = request.seed
        return args

    async def generate(self, request: GenerationRequest) -> Generation:
        start = time.perf_counter()
        body = self._common_args(request)
        if request.messages is not None:
            # As they are: ``_encode`` makes them plain only if the encoder cannot take them.
            path, body["messages"] = "/chat/completions", request.messages
            if request.tools:  # the API rejects an empty list: no tools means no field
                body["tools"], body["tool_choice"] = request.plain_tools(), "auto"
        elif request.tools is not None:
            raise ValueError("native tools need a chat request ('messages'), not a 'prompt'")
        elif request.prompt is not None:
            path, body["prompt"] = "/completions", request.prompt
        else:
            raise ValueError("GenerationRequest needs either 'prompt' or 'messages'")
        try:
            data = await self._post(path, body)
        except BadReply as error:
            raise InfraError(f"{self.name}: {error}") from None
        return self._parse(data, time.perf_counter() - start)

    def _target(self, path: str) -> tuple[str, CIMultiDict[str]]:
        """The SDK's URL and headers for ``path``, built once (they depend on nothing else).
        When this SDK version lacks the helpers used here, the plain URL and the headers a
        compatible server needs: an SDK upgrade never sends a request past the bounds."""
        target = self._targets.get(path)
        if target is None:
            try:
                options = FinalRequestOptions.construct(method="post", url=path, json_data={})
                # Kept in aiohttp's own type, which it then need not convert on every request.
                headers = CIMultiDict(self._client._build_headers(options).items())
                url = str(self._client._prepare_url(path))
            except (AttributeError, TypeError):
                headers = CIMultiDict(
                    {"Content-Type": "application/json", "Accept": "application/json",
                     "Authorization": f"Bearer {self._client.api_key}"}
                )  # fmt: skip
                url = f"{self.base_url}/{path.lstrip('/')}"
            headers["Accept-Encoding"] = ACCEPT_ENCODING  # what read_body decodes, nothing else
            target = self._targets[path] = (url, headers)
        return target

    def _status_error(self, failed: httpx2.Response) -> openai.APIStatusError:
        """What the SDK would raise for an error status (its own subclass by status)."""
        make = getattr(self._client, "_make_status_error_from_response", None)
        if make is None:
            return openai.APIStatusError(
                f"Error code: {failed.status_code}", response=failed, body=None
            )
        error: openai.APIStatusError = make(failed)
        return error

    async def preflight(self) -> None:
        """One cheap request before the first sample (``GET /models``), so that a wrong
        endpoint is one clear line (exit 2) instead of minutes of retries. The run stops when
        nobody listens (``Unreachable``), when the key is refused, and when no API is there
        (``NotAnAPI``): the listing is not served (404, 405, 501) or is a page, not JSON, and a
        POST without a body (no server can generate from it) to each of ``API_PATHS`` is not
        served either, as at a URL without ``/v1`` or a file server. A server that only lacks
        ``/models``, a slow one or one failing now (a timeout, a reset, a 503) is left to the
        retries.

        The listing also gives the model's context length where the server states it (vLLM's
        ``max_model_len``; ``context_length`` / ``context_window`` elsewhere): kept as
        ``context_length`` so an overflow's message can name it. Knowing it does not allow
        refusing a prompt before sending it: that needs the prompt's token count, which a
        server gives only through an extra ``/tokenize`` request per sample."""
        try:
            status, kind, listing, cut = await self._ask("GET", "/models", MAX_LISTING_BYTES)
        except (aiohttp.ClientConnectorError, aiohttp.InvalidURL) as error:
            raise Unreachable(str(self.base_url), _cause(error)) from None
        except (asyncio.TimeoutError, aiohttp.ClientError, OSError):
            return
        if status in (401, 403):
            raise UserError(
                f"{self.base_url}: the API key was refused (HTTP {status}); pass --api-key or "
                "set OPENAI_API_KEY"
            )
        listed = None if cut else not_served(status, kind, listing)
        if listed is not None:
            await self._check_api_paths(f"GET /models: {listed}")
        if status == 200 and not cut:
            self.context_length = context_length_of(listing, self.model)

    async def _check_api_paths(self, listed: str) -> None:
        """``NotAnAPI`` when no path of ``API_PATHS`` is served; a check that fails (a timeout,
        a reset) says nothing, so then the run goes on."""
        probes = [self._ask("POST", path, PROBE_BYTES) for path in API_PATHS]
        answers = await asyncio.gather(*probes, return_exceptions=True)
        missing = []
        for path, answer in zip(API_PATHS, answers, strict=True):
            why = None if isinstance(answer, BaseException) else not_served(*answer[:3])
            if why is None:
                return
            missing.append(f"POST {path}: {why}")
        raise NotAnAPI(str(self.base_url), [listed, *missing])

    async def health(self) -> str | None:
        """None when the server answers ``GET /models`` (any status below 500: a server
        without a listing is still there), else why not in a few words; never raises. What an
        endpoint pool checks before it sends requests to an endpoint that was out again."""
        try:
            status, _, _, _ = await self._ask("GET", "/models", MAX_LISTING_BYTES)
        except asyncio.TimeoutError:
            return "no answer to GET /models"
        except (aiohttp.ClientError, OSError) as error:
            return _cause(error)
        return None if status < 500 else f"HTTP {status} to GET /models"

    async def _ask(self, method: str, path: str, limit: int) -> tuple[int, str, bytes, bool]:
        """A check's request (``GET /models``, a POST without a body): its status, its
        Content-Type, the start of a success's body (at most ``limit`` bytes, decoded: a
        listing that long is hostile, and is not read to its end) and whether that cut it
        short. On its own session: the run's pool belongs to the run's event loop, and a check
        runs before it exists."""
        headers = {
            "Authorization": f"Bearer {self._client.api_key}",
            "Accept-Encoding": ACCEPT_ENCODING,
            **({"Content-Type": "application/json"} if method == "POST" else {}),
        }
        timeout = aiohttp.ClientTimeout(total=min(10.0, self._timeout.sock_read or 10.0))
        url, body, cut = f"{self.base_url}{path}", b"", False
        async with (
            aiohttp.ClientSession(timeout=timeout, auto_decompress=False) as session,
            session.request(method, url, headers=headers, allow_redirects=False) as response,
        ):
            status, kind = response.status, response.headers.get("Content-Type", "")
            if 200 <= status < 300:
                limit = min(limit, self.max_response_bytes)
                try:
                    body, cut = await read_body(
                        response.content, response.headers.get("Content-Encoding"), limit
                    )
                except BadReply:  # an encoding nobody asked for: no body
                    body, cut = b"", True
                if cut:
                    response.close()
        return status, kind, body, cut

    def _http(self) -> aiohttp.ClientSession:
        """The session of the running loop: a keep-alive pool shared by all requests in it."""
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._session_loop is not loop:
            # First request, or a new asyncio.run(): a pool bound to a finished loop is dead.
            connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS)
            session = self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self._timeout,
                cookie_jar=aiohttp.DummyCookieJar(),  # an API client keeps no cookies
                auto_decompress=False,  # read_body decompresses, within the size limit
                skip_auto_headers=("User-Agent",),  # the SDK's headers say who we are
            )
            self._session_loop = loop
        return session

    async def _post(self, path: str, body: dict[str, Any]) -> object:
        """POST ``body``; the decoded JSON reply (or its text if it is not JSON). Failures
        raise what the SDK would raise, so retrying and error messages do not change; a reply
        that breaks the bounds or the protocol raises ``BadReply``."""
        url, headers = self._target(path)
        payload = _encode(body)
        try:
            # Abandoned (timed out, cancelled by Ctrl-C) before the reply's headers: aiohttp
            # closes the connection itself; after them, ``_receive`` does. Either way the
            # connection is dropped, not pooled, so the server sees the client go and aborts
            # the generation (vLLM does) instead of computing an answer nobody reads.
            session = self._http()
            async with session.post(
                url, data=payload, headers=headers, allow_redirects=False
            ) as response:
                status = response.status
                raw = await self._receive(response)
                reply_headers = [
                    (k, v) for k, v in response.headers.items() if k.lower() not in _BODY_HEADERS
                ]
        except asyncio.TimeoutError as error:  # aiohttp's timeouts are also ClientErrors
            raise openai.APITimeoutError(request=httpx2.Request("POST", url)) from error
        except (aiohttp.ClientError, OSError) as error:
            # Keep the kind: "connection refused" must not read as a timeout or a bare
            # "Connection error." in the run log.
            raise openai.APIConnectionError(
                message=f"Connection error: {_cause(error)}", request=httpx2.Request("POST", url)
            ) from error
        if 300 <= status < 400:
            location = dict(reply_headers).get("Location", "")
            raise BadReply(
                f"HTTP {status} from {url}: a redirect to {shown(location) or '(no Location)'}, "
                "not followed (the prompt goes only where --base-url says; give the final URL)"
            )
        if status >= 400:
            failed = httpx2.Response(
                status, headers=reply_headers, content=raw, request=httpx2.Request("POST", url)
            )
            raise self._status_error(failed)
        try:
            return parse_json(raw)
        except ValueError:  # e.g. an HTML error page from a proxy: _parse says what came back
            return raw.decode("utf-8", "replace")

    async def _receive(self, response: aiohttp.ClientResponse) -> bytes:
        """The body, decoded, within the limits: a success reply over ``max_response_bytes``
        raises ``BodyTooLarge``; an error status's body is cut at ``ERROR_BODY_BYTES`` (its
        start says what went wrong); a redirect's is not read. Whatever is left unread, the
        connection is closed rather than pooled."""
        status = response.status
        if 300 <= status < 400:
            response.close()
            return b""
        failed = status >= 400
        limit = min(ERROR_BODY_BYTES, self.max_response_bytes) if failed else (
            self.max_response_bytes
        )  # fmt: skip
        try:
            raw, cut = await read_body(
                response.content, response.headers.get("Content-Encoding"), limit
            )
        except BadReply:
            response.close()
            if failed:  # an error status says enough without a body that does not decode
                return b""
            raise
        except BaseException:
            response.close()
            raise
        if cut:
            response.close()
            if not failed:
                raise too_large(limit)
        return raw

    def _parse(self, data: object, latency_s: float) -> Generation:
        """The reply as a ``Generation``; a reply of the wrong shape is this sample's
        ``InfraError``, one line naming the field (``replies.read_reply``)."""
        try:
            reply = read_reply(data)
        except BadReply as error:
            raise InfraError(f"{self.name}: {error}") from None
        return Generation(
            text=reply.text,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            latency_s=latency_s,
            finish_reason=reply.finish_reason,
            tool_calls=reply.tool_calls,
        )

    async def aclose(self) -> None:
        try:
            if self._session is not None:
                await self._session.close()
        finally:
            self._session = None
            await self._client.close()


class PooledOpenAIModel(OpenAIModel):
    """One model served by several endpoints (``--base-url`` repeated): each request goes to
    one of them (``models.endpoints.EndpointPool``: least outstanding, failover, take-out).
    ``OpenAIModel(name, options)`` builds one when ``options.base_urls`` holds several URLs.

    ``base_url`` is the pool's identity (the URLs sorted), so the response cache and the
    retry layer's breaker see one server whichever endpoint answers."""

    def __init__(self, model: str, options: ModelOptions) -> None:  # no client of its own
        if not model:
            raise UserError("openai model needs a name, e.g. 'openai:gpt-4o-mini'")
        self.model = model
        self.name = f"openai:{model}"
        members = [
            OpenAIModel(model, dataclasses.replace(options, base_url=url, base_urls=()))
            for url in options.base_urls
        ]
        self.pool = EndpointPool(members)
        self.base_url = self.pool.base_url
        #: The endpoints' URLs as they will be named (the breaker's line, run.json).
        self.endpoint_urls = list(self.pool.urls)
        self.context_length = None

    async def generate(self, request: GenerationRequest) -> Generation:
        return await self.pool.generate(request)

    async def preflight(self) -> None:
        """Every endpoint checked at once; the run starts if at least one answers."""
        await self.pool.preflight()
        self.context_length = self.pool.context_length

    async def health(self) -> str | None:
        whys = [await endpoint.health() for endpoint in self.pool.endpoints]
        return None if None in whys else "; ".join(str(why) for why in whys)

    def pool_stats(self) -> dict[str, Any]:
        """``run.json``'s ``endpoints``: per URL, calls, errors, latency, times taken out."""
        return {"endpoints": self.pool.stats()}

    async def aclose(self) -> None:
        await self.pool.aclose()
