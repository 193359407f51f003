"""A curl task's API as tools for agents: one tool per documented endpoint, one world per sample.

The tools come from the same API docs the model reads (``data.context.functions``): each doc's
curl line gives the method, the path (``{x}`` segments are path parameters), the query
parameters and the JSON body's fields; its ``Parameters:`` block gives each parameter's
description and whether it is ``(required)``. A parameter is required when its line says so,
when it is a path parameter or a field of the body template, or when the curl line names it
and no line describes it; the others are optional. Types come from the task (``param_types``;
strings otherwise). The API key (``{API_KEY}``) is never a parameter: the world fills it in,
as the harness does for a model's curl line.

A call builds the request the equivalent curl line would, and sends it to this sample's one
world (the simulated service's state lives as long as the world, as a real account would), or
with --live to the real API. The reply is the response body (JSON text); an HTTP error is an
``is_error`` reply "HTTP <status>: <body>", as the API words it.

Which call is the answer (what ``outcome`` scores with the task's own judge, as it would score
a model's one curl line): the last call that got a 2xx response and changed something (POST,
PUT, PATCH, DELETE), else the last call that got a 2xx response. A read after a write (an
agent checking its work) thus does not replace the write as the answer, and the world judged
is the one every call left behind, so a stray extra write still fails the sample. Samples the
original compared as strings (``compare_string_only``) are judged on the response and world
like the others: an agent writes calls, not curl text. No 2xx call at all is a model_error.
"""

from __future__ import annotations

import copy
import json
import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol
from urllib.parse import urlsplit

import jsonschema

from toolbench.core.agent import ToolCall, ToolReply, ToolSpec, Untranslatable
from toolbench.core.bounded import bounded_text
from toolbench.core.task import TaskData
from toolbench.errors import UserError
from toolbench.kinds.http_exec import HttpExecutor, HttpResult, SimulatedExecutor, one_line
from toolbench.kinds.program_task import crash_outcome
from toolbench.kinds.service import SimulatedService
from toolbench.sandbox.curl import CurlError, HttpRequest, parse_curl
from toolbench.types import Doc, InfraError, Outcome, Sample, Status

MAX_REPLY_CHARS = 20_000
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
KEY_PLACEHOLDER = "{API_KEY}"
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_PARAM_LINE = re.compile(r"^\s*(\w+(?:\s*[,/]\s*\w+)*)\s*:\s*(.*)$")
_INTEGER = re.compile(r"-?\d{1,18}")
_NUMBER = re.compile(r"-?(?:\d{1,20}(?:\.\d{0,20})?|\.\d{1,20})")
# A path parameter is one path segment: no separators, so a value cannot reach another route;
# its length is in the pattern (strict function calling knows no minLength/maxLength).
_SEGMENT = {"type": "string", "pattern": r"^[^/?#\\]{1,200}$"}


@dataclass(frozen=True)
class Param:
    name: str
    where: str  # "path", "query" or "body"
    required: bool
    description: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class Endpoint:
    """One documented endpoint variant, as a tool."""

    tool: str
    doc: str  # the doc's file name
    method: str
    scheme: str
    host: str
    path: str  # template, e.g. /v1/votes/{vote_id}
    params: tuple[Param, ...]
    key_param: str | None  # the query parameter carrying {API_KEY}
    description: str
    spec: ToolSpec = field(compare=False, repr=False, default=ToolSpec("", "", {}))

    def shape(self) -> str:
        return f"{self.method} " + _PLACEHOLDER.sub("{}", self.path.rstrip("/"))


# -- docs -> endpoints -------------------------------------------------------------------------


@lru_cache(maxsize=32)
def endpoints_of(
    task: str,
    docs: tuple[Doc, ...],
    names: tuple[tuple[str, str], ...],
    types: tuple[tuple[str, str], ...],
) -> tuple[Endpoint, ...]:
    """Every doc of ``docs`` as an endpoint (built once per task and docs); a doc that does not
    read as an endpoint is the data folder's ``UserError``."""
    rename, typed = dict(names), {k: json.loads(v) for k, v in types}
    found = tuple(_endpoint(task, doc, rename, typed) for doc in docs)
    seen: set[str] = set()
    for endpoint in found:
        if endpoint.tool in seen:
            raise UserError(f"{task}: two API docs make the tool {endpoint.tool}; rename one")
        seen.add(endpoint.tool)
    return found


def _endpoint(task: str, doc: Doc, rename: Mapping[str, str], typed: Mapping[str, Any]) -> Endpoint:
    where = f"{task} API doc {doc.name}"
    lines = doc.text.splitlines()
    curl = next((line.strip() for line in lines if line.strip().startswith("curl ")), None)
    if curl is None:
        raise UserError(f"{where}: no curl line; each API doc needs one")
    try:
        method, url, body = _curl_parts(curl)
    except ValueError as exc:
        raise UserError(f"{where}: the curl line does not read ({exc}); fix it") from exc
    split = urlsplit(url)
    described = _described(lines)
    summary = next((line[1:].strip() for line in lines if line.startswith("#")), doc.name)
    params: list[Param] = []
    key_param = None
    for name in _PLACEHOLDER.findall(split.path):
        params.append(_param(name, "path", True, described, typed))
    for part in split.query.split("&"):
        name, _, value = part.partition("=")
        if not name or name.startswith("{"):
            continue
        if value.startswith(KEY_PLACEHOLDER):  # "appid={API_KEY}{optional_params}"
            key_param = name
        else:
            params.append(_param(name, "query", name not in described, described, typed))
    for name in body:
        params.append(_param(name, "body", True, described, typed))
    listed = {p.name for p in params} | ({key_param} if key_param else set())
    for name in described:
        if name not in listed:
            optional_where = "body" if body else "query"
            params.append(_param(name, optional_where, False, described, typed))
    if body:  # a body field the summary names in quotes ("sub_id") is optional
        for name in re.findall(r'"(\w+)"', summary):
            if name not in {p.name for p in params}:
                params.append(_param(name, "body", False, described, typed))
    tool = _TOOL_NAME.sub("_", rename.get(doc.name, doc.name))[:64]
    path = split.path.rstrip("/") or "/"
    endpoint = Endpoint(
        tool, doc.name, method, split.scheme, split.netloc, path, tuple(params), key_param, ""
    )
    description = _description(summary, endpoint, url)
    spec = ToolSpec(tool, description, _schema(endpoint.params))
    return Endpoint(**{**endpoint.__dict__, "description": description, "spec": spec})


def _curl_parts(line: str) -> tuple[str, str, list[str]]:
    """(method, url, body field names) of a doc's curl line (our docs: bounded, no shell)."""
    words = shlex.split(line[:4000])
    method, url, body = "GET", "", []
    i = 1
    while i < len(words):
        word = words[i]
        if word in ("-X", "--request") and i + 1 < len(words):
            method, i = words[i + 1].upper(), i + 2
            continue
        if word in ("-d", "--data", "--data-raw", "--json") and i + 1 < len(words):
            body = re.findall(r'"(\w+)"\s*:', words[i + 1])
            method = method if "-X" in words or "--request" in words else "POST"
            i += 2
            continue
        if word.startswith(("http://", "https://")):
            url = word
        i += 1
    if not url:
        raise ValueError("no http(s) URL")
    return method, url, body


def _described(lines: Sequence[str]) -> dict[str, str]:
    """Parameter name -> its description line (the text after ``Parameters:``)."""
    described: dict[str, str] = {}
    started = False
    for line in lines:
        if line.strip().lower() == "parameters:":
            started = True
        elif started:
            match = _PARAM_LINE.match(line)
            if match:
                for name in re.split(r"\s*[,/]\s*", match.group(1)):
                    described.setdefault(name, match.group(2).strip())
    return described


def _param(
    name: str, where: str, required: bool, described: Mapping[str, str], typed: Mapping[str, Any]
) -> Param:
    text = described.get(name, "")
    if text.startswith("(required)"):
        required = True
    elif text.startswith("(optional)"):
        required = where == "path"
    text = re.sub(r"^\((?:required|optional)\)\s*", "", text) or name.replace("_", " ")
    schema = dict(_SEGMENT) if where == "path" else dict(typed.get(name, {"type": "string"}))
    return Param(name, where, required, text, {**schema, "description": text})


def _description(summary: str, endpoint: Endpoint, url: str) -> str:
    """The doc's summary with its ``{placeholders}`` named after the parameters they fill."""
    fills = {m.group(2): m.group(1) for m in re.finditer(r"(\w+)=\{(\w+)\}", url)}
    fills.update({p.name: p.name for p in endpoint.params})
    text = _PLACEHOLDER.sub(lambda m: f"`{fills.get(m.group(1), m.group(1))}`", summary)
    return f"{text} ({endpoint.method} {endpoint.path})"


def _schema(params: Sequence[Param]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {p.name: dict(p.schema) for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_text))


def argument_error(endpoint: Endpoint, arguments: Any) -> str | None:
    """Why ``arguments`` do not fit the tool's schema (one line), or None if they do."""
    if not isinstance(arguments, Mapping):
        return f"arguments of {endpoint.tool} must be an object"
    validator = _validator(json.dumps(endpoint.spec.input_schema, sort_keys=True))
    try:
        error = next(iter(validator.iter_errors(dict(arguments))), None)
    except (RecursionError, ValueError, TypeError) as exc:  # absurd arguments
        return f"arguments of {endpoint.tool} cannot be checked ({type(exc).__name__})"
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return one_line(f"{endpoint.tool}: {where + ': ' if where else ''}{error.message}", 300)


def given(endpoint: Endpoint, arguments: Any) -> Any:
    """The arguments without a null for an optional parameter: strict function calling makes
    a client send null for each optional parameter it leaves out, which means "not given"."""
    if not isinstance(arguments, Mapping):
        return arguments
    optional = {p.name for p in endpoint.params if not p.required}
    return {k: v for k, v in arguments.items() if v is not None or k not in optional}


# -- calls <-> requests ------------------------------------------------------------------------


def request_of(endpoint: Endpoint, arguments: Mapping[str, Any], api_key: str) -> HttpRequest:
    """The request the equivalent curl line would make (arguments already validated)."""
    path = endpoint.path
    query: list[tuple[str, str]] = []
    body: dict[str, Any] = {}
    for param in endpoint.params:
        if param.name not in arguments:
            continue
        value = arguments[param.name]
        if param.where == "path":
            path = path.replace("{" + param.name + "}", str(value))
        elif param.where == "query":
            query.append((param.name, _text(value)))
        else:
            body[param.name] = value
    if endpoint.key_param:
        query.append((endpoint.key_param, api_key))
    content = json.dumps(body, ensure_ascii=False).encode() if body else None
    return HttpRequest(
        endpoint.method, endpoint.scheme, endpoint.host, path, tuple(query), (), content
    )


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def call_of(endpoints: Sequence[Endpoint], request: HttpRequest, api_key: str) -> ToolCall:
    """The one tool call that makes ``request``; ``Untranslatable`` naming why there is none."""
    shape = f"{request.method} " + (request.path.rstrip("/") or "/")
    matching = [e for e in endpoints if e.host == request.host and _path_args(e, shape) is not None]
    if not matching:
        raise Untranslatable(f"no tool serves {one_line(shape, 120)}")
    # A literal segment wins over a {parameter} (images/search is not image "search").
    matching.sort(key=lambda e: e.path.count("{"))
    names = [name for name, _ in request.query]
    if len(set(names)) != len(names):
        raise Untranslatable("a query parameter is given twice")
    reasons = []
    for endpoint in matching:
        try:
            return _call_on(endpoint, shape, request, api_key)
        except Untranslatable as exc:
            reasons.append(str(exc))
    raise Untranslatable("; ".join(reasons))


def _path_args(endpoint: Endpoint, shape: str) -> dict[str, str] | None:
    method, _, path = shape.partition(" ")
    if method != endpoint.method:
        return None
    want, got = endpoint.path.strip("/").split("/"), path.strip("/").split("/")
    if len(want) != len(got):
        return None
    found: dict[str, str] = {}
    for pattern, segment in zip(want, got, strict=True):
        name = _PLACEHOLDER.fullmatch(pattern)
        if name:
            found[name.group(1)] = segment
        elif pattern != segment:
            return None
    return found


def _call_on(endpoint: Endpoint, shape: str, request: HttpRequest, api_key: str) -> ToolCall:
    arguments: dict[str, Any] = dict(_path_args(endpoint, shape) or {})
    by_name = {p.name: p for p in endpoint.params}
    for name, value in request.query:
        if name == endpoint.key_param:
            if value != api_key:
                raise Untranslatable(f"{endpoint.tool}: the API key is not the one given")
            continue
        param = by_name.get(name)
        if param is None or param.where != "query":
            raise Untranslatable(f"{endpoint.tool} has no query parameter {one_line(name, 60)}")
        arguments[name] = _typed(param, value)
    if request.body:
        try:
            body = request.json_body()
        except CurlError as exc:
            raise Untranslatable(str(exc)) from exc
        if not isinstance(body, dict):
            raise Untranslatable(f"{endpoint.tool}: the body is not a JSON object")
        arguments.update(body)
    error = argument_error(endpoint, arguments)
    if error is not None:
        raise Untranslatable(error)
    return ToolCall(endpoint.tool, arguments)


def _typed(param: Param, text: str) -> Any:
    """A query value as the JSON type its schema wants (``Untranslatable`` if it is not)."""
    kinds = param.schema.get("type", "string")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    lowered = text.strip().lower()
    if "boolean" in kinds and lowered in ("true", "false"):
        return lowered == "true"
    if ("integer" in kinds or "number" in kinds) and _INTEGER.fullmatch(text.strip()):
        return int(text)
    if "number" in kinds and _NUMBER.fullmatch(text.strip()):
        value = float(text)
        if math.isfinite(value):
            return value
    if "string" in kinds:
        return text
    raise Untranslatable(f"{param.name}={one_line(text, 40)} is not of type {'/'.join(kinds)}")


# -- the world ---------------------------------------------------------------------------------


@dataclass
class Answered:
    request: HttpRequest
    result: HttpResult


class CurlJudge(Protocol):
    """What a curl agent world needs of its task (``curl_task.CurlTask``), handed in by the
    task that builds the world: its service, the API as tools, the key and world of a load
    and sample, how a reply's curl line is read, and the task's own judge of an answer."""

    @property
    def service(self) -> SimulatedService: ...

    def endpoints(self, data: TaskData[HttpExecutor]) -> tuple[Endpoint, ...]: ...

    def api_key(self, data: TaskData[HttpExecutor]) -> str: ...

    def world_fields(self, sample: Sample) -> Mapping[str, Any]: ...

    def extract_action(self, text: str) -> str: ...

    async def judge(
        self,
        data: TaskData[HttpExecutor],
        sample: Sample,
        request: HttpRequest,
        result: HttpResult,
    ) -> Outcome: ...


class CurlAgentWorld:
    """One sample of a curl task as tools (see module doc), judged by ``task`` (a
    ``CurlJudge``)."""

    def __init__(self, task: CurlJudge, data: TaskData[HttpExecutor], sample: Sample) -> None:
        self.task, self.data, self.sample = task, data, sample
        self.endpoints = task.endpoints(data)
        self._by_tool = {e.tool: e for e in self.endpoints}
        self._api_key = task.api_key(data)
        runtime = data.runtime
        self._simulated = runtime if isinstance(runtime, SimulatedExecutor) else None
        self._state = task.service.new_state(task.world_fields(sample)) if self._simulated else None
        self.answers: list[Answered] = []

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return [e.spec for e in self.endpoints]

    @property
    def request(self) -> str:
        return self.sample.query

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        endpoint = self._by_tool.get(name) if isinstance(name, str) else None
        if endpoint is None:
            known = ", ".join(sorted(self._by_tool))
            return ToolReply(f"unknown tool {one_line(str(name), 80)}; tools: {known}", True)
        arguments = given(endpoint, arguments)
        error = argument_error(endpoint, arguments)
        if error is not None:
            return ToolReply(f"invalid arguments: {error}", True)
        request = request_of(endpoint, arguments, self._api_key)
        before = copy.deepcopy(self._state)
        try:
            result = await self._send(request)
        except CurlError as exc:
            return ToolReply(f"request cannot be sent: {one_line(str(exc))}", True)
        text = _reply_text(result.body)
        if result.status >= 400:
            self._state = before  # a refused call changes nothing, even one the simulator broke on
            return ToolReply(bounded_text(f"HTTP {result.status}: {text}", MAX_REPLY_CHARS), True)
        self.answers.append(Answered(request, result))
        return ToolReply(bounded_text(text, MAX_REPLY_CHARS))

    async def _send(self, request: HttpRequest) -> HttpResult:
        if self._simulated is not None:
            return await self._simulated.execute_in(request, self._state)
        return await self.data.runtime.execute(request, {})

    async def outcome(self) -> Outcome:
        if not self.answers:
            return crash_outcome("no call got a successful (2xx) response")
        writes = [i for i, a in enumerate(self.answers) if a.request.method in WRITE_METHODS]
        index = writes[-1] if writes else len(self.answers) - 1
        answer = self.answers[index]
        state = self.task.service.snapshot(self._state) if self._simulated else None
        result = HttpResult(
            answer.result.status, answer.result.body, answer.result.content_type, state
        )
        try:
            outcome = await self.task.judge(self.data, self.sample, answer.request, result)
        except InfraError as exc:
            return Outcome(status=Status.INFRA_ERROR, message=one_line(str(exc)))
        outcome.details = {**outcome.details, "answer_call": index}
        return outcome

    def failed(self, message: str) -> Outcome:
        return crash_outcome(one_line(message))

    async def translate(self, action: str) -> list[ToolCall]:
        line = self.task.extract_action(action)
        if not line:
            raise Untranslatable("no curl command in the text")
        try:
            request = parse_curl(line, api_key=self._api_key, allowed_hosts=self.task.service.hosts)
        except CurlError as exc:
            raise Untranslatable(f"rejected curl: {one_line(str(exc))}") from exc
        return [call_of(self.endpoints, request, self._api_key)]

    async def gold_calls(self) -> list[ToolCall]:
        return await self.translate(self.sample.labels[0])

    async def close(self) -> None:
        """Nothing to release: the world is plain data, dropped with this object."""


def _reply_text(body: Any) -> str:
    if isinstance(body, str):
        return body
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(body)
