"""Parsing call text such as ``Name(key='value', n=3)`` into a name and JSON-able arguments.

API-Bank and BFCL both write gold calls as Python-looking text. The text is data, never code:
it is parsed with ``ast`` and only literals are read (``ast.literal_eval`` on single nodes),
so nothing is ever evaluated. API-Bank's own evaluator reads calls with a tolerant regex, and
its data relies on that: values with an unescaped quote (``content='John's team'``) or bare
words (``key=value``). When ``ast`` cannot parse the text, a fallback splits the argument list
at ``, key=`` boundaries instead, which reads those the way API-Bank does.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any


class CallSyntaxError(ValueError):
    """The text is not a call this module can read; the message says why."""


@dataclass(frozen=True)
class ParsedCall:
    name: str
    #: Positional arguments in order (BFCL golds use them: ``sort('report.txt')``).
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def arguments(self, param_names: list[str] | None = None) -> dict[str, Any]:
        """Keyword view of the call: positional values named after ``param_names`` in order
        (``arg0``, ``arg1``... where the names run out), then the keyword arguments."""
        names = param_names or []
        bound = {
            (names[i] if i < len(names) else f"arg{i}"): value for i, value in enumerate(self.args)
        }
        bound.update(self.kwargs)
        return bound


_CALL = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*$", re.DOTALL)
_KEY = re.compile(r"(?:^|,)\s*([A-Za-z_]\w*)\s*=(?!=)")
_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError)


def parse_call(text: str) -> ParsedCall:
    """One call: ``Name(...)`` or ``[Name(...)]``. Raises ``CallSyntaxError``."""
    calls = parse_calls(text)
    if len(calls) != 1:
        raise CallSyntaxError(f"expected exactly one call, found {len(calls)}")
    return calls[0]


def parse_calls(text: str) -> list[ParsedCall]:
    """A call or a bracketed list of calls (``[A(x=1), B()]``). Raises ``CallSyntaxError``."""
    stripped = text.strip()
    if not stripped:
        raise CallSyntaxError("the call text is empty")
    try:
        return _parse_with_ast(stripped)
    except CallSyntaxError:
        pass
    inner = stripped[1:-1] if stripped.startswith("[") and stripped.endswith("]") else stripped
    return [_parse_fallback(inner)]


def _parse_with_ast(text: str) -> list[ParsedCall]:
    try:
        tree = ast.parse(text, mode="eval")
    except _PARSE_ERRORS as exc:
        raise CallSyntaxError(f"not call syntax ({type(exc).__name__})") from None
    body = tree.body
    # ``[A(), B()]`` and ``A(), B()`` are lists of calls; anything else must be one call.
    nodes = body.elts if isinstance(body, (ast.List, ast.Tuple)) else [body]
    return [_call_from_node(node) for node in nodes]


def _call_from_node(node: ast.expr) -> ParsedCall:
    if not isinstance(node, ast.Call):
        raise CallSyntaxError("not a call")
    name = _dotted_name(node.func)
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(
        kw.arg is None for kw in node.keywords
    ):
        raise CallSyntaxError("*args / **kwargs are not literal arguments")
    args = tuple(_literal(arg) for arg in node.args)
    kwargs: dict[str, Any] = {}
    for keyword in node.keywords:
        assert keyword.arg is not None
        kwargs[keyword.arg] = _literal(keyword.value)
    return ParsedCall(name=name, args=args, kwargs=kwargs)


def _dotted_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr}"
    raise CallSyntaxError("the called thing is not a name")


def _literal(node: ast.expr) -> Any:
    # A bare word is read as the word, as API-Bank's evaluator does (``mode=w``).
    if isinstance(node, ast.Name):
        return node.id
    try:
        value = ast.literal_eval(node)
    except _PARSE_ERRORS:
        raise CallSyntaxError("an argument is neither a literal nor a bare word") from None
    return to_json_value(value)


def to_json_value(value: Any) -> Any:
    """The JSON form of a Python literal (tuples and sets become lists); other values raise."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CallSyntaxError(f"{value!r} is not a JSON number")
        return value
    if isinstance(value, (list, tuple)):
        return [to_json_value(item) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [to_json_value(item) for item in value]
        return sorted(items, key=repr)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise CallSyntaxError(f"dict key {key!r} cannot be a JSON key")
            out[key if isinstance(key, str) else json.dumps(key)] = to_json_value(item)
        return out
    raise CallSyntaxError(f"{type(value).__name__} values have no JSON form")


def _parse_fallback(text: str) -> ParsedCall:
    match = _CALL.match(text)
    if match is None:
        raise CallSyntaxError("expected Name(key=value, ...)")
    name, body = match.group(1), match.group(2)
    if name.endswith(".") or ".." in name:
        raise CallSyntaxError(f"{name!r} is not a function name")
    return ParsedCall(name=name, kwargs=_split_keywords(body))


def _split_keywords(body: str) -> dict[str, Any]:
    if not body.strip():
        return {}
    keys = list(_KEY.finditer(body))
    if not keys or body[: keys[0].start()].strip():
        raise CallSyntaxError("arguments must be key=value pairs")
    kwargs: dict[str, Any] = {}
    for i, key in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(body)
        name = key.group(1)
        if name in kwargs:
            raise CallSyntaxError(f"argument '{name}' is given twice")
        kwargs[name] = _loose_value(body[key.end() : end].strip())
    return kwargs


def _nesting_ok(raw: str) -> bool:
    """Brackets close in order: an unquoted ``1), B(y=2`` is two calls run together."""
    depth = 0
    for char in raw:
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _loose_value(raw: str) -> Any:
    """A literal when it is one (escapes decoded), a quoted string's inside, else the text."""
    try:
        return to_json_value(ast.literal_eval(raw))
    except (*_PARSE_ERRORS, CallSyntaxError):
        pass
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if not raw or not _nesting_ok(raw):
        raise CallSyntaxError(f"cannot read the value {raw[:40]!r}")
    return raw
