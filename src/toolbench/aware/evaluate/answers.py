"""Reading a model's Yes/No answer and a judge's Correct/Incorrect verdict.

Models rarely answer with the bare word: "Yes.", "**No**", "Answer: No - the date is
missing", "I think the answer is yes". The rules, in order: the first word; an "answer is/:"
cue; otherwise every standalone yes/no word in the reply, if they all agree. Anything else
(both words without a cue, neither word) is unparseable, which scores as wrong whatever the
label: an unreadable answer never counts as abstaining or as proceeding.

Replies are hostile input: at most ``MAX_CHARS`` characters are read, and every pattern is
linear (no two repetitions can match the same characters).
"""

from __future__ import annotations

import re

#: Replies are hostile input; nothing past this is read.
MAX_CHARS = 4000

_FIRST_WORD = re.compile(r"^[\s*_`\"'>#\-]*(yes|no)\b", re.IGNORECASE)
# "answer", then optionally "is"/"would be"/":", then optionally quotes or emphasis, each part
# followed by its own whitespace. (Written as ``\s*(?:is|would be|:)?\s*[*_`"':]*\s*`` this was
# the same language, but three adjacent ``\s*`` made a run of spaces after "answer" cubic: a
# 4,000-character reply took minutes. Here a space belongs to exactly one ``\s*``.)
_CUE = re.compile(
    r"\banswer\s*(?:(?:is|would be|:)\s*)?(?:[*_`\"':]+\s*)?(yes|no)\b", re.IGNORECASE
)
_WORD = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_VERDICT = re.compile(r"\b(incorrect|correct)\b", re.IGNORECASE)


def parse_yes_no(text: str) -> str | None:
    """``"yes"``, ``"no"`` or ``None`` (unparseable)."""
    text = text[:MAX_CHARS]
    if match := _FIRST_WORD.match(text):
        return match.group(1).lower()
    if match := _CUE.search(text):
        return match.group(1).lower()
    words = {word.lower() for word in _WORD.findall(text)}
    return words.pop() if len(words) == 1 else None


def parse_verdict(text: str) -> bool | None:
    """A judge's verdict: the first Correct/Incorrect word of its reply (``None`` if absent)."""
    match = _VERDICT.search(text[:MAX_CHARS])
    if match is None:
        return None
    return match.group(1).lower() == "correct"
