"""Reading what a call says: which API a name stands for, and its literal arguments.

The notations in ``implicit_calls`` find where a reply writes a call; this module reads its
pieces. ``Offered`` says whether a name stands for an offered API (its own name, the sanitised
native tool name ``render.tool_name``, or either behind a prefix such as ``functions.`` or
``api.``). Arguments become a dict of JSON values: from Python call syntax
(``python_arguments``: keyword and positional literals, JSON's ``true``/``false``/``null``
accepted), or from a JSON object (``read_value``, which also reads a single-quoted Python dict;
``mapping_call`` for ``{"name": .., "arguments": ..}`` and its relatives, which tells a call
from data and from an echoed API description). What cannot be read raises ``Malformed`` with
the reason; arguments written as ``...`` raise ``Placeholder`` (a mention, not a call).

Model output is hostile input: it is read with ``json`` and ``ast`` (``literal_eval`` of single
nodes; ``ast.parse`` is only asked for syntax), never evaluated or imported from, and bracket
scans (``balanced_end``) stop after ``_MAX_CALL_CHARS`` characters.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolbench.aware.evaluate.render import tool_name
from toolbench.aware.sources._calls import CallSyntaxError, to_json_value

#: A call whose brackets do not close within this many characters counts as unbalanced.
_MAX_CALL_CHARS = 4_000

_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError)
#: Action names that end a turn (ToolBench's ``Finish``) instead of calling an API.
NON_CALL_ACTIONS = frozenset({"finish", "final answer", "final_answer", "none", "n/a", "null"})


# -- offered names ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Offered:
    """The APIs the prompt offered, and every spelling that stands for one of them."""

    names: tuple[str, ...]
    #: Every spelling that means an offered API (its native tool name too) -> the API name.
    aliases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, api_names: Sequence[str]) -> Offered:
        names = tuple(dict.fromkeys(n for n in api_names if isinstance(n, str) and n.strip()))
        aliases = {name: name for name in names}
        for name in names:
            aliases.setdefault(tool_name(name), name)
        return cls(names, aliases)

    def resolve(self, name: str) -> tuple[str, bool]:
        """(API name, offered?); a prefix such as ``functions.`` or ``api.`` is looked through."""
        parts = name.split(".")
        for i in range(min(len(parts), 6)):  # bounded: the name is model output
            candidate = ".".join(parts[i:])
            if candidate in self.aliases:
                return self.aliases[candidate], True
        return name, False


# -- reading failures ------------------------------------------------------------------------------


class Malformed(Exception):
    """A call attempt that cannot be read; the message says why."""


class Placeholder(Exception):
    """Arguments written as ``...`` or ``<city>``: a mention of an API, not a call."""


# -- Python call arguments -------------------------------------------------------------------------

_JSON_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}


def python_arguments(body: str) -> dict[str, Any]:
    """The literal arguments of ``f(<body>)``; positional ones are named ``arg0``, ``arg1``..."""
    try:
        call = ast.parse(f"_({body})", mode="eval").body
    except _PARSE_ERRORS:
        raise Malformed("arguments are not valid call syntax") from None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "_"):
        raise Malformed("arguments are not valid call syntax")
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        raise Malformed("arguments are not literals")
    arguments = {f"arg{i}": _literal(node) for i, node in enumerate(call.args)}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise Malformed("arguments are not literals")
        arguments[keyword.arg] = _literal(keyword.value)
    return arguments


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        raise Placeholder
    try:
        return to_json_value(ast.literal_eval(node))
    except (*_PARSE_ERRORS, CallSyntaxError):
        raise Malformed("arguments are not literals") from None


# -- JSON objects ----------------------------------------------------------------------------------

NAME_KEYS = ("name", "api", "api_name", "tool", "tool_name", "function", "function_name", "action")
ARG_KEYS = ("arguments", "parameters", "args", "params", "tool_input", "action_input", "input")
_STRING_INPUT_KEYS = frozenset({"tool_input", "action_input", "input"})
_DECODER = json.JSONDecoder()


def read_value(text: str, pos: int) -> tuple[Any, int]:
    """A JSON value at ``pos``, or a Python literal (single quotes, True/None) as a fallback."""
    try:
        return _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):
        pass
    end = balanced_end(text, pos)
    if end is None:
        raise Malformed("unbalanced brackets")
    try:
        return to_json_value(ast.literal_eval(text[pos:end])), end
    except (*_PARSE_ERRORS, CallSyntaxError):
        raise Malformed("broken JSON") from None


def mapping_call(
    obj: Mapping[str, Any], offered: Offered, *, required: bool
) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) of a call-shaped object; None when the object is not a call at all."""
    function = obj.get("function")
    if isinstance(function, Mapping):  # {"type": "function", "function": {...}}, unwrapped once
        obj = function
    name_key = next((key for key in NAME_KEYS if key in obj), None)
    arg_key = next((key for key in ARG_KEYS if key in obj), None)
    name = obj.get(name_key) if name_key else None
    if not isinstance(name, str) or not name.strip():
        if required or (name_key and arg_key):
            raise Malformed("call syntax with no API name")
        return None
    name = name.strip()
    known = offered.resolve(name)[1]
    if not required and not (arg_key or known):
        return None  # {"name": "John", "age": 3} is data, not a call
    if _is_schema(obj, arg_key) or (not known and name.lower() in NON_CALL_ACTIONS):
        return None
    return name, json_arguments(obj.get(arg_key) if arg_key else None, arg_key)


def _is_schema(obj: Mapping[str, Any], arg_key: str | None) -> bool:
    """An API description echoed back (``description``, ``{"type": "object", "properties"}``)."""
    params = obj.get(arg_key) if arg_key else None
    return "description" in obj or (isinstance(params, Mapping) and "properties" in params)


def json_arguments(value: Any, key: str | None) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str):
        if not value.strip():
            return {}
        if key in _STRING_INPUT_KEYS and value.lstrip()[:1] not in "{[":
            return {"input": value}  # LangChain's single-string tool input
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise Malformed("broken JSON arguments") from None
        if value is None:
            return {}
    if not isinstance(value, Mapping):
        raise Malformed("arguments are not an object")
    return dict(value)


# -- scanning helpers ----------------------------------------------------------------------------

_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def balanced_end(text: str, start: int) -> int | None:
    """Just past the bracket that closes ``text[start]`` (quotes respected), or None when the
    brackets do not close in order within ``_MAX_CALL_CHARS``."""
    stack: list[str] = []
    quote = ""
    i, limit = start, min(len(text), start + _MAX_CALL_CHARS)
    while i < limit:
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return i + 1
        i += 1
    return None
