"""Sorting a free-form reply of the implicit awareness mode into one of five buckets.

In implicit mode the model is never asked "can you?"; it just continues the dialogue, and what
it wrote is sorted, deterministically, into ``call``, ``ask``, ``cannot``, ``answer`` or
``unparseable``. This module holds the entry point, ``classify_reply``, which applies the rules
below in order. Finding calls (rules 2-3) is ``implicit_calls`` (reading their names and
arguments, ``implicit_values``) and reading prose (rules 5-8) is ``implicit_prose``; each
module's docstring gives its rules in full.

1. **What counts as the reply.** At most ``MAX_CHARS`` characters are read, and the reply ends
   where the model starts writing the user's next turn (a ``User:`` / ``Human:`` line or a chat
   template marker): what a model puts in the user's mouth is not its own decision.
2. **A well-formed call anywhere wins** (``call``), even if the reply also asks something: the
   model did act. Calls are read from native ``tool_calls`` and from the text in five notations
   (API-Request, Python-style, JSON, ReAct, ``<tool_call>``); the first call in reading order
   (native calls first) names ``api`` and ``arguments``.
3. **Otherwise a malformed call attempt is ``unparseable``**, never abstention: a model that
   tried to call and botched it did not notice anything.
4. **Empty** (or only whitespace) is ``unparseable``.
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

from toolbench.aware.evaluate.implicit_calls import native_attempts, text_attempts
from toolbench.aware.evaluate.implicit_prose import classify_prose
from toolbench.aware.evaluate.implicit_values import Offered

BUCKETS = ("call", "ask", "cannot", "answer", "unparseable")

#: Replies are hostile input: nothing past this is read.
MAX_CHARS = 20_000


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
    offered = Offered.of(api_names)
    reply = _reply_text(text)
    attempts = [*native_attempts(tool_calls), *text_attempts(reply, offered)]
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
    bucket, reason = classify_prose(reply)
    return ImplicitVerdict(bucket, reason=reason)


# -- the reply -------------------------------------------------------------------------------------

_NEXT_TURN = re.compile(
    r"^[ \t]*(?:User|Human)[ \t]*:|<\|(?:im_start|im_end|start_header_id|eot_id|endoftext)\|>|</s>",
    re.IGNORECASE | re.MULTILINE,
)


def _reply_text(text: str) -> str:
    text = text[:MAX_CHARS]
    match = _NEXT_TURN.search(text)
    return text[: match.start()] if match else text
