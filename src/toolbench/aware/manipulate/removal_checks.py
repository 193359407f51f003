"""The automatic checks on a rewritten user turn: what is certainly wrong with it.

Split from ``utterance_removal`` (which builds the twin and runs the model). The checks are
deliberately conservative; see ``auto_rejections`` for each code.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from toolbench.aware.manipulate.call_values import (
    CallValue,
    Scalar,
    dialogue_text,
    gold_call_values,
    has_form,
    mentions,
    norm_text,
    word_list,
)
from toolbench.aware.schema import Instance, Turn

#: What kind of removal the rewriter was asked for: a clear request missing an argument value
#: (the default, and the only kind before there was a choice), or a request made unclear.
RemovalKind = Literal["missing_argument", "unclear_request"]
REMOVAL_KINDS: tuple[RemovalKind, ...] = ("missing_argument", "unclear_request")

#: A rewrite may add a few glue words ("my landlord", "somewhere"); beyond this many extra
#: characters (whichever is larger: this floor or a quarter of the original) it is rewriting,
#: not removing.
LONGER_SLACK_CHARS = 40
# -- the automatic checks --------------------------------------------------------------------

_CODES = ("broken_dialogue", "unchanged", "nothing_removed", "values_still_present")
_ROLE_PREFIX = re.compile(
    r"^\s*(?:(?:user|ai|assistant|system|human|bot|api|tool|api-request)(?:\s+turn\s*\d+)?"
    r"\s*[:：]|\[\s*(?:user|assistant|tool)\b[^\]]*\])",
    re.I | re.M,
)


def _show(value: Scalar) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def replaced_turn(dialogue: list[Turn], index: int, rewritten: str) -> list[Turn]:
    turns = list(dialogue)
    turns[index] = turns[index].model_copy(update={"content": rewritten})
    return turns


def _still_callable(gold: str, before: str, after: str) -> list[CallValue] | None:
    """The values of ``gold`` when every one was said verbatim before and still is after.

    Only then is the call certainly still possible. A call with a value the dialogue never
    states verbatim (a date the user paraphrased, a default) is left to the reviewer: the
    rewrite may well have removed exactly that.
    """
    values = gold_call_values(gold)
    if not values:
        return None
    for value in values:
        if not mentions(before, value.value) or not mentions(after, value.value):
            return None
    return values


def auto_rejections(
    original: Instance,
    turn_index: int | None,
    rewritten: str,
    removed: Iterable[str],
    kind: RemovalKind = "missing_argument",
) -> list[str]:
    """Why the rewrite of ``original.dialogue[turn_index]`` is certainly not usable, as
    ``"<code>: <details>"`` strings (at most one per code, in a fixed order); [] if none.

    ``turn_index`` indexes the whole dialogue (0 = first turn); None means the reply named no
    user turn that exists. The codes:

    * ``broken_dialogue``: no such turn, or not a user turn (then nothing else is checked);
      an empty rewrite; a rewrite more than ``max(LONGER_SLACK_CHARS, 25%)`` characters longer
      than the original; role names ("User:", "AI:", "[Assistant]") in it; or the dialogue
      ended with the user and no longer does.
    * ``unchanged``: the same words as the original, ignoring case, spacing and punctuation.
      The other checks are skipped: they would only restate it.
    * ``nothing_removed``: no removed span listed; a span that was not in the original
      utterance or is still in the rewrite; or no word of the original is missing.
    * ``values_still_present`` (only for ``kind="missing_argument"``; an unclear request
      keeps its values by design): see ``_values_still_said``. Only *user* turns count: an
      assistant's ordinary words ("your password") are not the user stating a value; an
      assistant echoing a removed value shows up in the twin's ``values_kept`` note for the
      reviewer instead.
    """
    dialogue = original.dialogue
    if turn_index is None or not 0 <= turn_index < len(dialogue):
        where = "no turn" if turn_index is None else f"turn index {turn_index}"
        return [
            f"broken_dialogue: the reply names {where}; the dialogue has "
            f"{len(original.user_turns())} user turn(s) in {len(dialogue)} turns"
        ]
    if dialogue[turn_index].role != "user":
        return [
            f"broken_dialogue: turn index {turn_index} is a {dialogue[turn_index].role} turn, "
            "not a user turn"
        ]
    before = dialogue[turn_index].content
    after = rewritten.strip()
    if word_list(after) == word_list(before):
        return ["unchanged: the rewrite has the same words as the original utterance"]

    spans = [span.strip() for span in removed if span.strip()]
    found = {
        "broken_dialogue": _broken(dialogue, turn_index, after),
        "nothing_removed": _not_removed(before, after, spans),
        "values_still_present": (
            _values_still_said(original, turn_index, after, spans)
            if kind == "missing_argument"
            else []
        ),
    }
    return [f"{code}: {'; '.join(found[code])}" for code in _CODES if found.get(code)]


def _broken(dialogue: list[Turn], turn_index: int, after: str) -> list[str]:
    """Why the rewrite cannot stand in the dialogue (see ``broken_dialogue`` above)."""
    details: list[str] = []
    if not after:
        details.append("the rewrite is empty")
    before = dialogue[turn_index].content
    allowed = len(norm_text(before)) + max(LONGER_SLACK_CHARS, len(norm_text(before)) // 4)
    if len(norm_text(after)) > allowed:
        details.append(
            f"the rewrite has {len(norm_text(after))} characters where the original has "
            f"{len(norm_text(before))}; a removal may add a few words, not this many"
        )
    prefix = _ROLE_PREFIX.search(after)
    if prefix:
        details.append(f"the rewrite contains a role name ({prefix.group(0).strip()!r})")
    new_dialogue = replaced_turn(dialogue, turn_index, after)
    spoken = [turn for turn in new_dialogue if turn.content.strip()]
    if dialogue[-1].role == "user" and (not spoken or spoken[-1].role != "user"):
        details.append("the dialogue no longer ends with the user speaking")
    return details


def _not_removed(before: str, after: str, spans: list[str]) -> list[str]:
    """Why nothing is verifiably gone (see ``nothing_removed`` above)."""
    details: list[str] = []
    if not spans:
        details.append("the reply lists no removed text")
    original_norm, after_norm = norm_text(before), norm_text(after)
    for span in spans:
        if not has_form(original_norm, span):
            details.append(f"{span!r} is not in the original utterance")
        elif has_form(after_norm, span):
            details.append(f"{span!r} is still in the rewrite")
    if not Counter(word_list(before)) - Counter(word_list(after)):
        details.append("every word of the original utterance is still there")
    return details


def _values_still_said(
    original: Instance, turn_index: int, after: str, spans: list[str]
) -> list[str]:
    """Evidence that what the rewrite removed is still said by the user, in any user turn.

    Two ways: (1) some gold call is certainly still possible, because every argument value it
    takes was said verbatim by the user before and still is after (values the user
    paraphrased cannot be traced, so such a call is not judged this way); (2) a gold value, a
    removed span, or a number/time/id in a removed span (e.g. "7:30" from "at 7:30") left the
    rewritten turn but another user turn still says it, as when the time of an alarm is
    removed from turn 3 while turn 1 still gives it. Values match whole, at token boundaries.
    """
    dialogue = original.dialogue
    new_dialogue = replaced_turn(dialogue, turn_index, after)
    details: list[str] = []
    before_text = dialogue_text(dialogue, users_only=True)
    after_text = dialogue_text(new_dialogue, users_only=True)
    for gold in original.gold_calls:
        values = _still_callable(gold, before_text, after_text)
        if values:
            names = ", ".join(dict.fromkeys(value.call for value in values))
            shown = ", ".join(dict.fromkeys(_show(value.value) for value in values))
            details.append(f"{names} can still be called: {shown} still said verbatim")
    others = [
        (number, turn.content)
        for number, (index, turn) in enumerate(_user_turns(new_dialogue), start=1)
        if index != turn_index
    ]
    original_turn = dialogue[turn_index].content
    candidates: dict[Scalar, None] = {}
    for gold in original.gold_calls:
        for value in gold_call_values(gold):
            if mentions(original_turn, value.value) and not mentions(after, value.value):
                candidates[value.value] = None
    for span in spans:
        candidates[span] = None
        candidates.update(dict.fromkeys(_SALIENT.findall(norm_text(span))))
    for candidate in candidates:
        where = [number for number, content in others if mentions(content, candidate)]
        if where:
            turns = ", ".join(str(number) for number in where)
            details.append(f"{_show(candidate)} was removed but user turn {turns} still says it")
    return details


#: Numbers, times, dates and ids inside a removed span: "7:30", "55120983", "2023-06-14"
#: (three characters at least: a bare "10" is too common to be evidence).
_SALIENT = re.compile(r"\d[\d:./-]+\d")


def _user_turns(dialogue: list[Turn]) -> list[tuple[int, Turn]]:
    return [(index, turn) for index, turn in enumerate(dialogue) if turn.role == "user"]


def value_changes(original: Instance, new_dialogue: list[Turn]) -> tuple[list[str], list[Scalar]]:
    """(slots whose user-stated value is gone, user-stated values still said) over all golds.

    For provenance and the reviewer: which arguments the rewrite took away, and which values
    the user said verbatim that are still there (harmless for one of several arguments, a
    warning sign when it is the one the rewrite was meant to remove).
    """
    before = dialogue_text(original.dialogue, users_only=True)
    after = dialogue_text(new_dialogue)
    gone: dict[str, None] = {}
    kept: dict[Scalar, None] = {}
    for gold in original.gold_calls:
        for value in gold_call_values(gold):
            if not mentions(before, value.value):
                continue
            if mentions(after, value.value):
                kept[value.value] = None
            else:
                gone[value.slot] = None
    return list(gone), list(kept)
