"""Our tasks' API docs as JSON-schema ``ApiSpec``s, and which docs a gold answer uses.

Two doc shapes exist in the task folders:

* Python signatures (home_search, booking, google_sheets): ``# description`` lines, then
  ``API.set_num_beds(value: int)``-style lines. The signature is parsed with ``ast`` (it is our
  own data, but it is still never executed).
* curl templates (open_weather, the_cat_api): ``# description``, a ``curl`` line with
  ``{placeholders}``, and optionally a ``Parameters:`` block of ``name: (required) text`` lines.

Which docs a gold uses is answered from the gold's syntax only: the names called in a Python
gold, or the endpoint (method, path, required query names) of a curl gold.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from toolbench.aware.schema import ApiSpec
from toolbench.errors import UserError
from toolbench.sandbox.curl import CurlError, parse_curl
from toolbench.types import Doc

_JSON_TYPES = {
    "int": "integer",
    "float": "number",
    "str": "string",
    "bool": "boolean",
    "list": "array",
    "List": "array",
    "dict": "object",
    "Dict": "object",
}
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_PARAM_LINE = re.compile(
    r"^([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_][\w]*)*)\s*:\s*\((required|optional)\)\s*(.*)$"
)
_NOT_ARGUMENTS = {"API_KEY", "optional_params"}


def _split_doc(doc: Doc) -> tuple[str, list[str]]:
    description = " ".join(
        line.lstrip("#").strip() for line in doc.text.splitlines() if line.startswith("#")
    )
    body = [line for line in doc.text.splitlines() if line.strip() and not line.startswith("#")]
    return description, body


def _annotation_schema(node: ast.expr | None) -> dict[str, Any]:
    if node is None:
        return {}
    text = ast.unparse(node)
    head = text.split("[", 1)[0].split(".")[-1]
    if head in _JSON_TYPES:
        schema: dict[str, Any] = {"type": _JSON_TYPES[head]}
        if schema["type"] == "array" and "[" in text:
            inner = text.split("[", 1)[1].rstrip("]")
            if inner in _JSON_TYPES:
                schema["items"] = {"type": _JSON_TYPES[inner]}
        return schema
    # A task type such as Loc or Date: an object built with that constructor.
    return {"type": "object", "description": f"a {text} value"}


def _python_spec(doc: Doc, description: str, signature: str) -> ApiSpec:
    match = re.match(r"^\s*([\w.]+)\((.*)\)\s*(?:->.*)?$", signature)
    if not match:
        raise UserError(f"API doc '{doc.name}': cannot read the signature line {signature!r}")
    qualified, params = match.groups()
    try:
        tree = ast.parse(f"def _f({params}): pass")
    except SyntaxError:
        raise UserError(
            f"API doc '{doc.name}': the parameters of {signature!r} are not Python syntax"
        ) from None
    func = tree.body[0]
    assert isinstance(func, ast.FunctionDef)
    args = func.args.args
    defaults = [None] * (len(args) - len(func.args.defaults)) + list(func.args.defaults)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, default in zip(args, defaults, strict=True):
        schema = _annotation_schema(arg.annotation)
        if default is None:
            required.append(arg.arg)
        else:
            try:
                schema["default"] = ast.literal_eval(default)
            except ValueError:
                schema["default"] = ast.unparse(default)
        properties[arg.arg] = schema
    return ApiSpec(
        name=doc.name,
        description=description,
        parameters={"type": "object", "properties": properties, "required": required},
        origin={"kind": "python", "signature": signature.strip(), "call": qualified},
    )


def _curl_parameters(template: str, body: Sequence[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    listed = False
    for line in body:
        match = _PARAM_LINE.match(line.strip())
        if not match:
            continue
        listed = True
        names, need, text = match.groups()
        for name in (n.strip() for n in names.split(",")):
            if name == "appid":
                continue
            properties[name] = {"type": "string", "description": text}
            if need == "required":
                required.append(name)
    if not listed:
        # No Parameters block: placeholders in the path or the body are required; those in the
        # query string are optional filters (``?sub_id={sub_id}``).
        query = template.split("?", 1)[1].split("'", 1)[0] if "?" in template else ""
        for name in _PLACEHOLDER.findall(template):
            if name in _NOT_ARGUMENTS or name in properties:
                continue
            properties[name] = {"type": "string"}
            if "{" + name + "}" not in query:
                required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def doc_to_spec(doc: Doc) -> ApiSpec:
    """One task API doc as an ``ApiSpec`` named after the doc file."""
    description, body = _split_doc(doc)
    if not body:
        raise UserError(f"API doc '{doc.name}': no signature or curl line after the description")
    first = body[0].strip()
    if first.startswith("curl"):
        return ApiSpec(
            name=doc.name,
            description=description,
            parameters=_curl_parameters(first, body[1:]),
            origin={"kind": "curl", "template": first},
        )
    return _python_spec(doc, description, first)


# -- which docs a gold uses -------------------------------------------------------------------


def python_calls(program: str) -> list[str]:
    """Names a Python gold calls, in order of first use: ``API.set_x(..)`` -> ``set_x``."""
    try:
        tree = ast.parse(program)
    except SyntaxError:
        return []
    names: list[str] = []
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    for call in calls:
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name and name not in names:
            names.append(name)
    return names


@dataclass(frozen=True)
class _Endpoint:
    name: str
    method: str
    path: re.Pattern[str]
    query_names: frozenset[str]


def _endpoint(spec: ApiSpec) -> _Endpoint:
    template = str(spec.origin["template"])
    method = "POST" if "-X POST" in template else "DELETE" if "-X DELETE" in template else "GET"
    url = re.search(r"'(https?://[^']+)'", template)
    raw = url.group(1) if url else ""
    parts = urlsplit(raw.replace("{optional_params}", ""))
    pattern = "".join(
        "[^/]+" if piece.startswith("{") else re.escape(piece)
        for piece in re.split(r"(\{[^}]+\})", parts.path)
    )
    in_query = {k for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    names = frozenset(in_query & set(spec.parameters.get("required", [])))
    return _Endpoint(spec.name, method, re.compile(f"^{pattern}$"), names)


def curl_endpoint(gold: str, specs: Sequence[ApiSpec]) -> str | None:
    """The curl doc whose endpoint a gold line calls: same method and path, and the most
    specific doc whose query names the gold all sets (``forecast?q=`` vs ``forecast?lat=``)."""
    try:
        request = parse_curl(gold.strip(), api_key="KEY")
    except CurlError:
        return None
    keys = set(request.query_dict())
    best: tuple[tuple[int, int], str] | None = None
    for spec in specs:
        if spec.origin.get("kind") != "curl":
            continue
        endpoint = _endpoint(spec)
        if endpoint.method != request.method or not endpoint.path.match(request.path):
            continue
        if not endpoint.query_names <= keys:
            continue
        # Prefer literal paths ("/images/search" over "/images/{image_id}"), then the doc whose
        # required query names the gold sets most of.
        score = (len(endpoint.query_names), -endpoint.path.pattern.count("[^/]+"))
        if best is None or score > best[0]:
            best = (score, spec.name)
    return best[1] if best else None


def apis_used(gold: str, specs: Sequence[ApiSpec]) -> list[str]:
    """The offered API names one gold answer uses (in order of use)."""
    offered = {spec.name for spec in specs}
    if gold.lstrip().startswith("curl"):
        name = curl_endpoint(gold, specs)
        return [name] if name else []
    return [name for name in python_calls(gold) if name in offered]
