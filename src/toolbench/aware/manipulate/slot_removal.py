"""Slot removal for our own tasks: take out the words that supply a required argument.

The task generators record, per sample, which exact words of the query supply which argument
(``slots``). Removing those words (plus the preposition that introduced them: "in New
Orleans", "from El Paso") gives an incomplete twin whose missing information is known exactly,
so no model and no reviewer is needed. A twin is only made when the removed words are gone
from the query everywhere; every slot whose words vanished is named in provenance (removing
"Dallas" from "to Dallas ... a hotel in Dallas" takes both the destination and the hotel
location, and says so).

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
_CONNECTOR = re.compile(
    r"(?:\b(?:in|at|near|around|for|from|to|on|of|with|called|named|by|into|under|starting|"
    r"ending|until|since|about|titled|labelled|labeled)\s+)$",
    re.IGNORECASE,
)


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
    empty brackets, doubled commas, a dangling leading comma."""
    text = re.sub(r"\(\s*[,;/]?\s*\)", "", text)
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([,.;:?!])", r"\1", text)
    text = re.sub(r",(\s*,)+", ",", text)
    text = re.sub(r",\s*([.?!])", r"\1", text)
    text = re.sub(r"^[\s,;:]+", "", text)
    return text.strip()


def remove_phrase(text: str, phrase: str) -> tuple[str, list[str]]:
    """Remove every occurrence of ``phrase`` (case-insensitive) with the connector word just
    before it; returns the new text and the removed spans, verbatim from ``text``."""
    removed: list[str] = []
    pattern = re.compile(re.escape(phrase), re.IGNORECASE)
    while (match := pattern.search(text)) is not None:
        start = match.start()
        connector = _CONNECTOR.search(text[:start])
        if connector is not None:
            start = connector.start()
        removed.append(text[start : match.end()].strip())
        text = text[:start] + " " + text[match.end() :]
    return tidy(text), removed


@dataclass(frozen=True)
class SlotCut:
    query: str
    removed_text: list[str]
    removed_slots: list[str]


def cut(query: str, slots: dict[str, str], names: Sequence[str]) -> SlotCut | None:
    """Remove the words of ``names``; None unless each one's words are then absent everywhere
    and a request (two words or more) is left."""
    new = query
    removed: list[str] = []
    for name in names:
        phrase = slots[name]
        if not phrase.strip():
            return None
        new, spans = remove_phrase(new, phrase)
        removed.extend(spans)
    if len(new.split()) < 2 or any(slots[n].lower() in new.lower() for n in names):
        return None
    gone = sorted(n for n, words in slots.items() if words and words.lower() not in new.lower())
    return SlotCut(new, removed, gone)


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


def remove_slot(instance: Instance, *, seed: int) -> Instance | None:
    """The slot-removal twin of one task instance, or None when no required slot can be cut
    exactly (e.g. "List my favourites" has no required argument at all)."""
    slots: dict[str, str] = dict(instance.provenance.notes.get("slots", {}))
    query = instance.dialogue[-1].content
    options = []
    for names in _candidates(required_slots(instance)):
        result = cut(query, slots, names)
        if result is not None:
            options.append(result)
    if not options:
        return None
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
        elif (twin := remove_slot(instance, seed=seed)) is None:
            skipped.append((instance.id, "no required argument whose words can be cut exactly"))
        else:
            twins.append(twin)
        if progress is not None:
            progress(1)
    return BuildResult(twins, skipped)
