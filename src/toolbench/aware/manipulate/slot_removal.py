"""Slot removal for our own tasks: take out the words that supply a required argument.

The task generators record, per sample, which exact words of the query supply which argument
(``slots``). Removing those words (plus the preposition that introduced them: "in New
Orleans", "from El Paso") gives an incomplete twin whose missing information is known exactly,
so no model and no reviewer is needed. A twin is only made when the removed words are gone
from the query everywhere; every slot whose words vanished is named in provenance (removing
"Dallas" from "to Dallas ... a hotel in Dallas" takes both the destination and the hotel
location, and says so).

The cut takes the whole phrase a slot heads, not just its words (``slot_phrases``): "with id
248658", "in the city of Jilin", "Grace's row" -> "the row", "there" pointing back at a removed
place; and the leftovers are tidied (leading punctuation, doubled commas, a capital first
letter). A candidate that still leaves a fragment no user writes ("Where does the come
from?", one end of a date range) is dropped; when every candidate is dropped the instance is
skipped with the reason, so build reports say how many twins each rule cost.

Which slots count as *required* is a property of each task's API: the location for
home_search; the fields booking's ``search()`` demands for the booking type; the required query
or path parameters of the endpoint for the curl tasks; and for google_sheets every slot except
the ones that only refine an edit (a sort direction, a rounding precision...).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolbench.aware.manipulate.slot_phrases import (
    BACK_REFERENCE,
    PLACE_SLOTS,
    PREPOSITIONS,
    drop_back_references,
    drop_orphan_labels,
    leaves_bare_label,
    new_problems,
    phrase_span,
    starts_like,
    with_article,
)
from toolbench.aware.manipulate.twin import incomplete_twin
from toolbench.aware.schema import Instance, Turn, Verification

#: Arguments that travel together: removing only a latitude leaves a half-located request.
_GROUPS: tuple[frozenset[str], ...] = (frozenset({"lat", "lon"}),)
_BOOKING_REQUIRED = {
    "location",
    "location_from",
    "location_to",
    "checkin_date",
    "checkout_date",
    "departure_date",
}
_SHEETS_REFINEMENTS = {"direction", "places", "which", "example", "meaning", "rgb"}
#: Slots whose words are the request's verb ("downvote 2NKQj7qsl"): cutting them leaves
#: "Go ahead and 2NKQj7qsl", which no rule can mend, so they are never the slot removed.
_VERB_SLOTS = {"the_cat_api": {"value"}}
_DATE_SLOTS = {"checkin_date", "checkout_date", "departure_date", "return_date", "start", "end"}
_RANGE_WORDS = r"(?:to|and|until|till|through|thru|-|–)"
NO_REQUIRED = "no required argument whose words can be cut exactly"


def _curl_required(instance: Instance) -> set[str]:
    relevant = set(instance.relevant_apis)
    names: set[str] = set()
    for api in instance.apis:
        if api.name in relevant:
            names.update(api.parameters.get("required", []))
    return names


def required_slots(instance: Instance) -> set[str]:
    """The slot names of this instance whose words supply a required argument."""
    slots = set(instance.provenance.notes.get("slots", {}))
    task = instance.source.removeprefix("task:")
    if task == "home_search":
        return slots & {"location"}
    if task == "booking":
        return slots & _BOOKING_REQUIRED
    if task in ("open_weather", "the_cat_api"):
        return slots & _curl_required(instance)
    if task == "google_sheets":
        return slots - _SHEETS_REFINEMENTS
    return set()


def tidy(text: str) -> str:
    """Repair what cutting words out leaves behind: doubled spaces, space before punctuation,
    empty brackets, doubled commas, leading punctuation ("Jacksonville - 1.5-bath ..." must
    not become "- 1.5-bath ...")."""
    text = re.sub(r"\(\s*[,;/]?\s*\)", "", text)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,.;:?!])", r"\1", text)
    text = re.sub(r",(\s*[,;:])+", ",", text)
    text = re.sub(r"([;:])(\s*,)+", r"\1", text)
    text = re.sub(r"[,;:]\s*([.?!])", r"\1", text)
    text = re.sub(r"^[\s,;:.!?\-–—/]+", "", text)
    text = re.sub(r"[\s,;:]+$", "", text)
    return text.strip()


def remove_phrase(text: str, phrase: str) -> tuple[str, list[str]]:
    """Remove every occurrence of ``phrase`` (case-insensitive) with the words that only
    introduce it (see ``phrase_span``); returns the new text and the removed spans, verbatim
    from ``text``."""
    removed: list[str] = []
    # Whole words only: the quantity "2" must not be cut out of "2024-04-27".
    pattern = _slot_pattern(phrase)
    while (match := pattern.search(text)) is not None:
        start, end, replacement = phrase_span(text, match.start(), match.end())
        removed.append(text[start:end].strip())
        text = with_article(text[:start]) + f" {replacement} " + text[end:]
    return tidy(text), removed


def _slot_pattern(phrase: str) -> re.Pattern[str]:
    left = r"(?<!\w)" if phrase[:1].isalnum() else ""
    right = r"(?!\w)" if phrase[-1:].isalnum() else ""
    return re.compile(left + re.escape(phrase) + right, re.IGNORECASE)


def _unfit(query: str, name: str, phrase: str) -> str | None:
    """Why cutting ``phrase`` cannot give a natural request whatever is tidied afterwards."""
    matches = list(_slot_pattern(phrase).finditer(query))
    if any(m.group(0) != phrase for m in matches):
        # "mark lines that went over budget with Over budget": one is the value, one is not.
        return "the slot's words stay in the query (also used for something else)"
    if name in _DATE_SLOTS and _half_of_a_range(query, phrase):
        return "the date is one end of a range"
    p = re.escape(phrase)
    if re.search(rf"(?<!\w){p}\s+(?:through|thru)\s|\b(?:through|thru)\s+{p}(?!\w)", query, re.I):
        return "the value is one end of a range"
    for match in matches[:1]:
        start, end, _ = phrase_span(query, match.start(), match.end())
        if leaves_bare_label(query, start, end):
            return "the twin would read badly (a label with no value)"
        if not query[:start].strip() and _STARTS_A_PREDICATE.match(query[end:]):
            return "the twin would read badly (a sentence with no subject)"
    return None


#: After a removed sentence subject: a lower-case word that is not a preposition ("Ana Diaz
#: left the company" -> "Left the company").
_STARTS_A_PREDICATE = re.compile(rf"^ +(?!(?:{PREPOSITIONS}|and|or|-)\b)[a-z]")


def _half_of_a_range(query: str, phrase: str) -> bool:
    """True when ``phrase`` is one end of "from X to Y" / "between X and Y": cutting it would
    leave "a hotel in New York to November 12", a range with one end."""
    p = re.escape(phrase)
    opener = r"\b(?:from|between|departing|leaving|arriving|checking in|starting)"
    first = rf"{opener}\s+{p}\s*,?\s*{_RANGE_WORDS}\s"
    second = rf"\b(?:from|between)\s+[^.;!?]{{1,40}}?\s{_RANGE_WORDS}\s+{p}"
    return re.search(f"{first}|{second}", query, re.IGNORECASE) is not None


@dataclass(frozen=True)
class SlotCut:
    query: str
    removed_text: list[str]
    removed_slots: list[str]


def _cut_words(query: str, slots: dict[str, str], names: Sequence[str]) -> SlotCut | str:
    """Remove the words of ``names`` and any "there" that pointed at a removed place; the
    reason as a string unless each slot's words are then absent everywhere."""
    new = _keep_the_origin(query, slots, names)
    removed: list[str] = []
    for name in names:
        phrase = slots[name]
        if not phrase.strip():
            return "the slot has no words to cut"
        if (why := _unfit(query, name, phrase)) is not None:
            return why
        new, spans = remove_phrase(new, phrase)
        removed.extend(spans)
    if any(slots[n].lower() in new.lower() for n in names):
        return "the slot's words stay in the query"
    gone = sorted(n for n, words in slots.items() if words and words.lower() not in new.lower())
    if set(gone) & (PLACE_SLOTS - {"location_from"}):
        new, references = drop_back_references(new)
        removed.extend(references)
    new, labels = drop_orphan_labels(new)
    removed.extend(labels)
    return SlotCut(starts_like(query, tidy(new)), removed, gone)


def _keep_the_origin(query: str, slots: dict[str, str], names: Sequence[str]) -> str:
    """Say "from" before a bare origin whose destination is cut: "a bus Richmond to Dallas"
    would otherwise become "a bus Richmond", a place with no role."""
    origin = slots.get("location_from", "")
    cut_words = {slots[n].lower() for n in names}
    if slots.get("location_to", "").lower() not in cut_words or not origin:
        return query  # the destination stays (or there is no origin)
    if origin.lower() in cut_words:
        return query
    bare = (
        rf"(?<!\bfrom )(?<![\w-]){re.escape(origin)}(?=\s+to\s+{re.escape(slots['location_to'])})"
    )
    return re.sub(bare, lambda m: f"from {m.group(0)}", query, flags=re.IGNORECASE)


def cut(query: str, slots: dict[str, str], names: Sequence[str]) -> SlotCut | str:
    """The twin query without the words of ``names``, or why there is none: the words stay
    somewhere, too little is left, or what is left has a fragment no user would write."""
    result = _cut_words(query, slots, names)
    if isinstance(result, str):
        return result
    if len(result.query.split()) < 2:
        return "too little of the request is left"
    found = new_problems(query, result.query)
    if found:
        return f"the twin would read badly ({found[0]})"
    if BACK_REFERENCE.search(result.query) and set(result.removed_slots) & PLACE_SLOTS:
        return "the twin refers back to the removed place"
    return result


def _candidates(required: set[str]) -> list[tuple[str, ...]]:
    groups: list[tuple[str, ...]] = []
    left = set(required)
    for group in _GROUPS:
        if group <= left:
            groups.append(tuple(sorted(group)))
            left -= group
    groups.extend((name,) for name in sorted(left))
    return sorted(groups)


def _missing(cut_: SlotCut, slots: dict[str, str]) -> str:
    parts = [f"{name} ('{slots[name]}')" for name in cut_.removed_slots]
    return "The user no longer gives: " + ", ".join(parts) + "."


#: Tasks whose slots are not cut, and why (the reason is what the build reports as skipped).
NO_SLOT_TWINS = {
    "virtual_home": "virtual_home chores are their objects ('Wash the toothbrush'): cutting "
    "one leaves no request ('Wash the'), not an under-specified one; tool removal only",
}


def remove_slot(instance: Instance, *, seed: int) -> Instance | str:
    """The slot-removal twin of one task instance, or why there is none: no required argument
    at all ("List my favourites"), or no required slot that can be cut exactly and cleanly."""
    if reason := NO_SLOT_TWINS.get(instance.source.removeprefix("task:")):
        return reason
    slots: dict[str, str] = dict(instance.provenance.notes.get("slots", {}))
    query = instance.dialogue[-1].content
    verbs = _VERB_SLOTS.get(instance.source.removeprefix("task:"), set())
    candidates = [c for c in _candidates(required_slots(instance)) if not set(c) & verbs]
    if not candidates:
        return NO_REQUIRED
    options: list[SlotCut] = []
    reasons: list[str] = []
    for names in candidates:
        result = cut(query, slots, names)
        if isinstance(result, SlotCut):
            options.append(result)
        else:
            reasons.append(result)
    if not options:
        return reasons[0]
    choice = random.Random(f"{seed}:{instance.id}").choice(options)
    return incomplete_twin(
        instance,
        "slot_removal",
        dialogue=[*instance.dialogue[:-1], Turn(role="user", content=choice.query)],
        verification=Verification(status="accepted", by="construction"),
        removed_text=choice.removed_text,
        removed_slots=choice.removed_slots,
        missing=_missing(choice, slots),
        generator="slot_removal",
        seed=seed,
    )


@dataclass
class BuildResult:
    instances: list[Instance]
    skipped: list[tuple[str, str]]


def remove_slots(
    instances: Sequence[Instance], *, seed: int, progress: Callable[[int], None] | None = None
) -> BuildResult:
    """Twins for every instance that has a required slot; the rest are listed as skipped."""
    twins: list[Instance] = []
    skipped: list[tuple[str, str]] = []
    for instance in instances:
        if not instance.source.startswith("task:"):
            skipped.append((instance.id, "slot removal needs a task instance with slots"))
        elif "slots" not in instance.provenance.notes:
            skipped.append((instance.id, "the sample has no slots (data from another generator)"))
        elif isinstance(twin := remove_slot(instance, seed=seed), str):
            skipped.append((instance.id, twin))
        else:
            twins.append(twin)
        if progress is not None:
            progress(1)
    return BuildResult(twins, skipped)
