"""Reading the rewriting model's reply: hostile text in, a ``RewriteReply`` or None out.

The reply is only ever handed to ``json`` and to string operations of our own, never to
``eval``; every scan is bounded (characters read, ``{`` positions tried, length of a near-JSON
object) so that a huge or adversarial reply costs bounded time. Split from ``rewrite_prompt``
so that the prompt texts and the reader can each be read (and grow) on their own.

The prompt asks for the JSON answer *first* and a short explanation after it, so that a reply
cut by the token budget loses explanation, not answer. Models do not always obey: a reply that
reasons first and answers last is read just as well, since the reply is model output and the
answer can be anywhere in it. Either way the reasoning is the text around the answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RewriteReply:
    """What the model answered.

    ``turn`` is the number of the user turn as the prompt showed it (1 = first user turn), or
    None when the reply did not say; ``reasoning`` is the text around the answer.
    """

    turn: int | None
    rewritten: str
    removed: tuple[str, ...]
    reasoning: str = ""


#: Only this much of a reply is read (half from its start, half from its end, where the answer
#: is). Longer replies lose their middle.
MAX_REPLY_CHARS = 60_000
#: At most this many "{" positions are tried, last first: bounds the work on hostile input.
MAX_OBJECT_STARTS = 400
#: The near-JSON fallback is a Python-level scan, so it gets a tighter budget: fewer starts,
#: and objects longer than any answer within ``max_tokens`` are not considered.
MAX_RELAXED_STARTS = 100
MAX_RELAXED_CHARS = 8_000

_DECODER = json.JSONDecoder()
#: An answer read from a reply: (turn, rewritten, removed spans), and where it starts and ends.
_Found = tuple[tuple[int | None, str, tuple[str, ...]], tuple[int, int]]


def _as_turn(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e9:
        return int(value)
    if isinstance(value, str):
        # Stripped first, and one repetition per space: adjacent ``\s*`` were quadratic.
        match = re.fullmatch(r"(?:user\s+)?(?:turn\s*)?(?:#\s*)?(-?\d{1,6})", value.strip(), re.I)
        if match:
            return int(match.group(1))
    return None


def _as_removed(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(item for item in value if isinstance(item, str) and item.strip())


def _reply_from(obj: Any, depth: int = 0) -> tuple[int | None, str, tuple[str, ...]] | None:
    """The answer inside a decoded JSON value: a dict with a string "rewritten", maybe nested."""
    if depth > 4:
        return None
    if isinstance(obj, dict):
        if isinstance(obj.get("rewritten"), str):
            return _as_turn(obj.get("turn")), obj["rewritten"], _as_removed(obj.get("removed"))
        for value in obj.values():
            found = _reply_from(value, depth + 1)
            if found is not None:
                return found
    if isinstance(obj, list):
        for value in reversed(obj):
            found = _reply_from(value, depth + 1)
            if found is not None:
                return found
    return None


def _object_starts(text: str, limit: int = MAX_OBJECT_STARTS) -> Iterator[int]:
    """Positions of "{": up to ``limit`` from the end, last first, then up to ``limit`` from the
    start, first first. The answer is at the end when the model reasons first and at the start
    when it answers first; a reply full of braces in between cannot hide either end."""
    position = len(text)
    lowest = len(text)
    for _ in range(limit):
        position = text.rfind("{", 0, position)
        if position < 0:
            return
        lowest = position
        yield position
    position = -1
    for _ in range(limit):
        position = text.find("{", position + 1, lowest)
        if position < 0:
            return
        yield position


def _balanced_end(text: str, start: int) -> int | None:
    """End (exclusive) of the {...} starting at ``start``, skipping quoted strings of both kinds.

    Used only for the relaxed fallback, where single-quoted strings may occur; a quote that never
    closes makes the object unbalanced, which is the right answer for broken input.
    """
    depth = 0
    quote: str | None = None
    escaped = False
    for index in range(start, min(len(text), start + MAX_RELAXED_CHARS)):
        char = text[index]
        if quote is not None:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = None
            continue
        if char in "\"'":
            # An apostrophe inside a word ("don't") is not a quote in relaxed JSON.
            previous = text[index - 1] if index > start else " "
            if char == "'" and previous.isalnum():
                continue
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
            if depth < 0:
                return None
    return None


_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _relaxed_to_json(span: str) -> str | None:
    """Rewrite a near-JSON object (single quotes, trailing commas, Python literals, bare keys)
    as JSON.

    A small tokenizer, not a regex replace, so that quotes and commas inside strings are left
    alone. Returns None when the span has something neither JSON nor this dialect allows.
    """
    out: list[str] = []
    index = 0
    length = len(span)
    while index < length:
        char = span[index]
        if char in "\"'":
            quote = char
            index += 1
            chars: list[str] = []
            closed = False
            while index < length:
                current = span[index]
                if current == "\\" and index + 1 < length:
                    following = span[index + 1]
                    # \' is only an escape in the single-quoted dialect; JSON has no such escape.
                    chars.append("'" if following == "'" else "\\" + following)
                    index += 2
                    continue
                if current == quote:
                    closed = True
                    index += 1
                    break
                if current == '"':
                    chars.append('\\"')
                elif current == "\n":
                    chars.append("\\n")
                else:
                    chars.append(current)
                index += 1
            if not closed:
                return None
            out.append('"' + "".join(chars) + '"')
            continue
        if char == ",":
            # Drop a trailing comma: the next non-space character closes the container.
            rest = span[index + 1 :].lstrip()
            if rest[:1] in ("}", "]"):
                index += 1
                continue
        if char.isalpha() or char == "_":
            end = index
            while end < length and (span[end].isalnum() or span[end] == "_"):
                end += 1
            word = span[index:end]
            if span[end:].lstrip()[:1] == ":":
                out.append(f'"{word}"')  # a bare key: {turn: 1}
            else:
                out.append(_LITERALS.get(word, word))
            index = end
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _json_answer(text: str) -> _Found | None:
    """The last well-formed JSON object holding an answer, and where it starts."""
    for start in _object_starts(text):
        try:
            obj, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        found = _reply_from(obj)
        if found is not None:
            return found, (start, end)
    return None


def _relaxed_answer(text: str) -> _Found | None:
    """Like ``_json_answer`` for near-JSON. Only tried when no strict JSON answer exists."""
    for start in _object_starts(text, MAX_RELAXED_STARTS):
        end = _balanced_end(text, start)
        if end is None:
            continue
        converted = _relaxed_to_json(text[start:end])
        if converted is None:
            continue
        try:
            obj = json.loads(converted)
        except (ValueError, RecursionError):
            continue
        found = _reply_from(obj)
        if found is not None:
            return found, (start, end)
    return None


_LABEL = r"^[ \t>*_#-]*{name}[*_]*[ \t]*[:：][*_]*[ \t]*(?P<rest>.*)$"
_REWRITTEN_LINE = re.compile(
    _LABEL.format(name=r"(?:rewritten(?:\s+utterance)?|new\s+utterance)"), re.I | re.M
)
_REMOVED_LINE = re.compile(_LABEL.format(name=r"removed(?:\s+(?:spans?|text))?"), re.I | re.M)
_TURN_LINE = re.compile(_LABEL.format(name=r"(?:user\s+)?turn"), re.I | re.M)
_QUOTED = re.compile(r'"([^"\n]+)"|“([^”\n]+)”|«([^»\n]+)»')
_BULLET = re.compile(r"^[ \t]*(?:[-*•]|\d+[.)])[ \t]+(?P<item>.+)$")
_QUOTES = "\"'“”‘’«»`"


def _unquote(text: str) -> str:
    text = text.strip()
    while len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return text


def _spans(rest: str) -> list[str]:
    """Removed spans on one "Removed:" line: quoted strings if any, else the whole line."""
    quoted = [next(group for group in match.groups() if group) for match in _QUOTED.finditer(rest)]
    if quoted:
        return quoted
    rest = _unquote(rest.strip().strip("[]"))
    return [rest] if rest and rest.lower() not in ("none", "nothing", "n/a") else []


def _plain_answer(text: str) -> _Found | None:
    """The "Rewritten: …" / "Removed: …" / "Turn: …" fallback; the last "Rewritten:" wins."""
    rewrites = list(_REWRITTEN_LINE.finditer(text))
    if not rewrites:
        return None
    last = rewrites[-1]
    rewritten = _unquote(last.group("rest"))
    if not rewritten:
        return None
    removed: list[str] = []
    for match in _REMOVED_LINE.finditer(text):
        rest = match.group("rest").strip()
        if rest:
            removed.extend(_spans(rest))
            continue
        # "Removed:" alone on its line: the bullet lines right after it are the spans.
        for line in text[match.end() :].lstrip("\n").splitlines():
            bullet = _BULLET.match(line)
            if not bullet:
                break
            removed.extend(_spans(bullet.group("item")))
    turn = None
    turns = list(_TURN_LINE.finditer(text))
    if turns:
        number = re.search(r"-?\d{1,6}", turns[-1].group("rest"))
        turn = int(number.group(0)) if number else None
    return (turn, rewritten, tuple(span for span in removed if span.strip())), (
        last.start(),
        len(text),
    )


def _reasoning(text: str, start: int, end: int) -> str:
    """The text around the answer, without the fence that held it: the prompt asks for the
    explanation after the answer, but a model may write it before (or both)."""
    before = re.sub(r"```[a-zA-Z]*\s*$", "", text[:start].rstrip()).strip()
    after = re.sub(r"^\s*```", "", text[end:]).strip()
    return "\n\n".join(part for part in (before, after) if part)


def parse_rewrite(text: str) -> RewriteReply | None:
    """Read the model's answer; None when there is none.

    Order: the last (else, in a reply full of braces, the first) well-formed JSON object
    with a string "rewritten" (bare or in a fence, or nested one level down in a wrapper
    object); else the same for near-JSON (single quotes, trailing commas, ``True``/``None``);
    else "Rewritten: …" lines. Never raises.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    if len(text) > MAX_REPLY_CHARS:
        # Keep both ends: the answer comes first or last, the middle is reasoning.
        half = MAX_REPLY_CHARS // 2
        text = text[:half] + "\n" + text[-half:]
    for reader in (_json_answer, _relaxed_answer, _plain_answer):
        try:
            found = reader(text)
        except (ValueError, RecursionError, MemoryError):
            found = None
        if found is not None:
            (turn, rewritten, removed), (start, end) = found
            return RewriteReply(
                turn=turn,
                rewritten=rewritten.strip(),
                removed=tuple(span.strip() for span in removed),
                reasoning=_reasoning(text, start, end),
            )
    return None
