"""Sorting a free-form reply of the implicit awareness mode into one of five buckets.

In implicit mode the model is never asked "can you?"; it just continues the dialogue, and what
it wrote is sorted, deterministically, into ``call``, ``ask``, ``cannot``, ``answer`` or
``unparseable``. This module holds the entry point, ``classify_reply``, which applies the rules
below in order. Finding calls (rules 2-3) is ``implicit_calls`` (reading their names and
arguments, ``implicit_values``) and reading prose (rules 5-8) is ``implicit_prose``; each
module's docstring gives its rules in full. The run scores ``call`` as "yes" (the APIs can be
called now), ``unparseable`` as no answer (wrong whatever the label) and the rest as "no".

1. **What counts as the reply.** At most ``MAX_CHARS`` characters are read, and the reply ends
   where the model starts writing the user's next turn (a ``User:`` / ``Human:`` line or a chat
   template marker): what a model puts in the user's mouth is not its own decision.
2. **A well-formed call of an offered API anywhere wins** (``call``), even if the reply also
   asks something: the model did act. Calls are read from native ``tool_calls`` and from the
   text in six notations (API-Request, a pythonic call reply, Python-style, JSON, ReAct,
   ``<tool_call>``); the first
   such call in reading order (native calls first) names ``api`` and ``arguments``. A copy of
   the prompt's format line (``API-Request: [ApiName(key1='value1', key2='value2')]``) is no
   call: it is taken out of the reply, and the rules go on with what is left.
3. **Otherwise a failed call attempt is ``unparseable``**, never abstention and never a call:
   a call of an API that was not offered (the verdict keeps its ``api``, ``offered=False``), a
   call of an offered API with the format line's placeholder values, or a malformed call. A
   model that calls a tool it does not have, or botches the call, did not notice anything, and
   its call cannot run.
4. **Empty** (or only whitespace, or only copies of the format line) is ``unparseable``.
5. **An explicit statement that the tools do not fit is ``cannot``**, even with a question.
6. **A request for information is ``ask``**: a real question or an imperative request.
7. **A generic statement of inability** is ``cannot`` when the reply asks for nothing.
8. Otherwise ``answer``.

Model output is hostile input: nothing past ``MAX_CHARS`` is read, and nothing in it is ever
evaluated or imported from (see ``implicit_values`` for how calls are read safely).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolbench.aware.evaluate.implicit_calls import (
    FORMAT_LINE,
    Attempt,
    native_attempts,
    text_attempts,
)
from toolbench.aware.evaluate.implicit_prose import classify_prose
from toolbench.aware.evaluate.implicit_values import Offered

BUCKETS = ("call", "ask", "cannot", "answer", "unparseable")

#: Replies are hostile input: nothing past this is read.
MAX_CHARS = 20_000


@dataclass(frozen=True)
class ImplicitVerdict:
    """Where a reply landed, with the call's details when it made one: for a ``call``, the
    first call of an offered API; for an ``unparseable`` call of an API that was not offered,
    that call (``offered=False``), kept for the report."""

    bucket: str  # one of BUCKETS
    api: str | None = None  # the call's API name (None: no call was read)
    arguments: dict[str, Any] | None = None  # that call's literal arguments
    offered: bool | None = None  # whether ``api`` is among the offered APIs (None: no call)
    reason: str = ""  # why, in a few words


def classify_reply(
    text: str, api_names: Sequence[str], tool_calls: Sequence[Mapping[str, Any]] = ()
) -> ImplicitVerdict:
    """The bucket of one reply; ``api_names`` are the APIs the prompt offered."""
    offered = Offered.of(api_names)
    reply = _reply_text(text)
    found, copies = _split_copies(text_attempts(reply, offered), offered)
    if copies:  # read the reply as if the copies were not there (a whole-reply call, say)
        reply = _without(reply, copies)
        found, again = _split_copies(text_attempts(reply, offered), offered)
        reply = _without(reply, again)
    attempts: list[Attempt] = [*native_attempts(tool_calls), *found]
    attempts.sort(key=lambda attempt: attempt.start)
    for attempt in attempts:
        if attempt.ok:
            assert attempt.name is not None and attempt.arguments is not None
            api, is_offered = offered.resolve(attempt.name)
            if is_offered and not FORMAT_LINE.placeholders(attempt.arguments):
                return ImplicitVerdict("call", api, attempt.arguments, True, attempt.syntax)
    if attempts:
        return _failed(attempts[0], offered)
    if not reply.strip():
        reason = "only a copy of the prompt's format line" if copies else "empty reply"
        return ImplicitVerdict("unparseable", reason=reason)
    bucket, reason = classify_prose(reply)
    return ImplicitVerdict(bucket, reason=reason)


def _split_copies(
    attempts: Sequence[Attempt], offered: Offered
) -> tuple[list[Attempt], list[Attempt]]:
    """The attempts that are calls, and those that are copies of the prompt's format line."""
    calls: list[Attempt] = []
    copies: list[Attempt] = []
    for attempt in attempts:
        name, arguments = attempt.name, attempt.arguments or {}
        copy = name is not None and FORMAT_LINE.copied(name, arguments, offered)
        (copies if copy else calls).append(attempt)
    return calls, copies


def _failed(attempt: Attempt, offered: Offered) -> ImplicitVerdict:
    """The verdict of a reply whose first call attempt (in reading order) failed (rule 3)."""
    if attempt.name is None or attempt.arguments is None:
        return ImplicitVerdict("unparseable", reason=f"malformed call: {attempt.problem}")
    api, is_offered = offered.resolve(attempt.name)
    if is_offered:
        keys = ", ".join(FORMAT_LINE.placeholders(attempt.arguments))
        return ImplicitVerdict("unparseable", reason=f"malformed call: placeholder values ({keys})")
    reason = f"call of an API that was not offered: {api[:60]}"
    return ImplicitVerdict("unparseable", api, attempt.arguments, False, reason)


def _without(text: str, spans: Sequence[Attempt]) -> str:
    """``text`` with the spans left out, each replaced by a line break (a JSON copy can hold
    an ``API-Request`` copy, so spans may nest)."""
    kept, pos = [], 0
    for span in sorted(spans, key=lambda span: span.start):
        kept.append(text[pos : max(pos, span.start)])
        pos = max(pos, span.end)
    return "\n".join([*kept, text[pos:]])


# -- the reply -------------------------------------------------------------------------------------

_NEXT_TURN = re.compile(
    r"^[ \t]*(?:User|Human)[ \t]*:|<\|(?:im_start|im_end|start_header_id|eot_id|endoftext)\|>|</s>",
    re.IGNORECASE | re.MULTILINE,
)


def _reply_text(text: str) -> str:
    text = text[:MAX_CHARS]
    match = _NEXT_TURN.search(text)
    return text[: match.start()] if match else text
