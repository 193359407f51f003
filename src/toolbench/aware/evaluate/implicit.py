"""Sorting a free-form reply of the implicit awareness mode into one of five buckets.

In implicit mode the model is never asked "can you?"; it just continues the dialogue, and what
it wrote is sorted, deterministically, into ``call``, ``ask``, ``cannot``, ``answer`` or
``unparseable``. The rules, in the order they are applied:

1. **What counts as the reply.** At most ``MAX_CHARS`` characters are read, and the reply ends
   where the model starts writing the user's next turn (a ``User:`` / ``Human:`` line or a chat
   template marker): what a model puts in the user's mouth is not its own decision.
2. **A well-formed call anywhere wins** (``call``), even if the reply also asks something: the
   model did act. Calls are read from native ``tool_calls`` and from the text in five notations:
   ``API-Request: [Name(k='v')]``; a Python-style call ``Name(k='v')`` / ``api.Name(...)`` of an
   *offered* name (in prose or in a code fence); a JSON object with a name and arguments
   (``{"name"|"api"|"tool"|"function"|"action": .., "arguments"|"parameters"|"args"|...: ..}``,
   also wrapped as ``{"function": {...}}``); ReAct ``Action:`` + ``Action Input: {...}``; and
   ``<tool_call>{...}</tool_call>``. In the explicit notations (all but the bare Python style) a
   name that is not offered is still a call, with ``offered=False``; a bare ``word(...)`` in prose
   is only a call when ``word`` is an offered API, so "a map (like Google Maps)" is not one.
   A JSON object is a call only with an arguments key or an offered name (``{"name": "Alice",
   "age": 31}`` is data), and an echoed API description (``"description"``, a ``properties``
   schema) is none; single-quoted Python dicts are read too. The first call in reading order
   (native calls first) names ``api`` and ``arguments``; ``functions.Name`` and the sanitised
   native tool name (``render.tool_name``) resolve to the offered API they stand for.
3. **Otherwise a malformed call attempt is ``unparseable``**, never abstention: unbalanced
   brackets, JSON that does not parse, a call with no name, or argument values that are not
   literals (``city=get_city()``, a bare word ``city=Paris``; JSON's ``true``/``false``/``null``
   are accepted as literals). A model that tried to call and botched it did not notice anything.
   Three readings are deliberately *not* attempts: a Python-style mention whose arguments are
   placeholders (``GetWeather(...)``, ``GetWeather(city=<city>)``) is how people name a function
   in prose; plain words in parentheses after an API named like an English word
   (``calculator(s)``) are prose; and ReAct's ``Action: Finish`` (ToolBench's way to end with
   an answer, or with ``give_up_and_restart``, read as ``cannot``) calls nothing. In the
   explicit notations a placeholder is malformed: there the model committed to a call.
4. **Empty** (or only whitespace) is ``unparseable``.
5. **An explicit statement that the tools do not fit is ``cannot``**: "none of the available
   APIs", "no suitable tool", "I don't have access to a tool that...", "cannot ... with the
   provided tools", "not supported by the given APIs" (and a few non-English forms). This wins
   over a question in the same reply: once the model has judged the toolset, a following
   question is nearly always an offer or a workaround, and the judgement is what the benchmark
   measures.
6. **A request for information is ``ask``**: a question sentence that is not a polite closing
   or an offer ("Is there anything else...?", "Would you like me to...?", "Shall I...?"), or an
   imperative request ("Please provide...", "Let me know which...", "I need the date").
7. **A generic statement of inability** ("I'm sorry, I can't do that") is ``cannot`` when the
   reply asks for nothing; with a request for information it is read as waiting for that
   information, so rule 6 decides (``ask``).
8. Otherwise ``answer``.

An inability sentence that blames missing *information* ("I can't call the API until you tell
me the date", "I cannot proceed with the available tools without knowing the city") is not a
``cannot`` cue at all, in either rule 5 or 7: the model noticed a gap in the request, not in the
tools. Rhetorical questions that the reply answers itself still read as questions; that is rare
in replies to a tool-use dialogue and keeping the rule simple keeps it predictable.

Model output is hostile input: it is read with ``json`` and ``ast`` (``literal_eval`` of single
nodes; ``ast.parse`` is only asked for syntax), never evaluated or imported from; the text is
capped, bracket scans are capped at ``_MAX_CALL_CHARS`` and the candidates per notation at
``_MAX_CANDIDATES``, and no regex can backtrack badly (every repetition is bounded or cannot
overlap with what follows it).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any

from toolbench.aware.evaluate.render import tool_name
from toolbench.aware.sources._calls import CallSyntaxError, to_json_value

BUCKETS = ("call", "ask", "cannot", "answer", "unparseable")

#: Replies are hostile input: nothing past this is read.
MAX_CHARS = 20_000
#: A call whose brackets do not close within this many characters counts as unbalanced.
_MAX_CALL_CHARS = 4_000
#: Candidate calls examined per notation, so the work stays linear in the (capped) text.
_MAX_CANDIDATES = 50


@dataclass(frozen=True)
class ImplicitVerdict:
    """Where a reply landed, with the first call's details when it is a ``call``."""

    bucket: str  # one of BUCKETS
    api: str | None = None  # the first call's API name ("call" only)
    arguments: dict[str, Any] | None = None  # that call's literal arguments
    offered: bool | None = None  # whether ``api`` is among the offered APIs (None: no call)
    reason: str = ""  # why, in a few words


def classify_reply(
    text: str, api_names: Sequence[str], tool_calls: Sequence[Mapping[str, Any]] = ()
) -> ImplicitVerdict:
    """The bucket of one reply; ``api_names`` are the APIs the prompt offered."""
    offered = _Offered.of(api_names)
    reply = _reply_text(text)
    attempts = [*_native_attempts(tool_calls), *_text_attempts(reply, offered)]
    attempts.sort(key=lambda attempt: attempt.start)
    for attempt in attempts:
        if attempt.ok:
            assert attempt.name is not None
            api, is_offered = offered.resolve(attempt.name)
            return ImplicitVerdict("call", api, attempt.arguments, is_offered, attempt.syntax)
    if attempts:
        return ImplicitVerdict("unparseable", reason=f"malformed call: {attempts[0].problem}")
    if not reply.strip():
        return ImplicitVerdict("unparseable", reason="empty reply")
    bucket, reason = _classify_prose(reply)
    return ImplicitVerdict(bucket, reason=reason)


# -- the reply and the offered names -------------------------------------------------------------

_NEXT_TURN = re.compile(
    r"^[ \t]*(?:User|Human)[ \t]*:|<\|(?:im_start|im_end|start_header_id|eot_id|endoftext)\|>|</s>",
    re.IGNORECASE | re.MULTILINE,
)


def _reply_text(text: str) -> str:
    text = text[:MAX_CHARS]
    match = _NEXT_TURN.search(text)
    return text[: match.start()] if match else text


@dataclass(frozen=True)
class _Offered:
    names: tuple[str, ...]
    #: Every spelling that means an offered API (its native tool name too) -> the API name.
    aliases: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, api_names: Sequence[str]) -> _Offered:
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


# -- call attempts -------------------------------------------------------------------------------


class _Malformed(Exception):
    """A call attempt that cannot be read; the message says why."""


class _Placeholder(Exception):
    """Arguments written as ``...`` or ``<city>``: a mention of an API, not a call."""


@dataclass(frozen=True)
class _Attempt:
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
Finder = Callable[[str, _Offered, Claimed], Iterator[_Attempt]]

_PARSE_ERRORS = (SyntaxError, ValueError, TypeError, RecursionError, MemoryError)
_NON_CALL_ACTIONS = frozenset({"finish", "final answer", "final_answer", "none", "n/a", "null"})


def _attempt(
    start: int, end: int, syntax: str, read: Callable[[Any], tuple[str, dict]], source: Any
) -> _Attempt:
    """Run ``read(source)``; a ``_Malformed`` it raises makes the attempt a malformed one."""
    try:
        name, arguments = read(source)
    except _Malformed as exc:
        return _Attempt(start, end, syntax, problem=str(exc))
    return _Attempt(start, end, syntax, name, arguments)


def _native_attempts(tool_calls: Sequence[Mapping[str, Any]]) -> list[_Attempt]:
    calls = islice(tool_calls, _MAX_CANDIDATES)
    return [_attempt(-1, -1, "native tool call", _native_call, call) for call in calls]


def _native_call(call: Any) -> tuple[str, dict[str, Any]]:
    function = call.get("function", call) if isinstance(call, Mapping) else None
    if not isinstance(function, Mapping):
        raise _Malformed("a native tool call is not an object")
    name = function.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Malformed("a native tool call has no name")
    return name.strip(), _json_arguments(function.get("arguments"), "arguments")


def _text_attempts(text: str, offered: _Offered) -> list[_Attempt]:
    """Attempts in every notation; a span read by one notation is not read again by a later one
    (so the ``GetWeather(...)`` inside a broken ``API-Request: [GetWeather(...)`` stays broken)."""
    finders: tuple[Finder, ...] = (_tag_attempts, _request_attempts, _react_attempts)
    finders += (_json_attempts, _python_attempts)
    attempts: list[_Attempt] = []
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


def _request_attempts(text: str, offered: _Offered, claimed: Claimed) -> Iterator[_Attempt]:
    for match in islice(_API_REQUEST.finditer(text), _MAX_CANDIDATES):
        if _inside(match.start(), claimed):
            continue
        pos = match.end()
        if text.startswith("[", pos):
            end = _balanced_end(text, pos)
            if end is None:
                yield _Attempt(
                    match.start(), _line_end(text, pos), _AR, problem="unbalanced brackets"
                )
                continue
            inner = text[pos + 1 : end - 1]
            yield _attempt(match.start(), end, _AR, _call_list, inner)
        elif head := _CALL_HEAD.match(text, pos):
            end = _balanced_end(text, head.end() - 1) or _line_end(text, pos)
            yield _attempt(match.start(), end, _AR, _call_list, text[pos:end])
        else:
            yield _Attempt(match.start(), _line_end(text, pos), _AR, problem="no call after it")


def _call_list(inner: str) -> tuple[str, dict[str, Any]]:
    """The first of ``A(x=1), B()``; every call in the list must be readable."""
    if not inner.strip():
        raise _Malformed("empty API-Request")
    calls: list[tuple[str, dict[str, Any]]] = []
    pos = 0
    while len(calls) < _MAX_CANDIDATES:
        head = _CALL_HEAD.match(inner, pos)
        if head is None:
            raise _Malformed("call syntax with no API name")
        end = _balanced_end(inner, head.end() - 1)
        if end is None:
            raise _Malformed("unbalanced brackets")
        try:
            calls.append((head.group(1), _python_arguments(inner[head.end() : end - 1])))
        except _Placeholder:
            raise _Malformed("placeholder arguments") from None
        rest = inner[end:].lstrip()
        if not rest:
            break
        if not rest.startswith(","):
            raise _Malformed("text after the call")
        pos = len(inner) - len(rest) + 1
    return calls[0]


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


def _python_attempts(text: str, offered: _Offered, claimed: Claimed) -> Iterator[_Attempt]:
    pattern = _python_call_pattern(offered.names)
    if pattern is None:
        return
    for match in islice(pattern.finditer(text), _MAX_CANDIDATES):
        start, paren = match.start(), match.end() - 1
        if _inside(start, claimed) or _DEFINITION.search(text[max(0, start - 16) : start]):
            continue
        end = _balanced_end(text, paren)
        if end is None:
            yield _Attempt(start, _line_end(text, start), _PY, problem="unbalanced brackets")
            continue
        name, body = text[start:paren], text[paren + 1 : end - 1]
        try:
            yield _Attempt(start, end, _PY, name, _python_arguments(body))
        except _Placeholder:
            continue
        except _Malformed as exc:
            if not _mention(name, body):
                yield _Attempt(start, end, _PY, problem=str(exc))


def _mention(name: str, body: str) -> bool:
    """Unreadable parentheses that are prose, not a botched call: a placeholder
    (``GetWeather(city=<city>)``), or plain words after an API named like an English word
    (``search(es)``, ``calculator(s)``)."""
    if _PLACEHOLDER.search(body):
        return True
    return name.isalpha() and name.islower() and _PLAIN_WORDS.fullmatch(body) is not None


_JSON_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}


def _python_arguments(body: str) -> dict[str, Any]:
    """The literal arguments of ``f(<body>)``; positional ones are named ``arg0``, ``arg1``..."""
    try:
        call = ast.parse(f"_({body})", mode="eval").body
    except _PARSE_ERRORS:
        raise _Malformed("arguments are not valid call syntax") from None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "_"):
        raise _Malformed("arguments are not valid call syntax")
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        raise _Malformed("arguments are not literals")
    arguments = {f"arg{i}": _literal(node) for i, node in enumerate(call.args)}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise _Malformed("arguments are not literals")
        arguments[keyword.arg] = _literal(keyword.value)
    return arguments


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        raise _Placeholder
    try:
        return to_json_value(ast.literal_eval(node))
    except (*_PARSE_ERRORS, CallSyntaxError):
        raise _Malformed("arguments are not literals") from None


# JSON objects: ``{"name": .., "arguments": ..}`` and its relatives

_NAME_KEYS = ("name", "api", "api_name", "tool", "tool_name", "function", "function_name", "action")
_ARG_KEYS = ("arguments", "parameters", "args", "params", "tool_input", "action_input", "input")
_STRING_INPUT_KEYS = frozenset({"tool_input", "action_input", "input"})
_KEYS = "|".join(_NAME_KEYS)
_CALL_OBJECT_START = re.compile(rf"""\{{\s*["']?(?:{_KEYS})["']?\s*:""")
_ARG_KEY_NEARBY = re.compile("|".join(rf"""["']{key}["']\s*:""" for key in _ARG_KEYS))
_DECODER = json.JSONDecoder()


def _json_attempts(text: str, offered: _Offered, claimed: Claimed) -> Iterator[_Attempt]:
    # Lazy, so an object inside a call object found earlier in this loop is skipped too.
    starts = (i for i, char in enumerate(text) if char == "{" and not _inside(i, claimed))
    for start in islice(starts, _MAX_CANDIDATES):
        try:
            value, end = _read_value(text, start)
        except _Malformed as exc:
            if _looks_like_call(text, start, offered):
                yield _Attempt(start, _line_end(text, start), "JSON call object", problem=str(exc))
            continue
        if not isinstance(value, Mapping):
            continue
        try:
            call = _mapping_call(value, offered, required=False)
        except _Malformed as exc:
            yield _Attempt(start, end, "JSON call object", problem=str(exc))
            continue
        if call is not None:
            yield _Attempt(start, end, "JSON call object", *call)


def _looks_like_call(text: str, start: int, offered: _Offered) -> bool:
    """A broken object that starts like a call and has arguments or an offered name nearby."""
    if not _CALL_OBJECT_START.match(text, start):
        return False
    window = text[start : start + 300]
    return bool(_ARG_KEY_NEARBY.search(window)) or any(name in window for name in offered.names)


def _read_value(text: str, pos: int) -> tuple[Any, int]:
    """A JSON value at ``pos``, or a Python literal (single quotes, True/None) as a fallback."""
    try:
        return _DECODER.raw_decode(text, pos)
    except (ValueError, RecursionError):
        pass
    end = _balanced_end(text, pos)
    if end is None:
        raise _Malformed("unbalanced brackets")
    try:
        return to_json_value(ast.literal_eval(text[pos:end])), end
    except (*_PARSE_ERRORS, CallSyntaxError):
        raise _Malformed("broken JSON") from None


def _mapping_call(
    obj: Mapping[str, Any], offered: _Offered, *, required: bool
) -> tuple[str, dict[str, Any]] | None:
    """(name, arguments) of a call-shaped object; None when the object is not a call at all."""
    function = obj.get("function")
    if isinstance(function, Mapping):  # {"type": "function", "function": {...}}, unwrapped once
        obj = function
    name_key = next((key for key in _NAME_KEYS if key in obj), None)
    arg_key = next((key for key in _ARG_KEYS if key in obj), None)
    name = obj.get(name_key) if name_key else None
    if not isinstance(name, str) or not name.strip():
        if required or (name_key and arg_key):
            raise _Malformed("call syntax with no API name")
        return None
    name = name.strip()
    known = offered.resolve(name)[1]
    if not required and not (arg_key or known):
        return None  # {"name": "John", "age": 3} is data, not a call
    if _is_schema(obj, arg_key) or (not known and name.lower() in _NON_CALL_ACTIONS):
        return None
    return name, _json_arguments(obj.get(arg_key) if arg_key else None, arg_key)


def _is_schema(obj: Mapping[str, Any], arg_key: str | None) -> bool:
    """An API description echoed back (``description``, ``{"type": "object", "properties"}``)."""
    params = obj.get(arg_key) if arg_key else None
    return "description" in obj or (isinstance(params, Mapping) and "properties" in params)


def _json_arguments(value: Any, key: str | None) -> dict[str, Any]:
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
            raise _Malformed("broken JSON arguments") from None
        if value is None:
            return {}
    if not isinstance(value, Mapping):
        raise _Malformed("arguments are not an object")
    return dict(value)


# ``<tool_call>{...}</tool_call>`` and ReAct ``Action:`` / ``Action Input:``

_TAG_OPEN = re.compile(r"<tool_call>", re.IGNORECASE)
_TAG_CLOSE = re.compile(r"</tool_call>", re.IGNORECASE)
_FENCE_START = re.compile(r"\s*(?:```[\w-]*)?\s*")
_TAG = "<tool_call> block"


def _skip_fence(text: str, pos: int) -> int:
    match = _FENCE_START.match(text, pos)
    return match.end() if match else pos


def _tag_attempts(text: str, offered: _Offered, claimed: Claimed) -> Iterator[_Attempt]:
    for match in islice(_TAG_OPEN.finditer(text), _MAX_CANDIDATES):
        if _inside(match.start(), claimed):
            continue
        close = _TAG_CLOSE.search(text, match.end())
        body = text[: close.start()] if close else text
        try:
            call, end = _tag_call(body, _skip_fence(body, match.end()), offered)
        except _Malformed as exc:
            stop = close.end() if close else _line_end(text, match.end())
            yield _Attempt(match.start(), stop, _TAG, problem=str(exc))
            continue
        yield _Attempt(match.start(), close.end() if close else end, _TAG, *call)


def _tag_call(body: str, pos: int, offered: _Offered) -> tuple[tuple[str, dict[str, Any]], int]:
    """The first call of the object (or list of objects) at ``pos``; all must be calls."""
    if body[pos : pos + 1] not in ("{", "["):
        raise _Malformed("<tool_call> does not hold a JSON object")
    value, end = _read_value(body, pos)
    items = value if isinstance(value, list) else [value]
    calls = [
        _mapping_call(item, offered, required=True) for item in items if isinstance(item, Mapping)
    ]
    if not calls or len(calls) != len(items) or calls[0] is None:
        raise _Malformed("<tool_call> does not hold a call")
    return calls[0], end


_ACTION = re.compile(r"^[ \t>*#\-]*Action[ \t]*(?:\*\*)?:(?:\*\*)?[ \t]*(.*)$", re.I | re.M)
_ACTION_INPUT = re.compile(r"^[ \t>*#\-]*Action[ \t_]*Input[ \t]*(?:\*\*)?:(?:\*\*)?", re.I | re.M)
_NAME_TOKEN = re.compile(r"[A-Za-z_][\w.\-]*")
_REACT = "ReAct Action"


def _react_attempts(text: str, offered: _Offered, claimed: Claimed) -> Iterator[_Attempt]:
    actions = list(islice(_ACTION.finditer(text), _MAX_CANDIDATES))
    for n, action in enumerate(actions):
        limit = actions[n + 1].start() if n + 1 < len(actions) else len(text)
        if not _inside(action.start(), claimed):
            yield from _react_attempt(text[:limit], action, offered)


def _react_attempt(text: str, action: re.Match[str], offered: _Offered) -> Iterator[_Attempt]:
    """``text`` ends where the next ``Action:`` line starts."""
    name = action.group(1).strip().strip("`*\"'").strip()
    is_name = _NAME_TOKEN.fullmatch(name) is not None
    known = is_name and offered.resolve(name)[1]
    if not known and name.lower() in _NON_CALL_ACTIONS:
        return  # ToolBench's "Action: Finish" gives the answer; it calls nothing
    given = _ACTION_INPUT.search(text, action.end())
    if given is None:
        if known:
            yield _Attempt(action.start(), action.end(), _REACT, problem="no Action Input")
        return  # "Action: ask the user" in prose is no call
    stop = _line_end(text, given.end())
    pos = _skip_fence(text, given.end())
    try:
        if not is_name:
            raise _Malformed("call syntax with no API name")
        if text[pos : pos + 1] != "{":
            raise _Malformed("Action Input is not a JSON object")
        value, stop = _read_value(text, pos)
        arguments = _json_arguments(value, "arguments")
    except _Malformed as exc:
        yield _Attempt(action.start(), stop, _REACT, problem=str(exc))
        return
    yield _Attempt(action.start(), stop, _REACT, name, arguments)


# -- prose: cannot, ask, answer ------------------------------------------------------------------

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_T = r"(?:apis?|tools?|functions?|endpoints?|plugins?)"
_AV = r"(?:available|provided|given|listed|offered|existing|current|accessible|supplied)"
_ADJ = (
    r"(?:suitable|relevant|appropriate|applicable|matching|available|existing|such|specific"
    r"|dedicated|single|proper|compatible|corresponding|provided|listed|given|usable|right)"
)
_NEG = r"(?:cannot|can't|can not|unable to|not able to|won't be able to)"
_CAN = r"(?:can|could|will|would|allows?|supports?|provides?|fits?|matches?|handles?|covers?|does)"


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))


#: Statements about the toolset (rule 5).
_TOOLSET_CANNOT = _any(
    rf"\bnone of (?:the |these |those |my |your |our )?(?:{_AV} )?{_T}\b",
    rf"\bnone of (?:them|these|those) (?:(?:is |are |seems? )?(?:{_ADJ}|able|capable)|{_CAN})\b",
    rf"\bno (?:{_ADJ} )+{_T}\b(?! calls?| (?:is |are )?(?:needed|required|necessary))",
    rf"\bno {_T} (?:(?:is |are )?(?:available|provided|offered|among)|exists?|that|which|for"
    rf"|{_CAN})\b",
    rf"\b(?:do not|don't|does not|doesn't) (?:currently )?(?:have|include|contain|offer|provide) "
    rf"(?:access to )?(?:(?:a|an|any|the) )?(?:{_ADJ} )*(?:{_T}|capabilit(?:y|ies)|ability)\b"
    r"(?! calls?)",
    rf"\b(?:isn't|is not|aren't|are not) (?:an?|any) (?:{_ADJ} )*{_T}\b(?! calls?| requests?)",
    rf"\b{_NEG}\b[^.?!]{{0,80}}\b(?:with|using|via|through|from) (?:any of )?"
    rf"(?:the |these |those |my |your )?(?:{_AV} )?{_T}\b",
    rf"\b(?:{_AV} {_T}|{_T} (?:{_AV}|(?:that |which )?(?:i|we) (?:have|can use)))\b[^.?!]{{0,60}}"
    rf"\b(?:{_NEG}|do not|don't|does not|doesn't|lacks?) (?:\w+ ){{0,2}}?"
    r"(?:support|allow|cover|handle|include|offer|provide|let|perform|fit|match|do|help)",
    rf"\bnot (?:supported|covered|possible|available|offered|provided|doable) "
    rf"(?:by|with|through|via|among|in|using) (?:any of )?(?:the |these |my )?(?:{_AV} )?{_T}\b",
    rf"\b(?:beyond|outside|out of) (?:the scope of )?(?:the |my |these )?(?:{_AV} )?"
    rf"(?:{_T}|capabilities|toolset|scope)\b",
    rf"\black(?:s|ing)? (?:(?:a|an|any|the) )?(?:{_ADJ} )*(?:{_T}|capabilit(?:y|ies)|ability)\b",
    rf"\b(?:{_T}|capability|functionality) (?:for|to|that can|that could)\b[^.?!]{{0,60}}"
    r"\b(?:isn't|is not|aren't|are not|wasn't|was not) (?:currently )?"
    r"(?:available|provided|offered|included|listed|among)\b",
    rf"\b(?:don't|doesn't|do not|does not|cannot|can't) (?:match|fit|correspond to) "
    rf"any of (?:the |these |my )?(?:{_AV} )?{_T}\b",
    r"\bgive_up_and_restart\b",
    r"\bninguna de las (?:apis|herramientas|funciones)\b",
    r"\bno tengo (?:acceso a )?(?:una|ninguna) (?:api|herramienta|función)\b",
    r"\bkeine (?:passende|geeignete|verfügbare)n? (?:api|funktion|werkzeug|tool)",
    r"\baucune? (?:des |de ces )?(?:api|outils?|fonctions?)\b",
)
#: First-person inability without naming the tools (rule 7).
_SELF_CANNOT = _any(
    rf"\b(?:i|we)(?:'m| am|'re| are)? (?:really |currently |simply |still )?{_NEG}\b",
    r"\b(?:i|we) (?:don't|do not) have access to\b",
    r"\b(?:that|this|it) (?:is not|isn't) something i can\b",
    r"\bno puedo\b|\bich kann (?:das |dies )?nicht\b|\bje ne (?:peux|suis pas en mesure)\b",
)
#: The sentence blames missing information, not the tools: no cannot cue in it counts.
_INFO_GAP = _any(
    r"\b(?:until|unless|once|as soon as) you\b",
    r"\bif you (?:provide|tell|give|specify|share|let me know|confirm)\b",
    r"\bbefore i can\b",
    r"\bneed (?:to know|more|your|you to|some|additional|further|a few)\b",
    r"\byou (?:haven't|have not|didn't|did not|never) (?:yet )?"
    r"(?:provide|give|gave|specif|tell|told|mention|say|said|share)",
    r"\b(?:haven't|hasn't|have not|has not|wasn't|was not|not yet) (?:been )?"
    r"(?:provided|given|specified|mentioned|shared)\b",
    r"\bmissing (?:some |the |required |necessary |key )?"
    r"(?:information|details|values?|parameters?|arguments?|inputs?|data)\b",
    r"\b(?:information|details|values?|parameters?|arguments?|inputs?) (?:is |are )?missing\b",
    r"\bwithout (?:knowing|more|further|additional|your|that information|these details)\b",
)
#: Requests for information that are not questions (rule 6).
_INFO_REQUEST = _any(
    r"\b(?:please|kindly|pls)\b[^.?!]{0,30}?\b(?:provide|specify|tell|share|give|send|confirm"
    r"|clarify|let me know|indicate|supply|choose|select|pick|enter|mention|state)\b",
    r"\blet me know (?:the|your|which|what|when|where|who|how|whether)\b",
    r"\b(?:could|can|would|will) you (?:please |kindly )?(?:provide|specify|tell|share|give|send"
    r"|confirm|clarify|let me know|indicate|mention)\b",
    r"\b(?:i|we)(?: would| will|'ll|'d| still| first| just)? (?:need|require) (?:to know "
    r"|from you )?(?:the|your|a few|some|more|additional|further|which|what|when)\b",
    r"\bnot sure (?:which|what|when|where|who|whether|if you)\b",
    r"\b(?:until|unless|once|as soon as|if) you (?:provide|tell|give|specify|share|confirm"
    r"|let me know|send|clarify|mention|indicate)\b",
    r"\b(?:provide|specify|tell|share|give|send) me (?:the|your|with|which|what|when|where)\b",
    r"\bpor favor,? (?:indique|proporcione|dime|d[ií]game|especifique)\b",
    r"\bbitte (?:geben|nennen|teilen|sagen)\b",
    r"\bveuillez (?:pr[ée]ciser|indiquer|fournir|me dire)\b",
)
#: Polite closings and offers: questions that ask for nothing.
_CLOSING = _any(
    r"\b(?:anything|something) (?:else|more)\b",
    r"\belse (?:i can|can i|you(?:'d| would) like|you need)\b",
    r"\b(?:can|may|could) i (?:help|assist|do)\b|\bhow (?:else )?(?:can|may) i\b",
    r"\b(?:would|do) you (?:like|want) me to\b|\bwant me to\b|\b(?:shall|should) i\b",
    r"\b(?:any|other|more|further) (?:questions|help|assistance)\b",
    r"\bif you (?:need|have|want|would like|'d like)\b",
    r"\bdoes (?:that|this) help\b|\bis (?:that|this) (?:helpful|all)\b|\bhope (?:this|that) helps",
    r"\bwould you like (?:to (?:know|learn|hear|see)|more|any)\b",
    r"\bsonst noch\b|\balgo más\b|\bautre chose\b",
)


def _classify_prose(reply: str) -> tuple[str, str]:
    """Rules 5-8 on the reply's prose (code fences are left out: they hold no questions)."""
    sentences = _sentences(reply)
    if any(_TOOLSET_CANNOT.search(s) and not _INFO_GAP.search(s) for s in sentences):
        return "cannot", "says no available API fits"
    for sentence in sentences:
        if _CLOSING.search(sentence):
            continue
        if _is_question(sentence):
            return "ask", "question to the user"
        if _INFO_REQUEST.search(sentence):
            return "ask", "asks the user for information"
    if any(_SELF_CANNOT.search(s) and not _INFO_GAP.search(s) for s in sentences):
        return "cannot", "says it cannot do this"
    return "answer", "reply without a call, a question or a refusal"


def _sentences(reply: str) -> list[str]:
    prose = " ".join(reply.split("```")[0::2]).translate(_QUOTES).lower()
    return [s.strip() for s in _SENTENCE_BREAK.split(prose) if s.strip()]


def _is_question(sentence: str) -> bool:
    return sentence.rstrip("\"'*_)]»").endswith(("?", "？")) or sentence.startswith("¿")


# -- scanning helpers ----------------------------------------------------------------------------

_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _balanced_end(text: str, start: int) -> int | None:
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
