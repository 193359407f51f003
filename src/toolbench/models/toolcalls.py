"""Tool calls that a local model wrote as text, read back into OpenAI's ``tool_calls`` shape.

A server (vLLM, SGLang) turns a model's call syntax into ``tool_calls`` with a parser chosen
by flag; a local ``hf:`` model has no such server, so its reply is read here. The formats are
the ones open chat templates teach:

- ``hermes`` (Hermes, Qwen 2.5/3): ``<tool_call>{"name": .., "arguments": {..}}</tool_call>``
  blocks; a last block left open by a cut reply runs to the end of the text.
- ``mistral``: ``[TOOL_CALLS] [{"name": .., "arguments": {..}}, ..]`` (tokenizers before
  v11) and ``[TOOL_CALLS]name[ARGS]{..}`` (v11 on, one marker per call, ``[CALL_ID]id`` allowed).
- ``llama_json`` (Llama 3.x/4): ``{"name": .., "parameters": {..}}`` objects (or
  ``arguments``), after an optional ``<|python_tag|>``, several separated by ``;``; a JSON
  list of such objects too.
- ``pythonic`` (Llama 3.2/4, Mistral small): ``[get_weather(city='Paris', days=3), ..]``,
  optionally inside ``<|python_start|>``/``<|python_end|>``; a single bare call that opens the
  reply too.

The two explicit markups take any tool name (the scorer judges a call to a tool that does not
exist); bare JSON and pythonic calls count only for names in ``tool_names``, because prose
and code are full of brackets that are not calls.

Model output is hostile input: nothing is ``eval``'d. Python literals are read by
``pythonic_calls`` (no ``ast``), JSON by ``json`` once a linear scan has matched its brackets
and bounded its depth; every format visits each character a bounded number of times, so the
work is linear in the text, which is itself capped. Any string is accepted; whatever is not a
well-formed call stays in ``content``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from toolbench.models.pythonic_calls import CALL_NAME as _NAME
from toolbench.models.pythonic_calls import MAX_DEPTH, PythonCallReader
from toolbench.models.pythonic_calls import NotACall as _Invalid

#: Only this much of a reply is searched for calls; the rest is content (a reply this long was
#: cut by max_tokens long before a real call would be).
MAX_TEXT = 200_000
#: At most this many calls are read from one reply; later markup stays in the content.
MAX_CALLS = 64
#: Longest tool name accepted.
MAX_NAME = 256

HERMES_OPEN, HERMES_CLOSE = "<tool_call>", "</tool_call>"
MISTRAL_CALLS, MISTRAL_ARGS, MISTRAL_CALL_ID = "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"
#: Llama's markers around code or calls: dropped from the content when calls were found.
PYTHON_TAGS = ("<|python_tag|>", "<|python_start|>", "<|python_end|>")

_SEPARATORS = re.compile(r"[\s;,]*")
_JSON_MARKS = re.compile(r'[][{}"\\]')
_LIST_OPEN = re.compile(r"\[\s*([A-Za-z_][\w.\-]{0,255})\s*\(")


@dataclass(frozen=True)
class ToolCallParse:
    """A reply split into its text and its tool calls.

    ``calls`` are OpenAI tool calls (``{"id": "call_<n>", "type": "function", "function":
    {"name", "arguments": JSON text}}``), ``content`` the reply without their markup (stripped)
    and ``syntax`` the format they were written in (``""`` when there are none).
    """

    content: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    syntax: str = ""


@dataclass(frozen=True)
class _Found:
    """One call read from ``text[start:end]``, its arguments as JSON text."""

    start: int
    end: int
    name: str
    arguments: str


def _found(start: int, end: int, name: str, arguments: dict[str, Any]) -> _Found:
    r"""A call whose name and arguments a UTF-8 JSON record can carry: no NaN or infinity, and
    lone surrogates (``"\ud800"`` in JSON) kept as escapes."""
    try:
        text = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise _Invalid("arguments that JSON cannot write") from None
    if not _utf8(name):
        raise _Invalid("a name that UTF-8 cannot write")
    return _Found(start, end, name, text if _utf8(text) else json.dumps(arguments))


def parse_tool_calls(text: str, tool_names: Collection[str]) -> ToolCallParse:
    """Read the tool calls in ``text``: the first format that yields a call wins."""
    head, tail = text[:MAX_TEXT], text[MAX_TEXT:]
    known = frozenset(name for name in tool_names if isinstance(name, str))
    readers: tuple[tuple[str, Callable[[str, frozenset[str]], list[_Found]]], ...] = (
        ("hermes", _hermes),
        ("mistral", _mistral),
        ("llama_json", _bare_json),
        ("pythonic", _pythonic),
    )
    for syntax, reader in readers:
        found = reader(head, known)[:MAX_CALLS]
        if found:
            calls = [
                {"id": f"call_{index}", "type": "function",
                 "function": {"name": call.name, "arguments": call.arguments}}
                for index, call in enumerate(found)
            ]  # fmt: skip
            content = _content(head, found, drop_tags=syntax in ("llama_json", "pythonic"))
            return ToolCallParse((content + tail).strip(), calls, syntax)
    return ToolCallParse(text.strip())


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _content(text: str, found: list[_Found], drop_tags: bool) -> str:
    """``text`` without the calls' spans; what lies between two calls and is only
    separators (``;``, ``,``, spaces) goes with them."""
    pieces: list[str] = []
    position = 0
    for index, call in enumerate(found):
        gap = text[position : call.start]
        if not (index > 0 and _SEPARATORS.fullmatch(gap)):
            pieces.append(gap)
        position = call.end
    pieces.append(text[position:])
    content = "".join(pieces)
    if drop_tags:
        for tag in PYTHON_TAGS:
            content = content.replace(tag, "")
    return content


# ---- JSON ----


def _reject_constant(name: str) -> Any:
    raise _Invalid(name)  # NaN, Infinity: not JSON


def _load_json(text: str) -> Any:
    """``json.loads`` of a span whose depth :func:`_outer_spans` has bounded."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as error:  # JSONDecodeError; int too long to convert
        raise _Invalid(str(error)) from None


def _json_at(text: str, start: int, stop: int) -> tuple[Any, int]:
    """The JSON object or array opening at ``text[start]`` (closing before ``stop``), and
    where it ends; its brackets are matched by :func:`_outer_spans`, linear in the slice."""
    spans = _outer_spans(text[start:stop])
    if not spans or spans[0][0] != 0:
        raise _Invalid("unclosed or too deep")
    end = start + spans[0][1]
    return _load_json(text[start:end]), end


def _call_object(value: Any, known: frozenset[str] | None) -> tuple[str, dict[str, Any]]:
    """(name, arguments) of ``{"name": .., "arguments"|"parameters": {..}}``.

    ``known`` None: any name, arguments optional (explicit markup says it is a call); else the
    name must be known and the arguments present (bare JSON is a call only if it looks like one).
    Arguments written as a JSON string of an object (some models encode twice) are read too.
    """
    if not isinstance(value, dict):
        raise _Invalid("not an object")
    name = value.get("name")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME:
        raise _Invalid("no name")
    key = "arguments" if "arguments" in value else "parameters"
    if known is not None and (name not in known or key not in value):
        raise _Invalid("not a known tool")
    arguments = value.get(key, {})
    if isinstance(arguments, str):
        arguments = _whole_json(arguments, 0, len(arguments))
    if not isinstance(arguments, dict):
        raise _Invalid("arguments are not an object")
    return name, arguments


def _hermes(text: str, known: frozenset[str]) -> list[_Found]:
    del known  # explicit markup: any name
    found: list[_Found] = []
    start = text.find(HERMES_OPEN)
    while start >= 0 and len(found) < MAX_CALLS:
        body = start + len(HERMES_OPEN)
        close = text.find(HERMES_CLOSE, body)
        body_end = close if close >= 0 else len(text)
        end = close + len(HERMES_CLOSE) if close >= 0 else len(text)
        try:
            name, arguments = _call_object(_whole_json(text, body, body_end), None)
            found.append(_found(start, end, name, arguments))
        except _Invalid:
            pass  # stays in the content, as the model wrote it
        start = text.find(HERMES_OPEN, end)
    return found


def _whole_json(text: str, start: int, stop: int) -> Any:
    """The one JSON value that fills ``text[start:stop]`` (spaces around it allowed)."""
    while start < stop and text[start].isspace():
        start += 1
    if start >= stop or text[start] not in "[{":
        raise _Invalid("no JSON object")
    value, end = _json_at(text, start, stop)
    if text[end:stop].strip():
        raise _Invalid("text after the JSON")
    return value


def _mistral(text: str, known: frozenset[str]) -> list[_Found]:
    del known  # explicit markup: any name
    found: list[_Found] = []
    start = text.find(MISTRAL_CALLS)
    while start >= 0 and len(found) < MAX_CALLS:
        body = start + len(MISTRAL_CALLS)
        following = text.find(MISTRAL_CALLS, body)
        stop = following if following >= 0 else len(text)
        with contextlib.suppress(_Invalid):  # a malformed call stays in the content
            found.extend(_mistral_segment(text, start, body, stop))
        start = following
    return found


def _mistral_segment(text: str, start: int, body: int, stop: int) -> list[_Found]:
    """The calls after one ``[TOOL_CALLS]`` marker, up to the next marker."""
    index = body
    while index < stop and text[index].isspace():
        index += 1
    if index < stop and text[index] in "[{":  # before v11: a JSON list (or one object)
        value, end = _json_at(text, index, stop)
        objects = value if isinstance(value, list) else [value]
        if not objects:
            raise _Invalid("no calls")
        calls = [_call_object(item, None) for item in objects]
        return [_found(start, end, name, arguments) for name, arguments in calls]
    name_match = _NAME.match(text, index, stop)  # v11 on: name[CALL_ID]id[ARGS]{...}
    if name_match is None:
        raise _Invalid("no tool name")
    index = name_match.end()
    if text.startswith(MISTRAL_CALL_ID, index):
        id_end = min(
            (
                i
                for i in (text.find(MISTRAL_ARGS, index, stop), text.find("{", index, stop))
                if i >= 0
            ),
            default=-1,
        )
        if id_end < 0:
            raise _Invalid("no arguments")
        index = id_end
    if text.startswith(MISTRAL_ARGS, index):
        index += len(MISTRAL_ARGS)
    while index < stop and text[index].isspace():
        index += 1
    if index >= stop or text[index] != "{":
        raise _Invalid("no arguments")
    arguments, end = _json_at(text, index, stop)
    if not isinstance(arguments, dict):
        raise _Invalid("arguments are not an object")
    return [_found(start, end, name_match.group(), arguments)]


def _outer_spans(text: str) -> list[tuple[int, int]]:  # noqa: C901 -- one-pass bracket scanner
    """The outermost balanced ``{..}``/``[..]`` spans of ``text``, in order, in one pass.

    Quotes count only inside brackets (prose apostrophes and quotes do not hide what follows);
    a closing bracket with no opener of its kind is ignored; one that skips unclosed openers
    closes its own. A span nesting deeper than MAX_DEPTH is left out. Each opener keeps the
    spans closed directly inside it until it closes itself, so no span is looked at twice.
    """
    outer: list[tuple[int, int]] = []
    positions: list[int] = []  # the open brackets, innermost last
    deepest: list[int] = []  # how deep the nesting below each goes
    inside: dict[int, list[tuple[int, int]]] = {}  # stack level -> spans closed right in it
    openers = {"[": 0, "{": 0}
    in_string, skip = False, -1
    for match in _JSON_MARKS.finditer(text):
        index, char = match.start(), match.group()
        if index == skip:  # the character after a backslash in a string
            continue
        if in_string:
            if char == "\\":
                skip = index + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = bool(positions)
        elif char in "[{":
            positions.append(index)
            deepest.append(0)
            openers[char] += 1
        elif char != "\\":
            want = "[" if char == "]" else "{"
            if not openers[want]:
                continue
            below = 0
            while True:  # unclosed openers inside this span close with it
                start = positions.pop()
                kind = text[start]
                inside.pop(len(positions), None)
                openers[kind] -= 1
                below = max(below, deepest.pop() + (kind != want))
                if kind == want:
                    break
            if positions:
                deepest[-1] = max(deepest[-1], below + 1)
            if below < MAX_DEPTH:
                parent = inside.setdefault(len(positions) - 1, []) if positions else outer
                parent.append((start, index + 1))
    for level in range(len(positions)):  # spans inside openers that never closed
        outer.extend(inside.get(level, ()))
    return outer


def _bare_json(text: str, known: frozenset[str]) -> list[_Found]:
    if not known:
        return []
    found: list[_Found] = []
    for start, end in _outer_spans(text):
        if text.find('"name"', start, end) < 0:
            continue
        try:
            value = _load_json(text[start:end])
            objects = value if isinstance(value, list) and value else [value]
            calls = [_found(start, end, *_call_object(item, known)) for item in objects]
        except _Invalid:
            continue
        found.extend(calls)
        if len(found) >= MAX_CALLS:
            break
    return found


def _pythonic(text: str, known: frozenset[str]) -> list[_Found]:
    """Lists of known calls anywhere, or one bare known call that opens the reply.

    Each attempt reads forward from a candidate ``[name(``; a work budget (a few times the
    text) stops the search before overlapping failed attempts could add up to more.
    """
    if not known:
        return []
    reader = PythonCallReader(text, known)
    found: list[_Found] = []
    budget = 4 * len(text) + 1024
    lead = _after_tags(text)
    name = _NAME.match(text, lead)
    position = 0
    if name is not None and name.group() in known:
        try:
            name_and_arguments = reader.call(lead)  # moves reader.pos to the call's end
            found.append(_found(lead, reader.pos, *name_and_arguments))
            position = reader.pos
        except _Invalid:
            budget -= reader.pos - lead
    while budget > 0 and len(found) < MAX_CALLS:
        candidate = _LIST_OPEN.search(text, position)
        if candidate is None:
            break
        start = candidate.start()
        try:
            calls = reader.call_list(start)
            found += [_found(start, reader.pos, *call) for call in calls]
        except _Invalid:
            budget -= reader.pos - start
            position = start + 1
            continue
        position = reader.pos
    return found


def _after_tags(text: str) -> int:
    """Where the reply starts after spaces and Llama's leading code tags."""
    position, moved = 0, True
    while moved:
        moved = False
        while position < len(text) and text[position].isspace():
            position += 1
        for tag in PYTHON_TAGS:
            if text.startswith(tag, position):
                position += len(tag)
                moved = True
    return position
