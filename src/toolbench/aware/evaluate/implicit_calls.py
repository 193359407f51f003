"""Finding tool calls in an implicit-mode reply: rules 2 and 3 of the classifier.

``classify_reply`` (in ``implicit``) takes from here every call *attempt* in a reply, well formed
or not (``native_attempts`` for native tool calls, ``text_attempts`` for the text), and drops the
copies of the prompt's format line (``FORMAT_LINE``); the first well-formed call of an offered
API in reading order makes the reply a ``call``, and with none any other attempt makes it
``unparseable``. Names and arguments are read by ``implicit_values``. The rules:

2. **A well-formed call of an offered API anywhere wins** (``call``), even if the reply also
   asks something: the model did act. Calls are read from native ``tool_calls`` and from the
   text in six notations: ``API-Request: [Name(k='v')]``; a reply that is nothing but a
   readable pythonic call ``[A(k='v'), B()]`` or ``A(k='v')`` (Llama 3.2's tool format, which a
   local model's tools-mode parser leaves in the text when it names no offered tool; optionally
   in ``<|python_start|>``/``<|python_end|>``); a Python-style call ``Name(k='v')`` /
   ``api.Name(...)`` of an *offered* name (in prose or in a code fence); a JSON object with a
   name and arguments (``{"name"|"api"|"tool"|"function"|"action": .., "arguments"|"parameters"|
   "args"|...: ..}``, also wrapped as ``{"function": {...}}``); ReAct ``Action:`` + ``Action
   Input: {...}``; and ``<tool_call>{...}</tool_call>``. A bare ``word(...)`` in prose is only
   read when ``word`` is an offered API, so "a map (like Google Maps)" is no attempt. A JSON
   object is a call only with an arguments key or an offered name (``{"name": "Alice", "age":
   31}`` is data), and an echoed API description (``"description"``, a ``properties`` schema)
   is none; single-quoted Python dicts are read too. The first call in reading order (native
   calls first) names ``api`` and ``arguments``; ``functions.Name`` and the sanitised native
   tool name (``render.tool_name``) resolve to the offered API they stand for.

   **A copy of the prompt's format line is no attempt at all.** The implicit prompt shows the
   notation with a placeholder call, ``API-Request: [ApiName(key1='value1', key2='value2')]``
   (``FORMAT_LINE`` is read from ``prompts.IMPLICIT_SYSTEM`` itself, so it follows the prompt).
   Small models echo that line (SmolLM2-135M did in 10 of 24 replies); it names no API and
   gives no value, so it is quoted text, not a decision. In any notation, a call of the
   placeholder's name (when no offered API has that name) whose arguments are only the
   placeholder's own (``ApiName()``, ``ApiName(key1='value1')``) is such a copy: it is left out
   of the reply, and the rest of the reply is classified as if it were not there (a copy and
   nothing else is an empty reply, so ``unparseable``). A list of calls (``API-Request: [A(),
   B()]``) is read as its first call of an offered API, else as its first call that is not a
   copy.
3. **Otherwise a failed call attempt is ``unparseable``**, never abstention and never a call.
   A model that tried to call and botched it did not notice anything; a call it cannot make
   answers neither "yes" nor "no". Three kinds fail:

   * **a call of an API that was not offered**, in any notation (native calls too), e.g. a
     hallucinated ``SendEmail`` or the needed API an incomplete instance took away. The model
     did not see that the toolset falls short, so it is not ``cannot``; and the call cannot run,
     so it is not ``call``: counting it as one scored a model "correct" on complete instances
     for calling tools that do not exist (the placeholder's ``ApiName`` with values of its own,
     ``ApiName(city='Paris')``, is one of these). The verdict keeps ``api`` and
     ``offered=False`` for the report. ``unparseable`` is the only bucket that is wrong whatever
     the label (``metrics``: an unreadable prediction can never raise a score);
   * **the placeholder's arguments** in a call of an offered API (``GetWeather(key1='value1')``):
     like ``city=<city>`` below, a value the model copied instead of choosing;
   * **a malformed call**: unbalanced brackets, JSON that does not parse, a call with no name,
     or argument values that are not literals (``city=get_city()``, a bare word ``city=Paris``;
     JSON's ``true``/``false``/``null`` are accepted as literals).

   The first failed attempt in reading order gives the reason. Three readings are deliberately
   *not* attempts: a Python-style mention whose arguments are placeholders (``GetWeather(...)``,
   ``GetWeather(city=<city>)``) is how people name a function in prose; plain words in
   parentheses after an API named like an English word (``calculator(s)``) are prose; and
   ReAct's ``Action: Finish`` (ToolBench's way to end with an answer, or with
   ``give_up_and_restart``, read as ``cannot``) calls nothing. In the explicit notations a
   placeholder is malformed: there the model committed to a call.

Model output is hostile input: the candidates per notation are capped at ``_MAX_CANDIDATES``,
so the work stays linear in the (capped) text, and no regex can backtrack badly (every
repetition is bounded or cannot overlap with what follows it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any

from toolbench.aware.evaluate.implicit_values import (
    ARG_KEYS,
    NAME_KEYS,
    NON_CALL_ACTIONS,
    Malformed,
    Offered,
    Placeholder,
    balanced_end,
    json_arguments,
    mapping_call,
    python_arguments,
    read_value,
)
from toolbench.aware.evaluate.prompts import IMPLICIT_SYSTEM

#: Candidate calls examined per notation, so the work stays linear in the (capped) text.
_MAX_CANDIDATES = 50


# -- call attempts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One call attempt: its span and notation, then its name and arguments (or the problem)."""

    start: int
    end: int
    syntax: str
    name: str | None = None
    arguments: dict[str, Any] | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.name is not None


Claimed = list[tuple[int, int]]
Finder = Callable[[str, Offered, Claimed], Iterator[Attempt]]


def _attempt(
    start: int, end: int, syntax: str, read: Callable[[Any], tuple[str, dict]], source: Any
) -> Attempt:
    """Run ``read(source)``; a ``Malformed`` it raises makes the attempt a malformed one."""
    try:
        name, arguments = read(source)
    except Malformed as exc:
        return Attempt(start, end, syntax, problem=str(exc))
    return Attempt(start, end, syntax, name, arguments)


def native_attempts(tool_calls: Sequence[Mapping[str, Any]]) -> list[Attempt]:
    calls = islice(tool_calls, _MAX_CANDIDATES)
    return [_attempt(-1, -1, "native tool call", _native_call, call) for call in calls]


def _native_call(call: Any) -> tuple[str, dict[str, Any]]:
    function = call.get("function", call) if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        raise Malformed("a native tool call is not an object")
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise Malformed("a native tool call has no name")
    return name.strip(), json_arguments(function.get("arguments"), "arguments")


def text_attempts(text: str, offered: Offered) -> list[Attempt]:
    """Attempts in every notation; a span read by one notation is not read again by a later one
    (so the ``GetWeather(...)`` inside a broken ``API-Request: [GetWeather(...)`` stays broken)."""
    finders: tuple[Finder, ...] = (_whole_reply_attempts, _tag_attempts, _request_attempts)
    finders += (_react_attempts, _json_attempts, _python_attempts)
    attempts: list[Attempt] = []
    claimed: Claimed = []
    for finder in finders:
        for attempt in finder(text, offered, claimed):  # lazily, so it sees its own claims
            attempts.append(attempt)
            claimed.append((attempt.start, attempt.end))
    return attempts


def _inside(pos: int, claimed: Claimed) -> bool:
    return any(start <= pos < end for start, end in claimed)


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


# ``API-Request: [A(x=1), B()]`` or ``API-Request: A(x=1)``

_AR = "API-Request line"
_API_REQUEST = re.compile(r"API[-_ ]?Request[ \t]*:[ \t]*", re.IGNORECASE)
_CALL_HEAD = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*\(")


def _request_attempts(text: str, offered: Offered, claimed: Claimed) -> Iterator[Attempt]:
    for match in islice(_API_REQUEST.finditer(text), _MAX_CANDIDATES):
        if _inside(match.start(), claimed):
            continue
        pos = match.end()
        if text.startswith("[", pos):
            end = balanced_end(text, pos)
            if end is None:
                yield Attempt(
                    match.start(), _line_end(text, pos), _AR, problem="unbalanced brackets"
                )
                continue
            inner = text[pos + 1 : end - 1]
            yield _attempt(match.start(), end, _AR, _reader(offered), inner)
        elif head := _CALL_HEAD.match(text, pos):
            end = balanced_end(text, head.end() - 1) or _line_end(text, pos)
            yield _attempt(match.start(), end, _AR, _reader(offered), text[pos:end])
        else:
            yield Attempt(match.start(), _line_end(text, pos), _AR, problem="no call after it")


def _reader(offered: Offered) -> Callable[[str], tuple[str, dict[str, Any]]]:
    """Reads a call list to the call that stands for it: the first of an offered API, else
    the first that is not a copy of the format line."""

    def read(inner: str) -> tuple[str, dict[str, Any]]:
        calls = _call_list(inner)
        real = [call for call in calls if not FORMAT_LINE.copied(*call, offered)] or calls
        return next((call for call in real if offered.resolve(call[0])[1]), real[0])

    return read


def _call_list(inner: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls of ``A(x=1), B()``; every call in the list must be readable."""
    if not inner.strip():
        raise Malformed("empty API-Request")
    calls: list[tuple[str, dict[str, Any]]] = []
    pos = 0
    while len(calls) < _MAX_CANDIDATES:
        head = _CALL_HEAD.match(inner, pos)
        if head is None:
            raise Malformed("call syntax with no API name")
        end = balanced_end(inner, head.end() - 1)
        if end is None:
            raise Malformed("unbalanced brackets")
        try:
            calls.append((head.group(1), python_arguments(inner[head.end() : end - 1])))
        except Placeholder:
            raise Malformed("placeholder arguments") from None
        rest = inner[end:].lstrip()
        if not rest:
            break
        if not rest.startswith(","):
            raise Malformed("text after the call")
        pos = len(inner) - len(rest) + 1
    return calls


# The prompt's format line: ``API-Request: [ApiName(key1='value1', key2='value2')]``


@dataclass(frozen=True)
class FormatLine:
    """The placeholder call the implicit prompt shows as its notation: a copy of it is no call,
    and its values are placeholders wherever they appear (rules 2 and 3)."""

    name: str
    arguments: frozenset[tuple[str, str]]  # its (key, value) pairs; all values are strings

    def copied(self, name: str, arguments: dict[str, Any], offered: Offered) -> bool:
        """A call of the placeholder's name, with no argument but the placeholder's own."""
        if name != self.name or offered.resolve(name)[1]:
            return False
        return all(self._is_placeholder(key, value) for key, value in arguments.items())

    def placeholders(self, arguments: dict[str, Any]) -> list[str]:
        """The keys whose values are the placeholder's own (``key1='value1'``)."""
        return [key for key, value in arguments.items() if self._is_placeholder(key, value)]

    def _is_placeholder(self, key: Any, value: Any) -> bool:
        return isinstance(key, str) and isinstance(value, str) and (key, value) in self.arguments

    @classmethod
    def of(cls, prompt: str) -> FormatLine:
        """Read from the prompt's own ``API-Request`` line, the way a reply's line is read."""
        for line in prompt.splitlines():
            match = _API_REQUEST.match(line)
            if match and line.endswith("]") and line.startswith("[", match.end()):
                name, arguments = _call_list(line[match.end() + 1 : -1])[0]
                if all(isinstance(value, str) for value in arguments.values()):
                    return cls(name, frozenset(arguments.items()))
        raise RuntimeError("the implicit prompt has no readable API-Request format line")


FORMAT_LINE = FormatLine.of(IMPLICIT_SYSTEM)


# A reply that is nothing but ``[A(x=1), B()]`` or ``A(x=1)``: the pythonic tool-call format

_PYTHON_OPEN = ("<|python_tag|>", "<|python_start|>")
_PYTHON_CLOSE = ("", "<|python_end|>", "<|eom_id|>")
_WHOLE = "pythonic call reply"


def _whole_reply_attempts(text: str, offered: Offered, claimed: Claimed) -> Iterator[Attempt]:
    """Llama 3.2's pythonic calls, which a local model's tools-mode parser leaves in the text
    when they name no offered tool. Only a readable call counts: the whole reply is then the
    call, so it is no prose, whatever its name; an unreadable one is left to the rules for
    prose (``Noted (see above)`` is a whole reply of that shape)."""
    start = _skip_space(text, 0)
    opener = next((tag for tag in _PYTHON_OPEN if text.startswith(tag, start)), "")
    start = _skip_space(text, start + len(opener))
    listed = text.startswith("[", start)
    if not (listed or _CALL_HEAD.match(text, start)):
        return
    end = balanced_end(text, start)
    if end is None or text[end:].strip() not in _PYTHON_CLOSE:
        return
    inner = text[start + 1 : end - 1] if listed else text[start:end]
    attempt = _attempt(start, end, _WHOLE, _reader(offered), inner)
    if attempt.ok:
        yield attempt


def _skip_space(text: str, pos: int) -> int:
    return len(text) - len(text[pos:].lstrip()) if pos < len(text) else pos


# ``GetWeather(city='Paris')`` / ``api.GetWeather(...)`` of an offered name

_DEFINITION = re.compile(r"\b(?:def|class|function|func|fn)\s+$")
_PLACEHOLDER = re.compile(r"<[^<>\n]{1,40}>|…")
_PLAIN_WORDS = re.compile(r"[A-Za-z ,;-]*")
_PY = "python-style call"


@lru_cache(maxsize=64)
def _python_call_pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    if not names:
        return None
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})\(")


def _python_attempts(text: str, offered: Offered, claimed: Claimed) -> Iterator[Attempt]:
    pattern = _python_call_pattern(offered.names)
    if pattern is None:
        return
    for match in islice(pattern.finditer(text), _MAX_CANDIDATES):
        start, paren = match.start(), match.end() - 1
        if _inside(start, claimed) or _DEFINITION.search(text[max(0, start - 16) : start]):
            continue
        end = balanced_end(text, paren)
        if end is None:
            yield Attempt(start, _line_end(text, start), _PY, problem="unbalanced brackets")
            continue
        name, body = text[start:paren], text[paren + 1 : end - 1]
        try:
            yield Attempt(start, end, _PY, name, python_arguments(body))
        except Placeholder:
            continue
        except Malformed as exc:
            if not _mention(name, body):
                yield Attempt(start, end, _PY, problem=str(exc))


def _mention(name: str, body: str) -> bool:
    """Unreadable parentheses that are prose, not a botched call: a placeholder
    (``GetWeather(city=<city>)``), or plain words after an API named like an English word
    (``search(es)``, ``calculator(s)``)."""
    if _PLACEHOLDER.search(body):
        return True
    return name.isalpha() and name.islower() and _PLAIN_WORDS.fullmatch(body) is not None


# JSON objects: ``{"name": .., "arguments": ..}`` and its relatives

_KEYS = "|".join(NAME_KEYS)
_CALL_OBJECT_START = re.compile(rf"""\{{\s*["']?(?:{_KEYS})["']?\s*:""")
_ARG_KEY_NEARBY = re.compile("|".join(rf"""["']{key}["']\s*:""" for key in ARG_KEYS))


def _json_attempts(text: str, offered: Offered, claimed: Claimed) -> Iterator[Attempt]:
    # Lazy, so an object inside a call object found earlier in this loop is skipped too.
    starts = (i for i, char in enumerate(text) if char == "{" and not _inside(i, claimed))
    for start in islice(starts, _MAX_CANDIDATES):
        try:
            value, end = read_value(text, start)
        except Malformed as exc:
            if _looks_like_call(text, start, offered):
                yield Attempt(start, _line_end(text, start), "JSON call object", problem=str(exc))
            continue
        if not isinstance(value, Mapping):
            continue
        try:
            call = mapping_call(value, offered, required=False)
        except Malformed as exc:
            yield Attempt(start, end, "JSON call object", problem=str(exc))
            continue
        if call is not None:
            yield Attempt(start, end, "JSON call object", *call)


def _looks_like_call(text: str, start: int, offered: Offered) -> bool:
    """A broken object that starts like a call and has arguments or an offered name nearby."""
    if not _CALL_OBJECT_START.match(text, start):
        return False
    window = text[start : start + 300]
    return bool(_ARG_KEY_NEARBY.search(window)) or any(name in window for name in offered.names)


# ``<tool_call>{...}</tool_call>`` and ReAct ``Action:`` / ``Action Input:``

_TAG_OPEN = re.compile(r"<tool_call>", re.IGNORECASE)
_TAG_CLOSE = re.compile(r"</tool_call>", re.IGNORECASE)
_FENCE_START = re.compile(r"\s*(?:```[\w-]*)?\s*")
_TAG = "<tool_call> block"


def _skip_fence(text: str, pos: int) -> int:
    match = _FENCE_START.match(text, pos)
    return match.end() if match else pos


def _tag_attempts(text: str, offered: Offered, claimed: Claimed) -> Iterator[Attempt]:
    for match in islice(_TAG_OPEN.finditer(text), _MAX_CANDIDATES):
        if _inside(match.start(), claimed):
            continue
        close = _TAG_CLOSE.search(text, match.end())
        body = text[: close.start()] if close else text
        try:
            call, end = _tag_call(body, _skip_fence(body, match.end()), offered)
        except Malformed as exc:
            stop = close.end() if close else _line_end(text, match.end())
            yield Attempt(match.start(), stop, _TAG, problem=str(exc))
            continue
        yield Attempt(match.start(), close.end() if close else end, _TAG, *call)


def _tag_call(body: str, pos: int, offered: Offered) -> tuple[tuple[str, dict[str, Any]], int]:
    """The first call of the object (or list of objects) at ``pos``; all must be calls."""
    if body[pos : pos + 1] not in ("{", "["):
        raise Malformed("<tool_call> does not hold a JSON object")
    value, end = read_value(body, pos)
    items = value if isinstance(value, list) else [value]
    calls = [
        mapping_call(item, offered, required=True) for item in items if isinstance(item, Mapping)
    ]
    if not calls or len(calls) != len(items) or calls[0] is None:
        raise Malformed("<tool_call> does not hold a call")
    return calls[0], end


_ACTION = re.compile(r"^[ \t>*#\-]*Action[ \t]*(?:\*\*)?:(?:\*\*)?[ \t]*(.*)$", re.I | re.M)
_ACTION_INPUT = re.compile(r"^[ \t>*#\-]*Action[ \t_]*Input[ \t]*(?:\*\*)?:(?:\*\*)?", re.I | re.M)
_NAME_TOKEN = re.compile(r"[A-Za-z_][\w.\-]*")
_REACT = "ReAct Action"


def _react_attempts(text: str, offered: Offered, claimed: Claimed) -> Iterator[Attempt]:
    actions = list(islice(_ACTION.finditer(text), _MAX_CANDIDATES))
    for n, action in enumerate(actions):
        limit = actions[n + 1].start() if n + 1 < len(actions) else len(text)
        if not _inside(action.start(), claimed):
            yield from _react_attempt(text[:limit], action, offered)


def _react_attempt(text: str, action: re.Match[str], offered: Offered) -> Iterator[Attempt]:
    """``text`` ends where the next ``Action:`` line starts."""
    name = action.group(1).strip().strip("`*\"'").strip()
    is_name = _NAME_TOKEN.fullmatch(name) is not None
    known = is_name and offered.resolve(name)[1]
    if not known and name.lower() in NON_CALL_ACTIONS:
        return  # ToolBench's "Action: Finish" gives the answer; it calls nothing
    given = _ACTION_INPUT.search(text, action.end())
    if given is None:
        if known:
            yield Attempt(action.start(), action.end(), _REACT, problem="no Action Input")
        return  # "Action: ask the user" in prose is no call
    stop = _line_end(text, given.end())
    pos = _skip_fence(text, given.end())
    try:
        if not is_name:
            raise Malformed("call syntax with no API name")
        if text[pos : pos + 1] != "{":
            raise Malformed("Action Input is not a JSON object")
        value, stop = read_value(text, pos)
        arguments = json_arguments(value, "arguments")
    except Malformed as exc:
        yield Attempt(action.start(), stop, _REACT, problem=str(exc))
        return
    yield Attempt(action.start(), stop, _REACT, name, arguments)
