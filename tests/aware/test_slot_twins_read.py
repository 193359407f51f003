"""Slot-removal twins read like something a user would write, on every task's real data.

The checks here are written independently of ``slot_phrases`` (their own patterns), so a rule
that slot removal forgets to apply is caught rather than agreed with.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import pytest

from toolbench.aware.manipulate.slot_removal import NO_REQUIRED, cut, remove_slots
from toolbench.aware.manipulate.slot_removal import SlotCut as _SlotCut
from toolbench.aware.schema import Instance
from toolbench.aware.sources.tasks import load_task

TASKS = ("home_search", "booking", "open_weather", "the_cat_api", "google_sheets")
#: Twins per task before this rewrite (seed 0), kept to show the cost of the stricter rules.
BEFORE = {
    "home_search": 100,
    "booking": 120,
    "open_weather": 98,
    "the_cat_api": 46,
    "google_sheets": 70,
}

_ART = r"(?:the|a|an)"
_PREP = r"(?:in|at|near|around|for|from|to|on|of|with|by|until|after|before|between)"
BAD = {
    "leading punctuation": re.compile(r"^[^\w\"'$(]"),
    "doubled space": re.compile(r"  "),
    "doubled comma": re.compile(r",\s*,|;\s*,"),
    "doubled article": re.compile(rf"\b{_ART}\s+{_ART}\b", re.I),
    "article/preposition before punctuation or at the end": re.compile(
        rf"(?<![\w-])(?:{_ART}|{_PREP})\s*(?:[,.;:?!]|$)", re.I
    ),
    "article before a verb": re.compile(rf"\b{_ART}\s+(?:come|comes|is|are|does|do)\b", re.I),
    "bare origin": re.compile(r"\b(?:bus|train|flight|cruise|tickets|seats) [A-Z][a-z]+,"),
    "I'm and": re.compile(r"\bI'm\s+(?:and|,)", re.I),
    "back-reference": re.compile(r"\b(?:there|that city|the same city)\b(?!\s+(?:is|are))", re.I),
    # Found on the v0 data after the rules above: each pattern is one of them.
    "being from a date": re.compile(r"\b(?:be|being)\s+from\b", re.I),
    "a return joined to nothing": re.compile(
        r"(?<!\d)(?<!\dst)(?<!\dnd)(?<!\drd)(?<!\dth)\s+and\s+(?:coming back|returning)\b", re.I
    ),
    "a coordinate label with no numbers": re.compile(r"\)\s*=\s*(?![(\d+-])"),
    "put with nowhere to put": re.compile(r"^\s*put\s+\S+\s*[.!?]?\s*$", re.I),
    "a verb with its object gone": re.compile(
        r"\b(?:overwrite|remove|delete|need)\s+(?:with|from|anymore)\b", re.I
    ),
    "a modal with no subject": re.compile(r"(?:^|[:;]\s*)should\b", re.I),
    "a range with one end": re.compile(r"\b(?:rows?|quantities)\s+through\b", re.I),
    "a bare noun": re.compile(
        r"\b(?:of|on|rid of|take|mark|show|undo)\s+(?:cat\s+)?(?:row|vote|favou?rite|image|photo)"
        r"(?!s)(?=\s*(?:[,.;!?]|$)|\s+(?:off|as|to)\b)",
        re.I,
    ),
    "a clause left hanging": re.compile(r"\bthat (?:was|went)\s*(?:[:,;]|in\b)", re.I),
}
#: Twins per task may drop below BEFORE by the rules' cost; google_sheets pays most (its
#: requests are short lists of labelled values): 57 of 70, each skip with its reason.
FLOOR = {"google_sheets": 0.8}


@cache
def _twins(
    task: str,
) -> tuple[dict[str, Instance], tuple[Instance, ...], tuple[tuple[str, str], ...]]:
    originals = {i.id: i for i in load_task(task)}
    result = remove_slots(list(originals.values()), seed=0)
    return originals, tuple(result.instances), tuple(result.skipped)


def _new_hits(pattern: re.Pattern[str], before: str, after: str) -> Counter[str]:
    """Matches in the twin that the original did not have ("2016 or before." may stay)."""
    hits = Counter(m.group(0).lower() for m in pattern.finditer(after))
    return hits - Counter(m.group(0).lower() for m in pattern.finditer(before))


@pytest.mark.parametrize("task", TASKS)
def test_no_twin_reads_badly(task: str) -> None:
    originals, twins, skipped = _twins(task)
    reasons = Counter(why for _, why in skipped)
    print(f"\n{task}: twins before {BEFORE[task]}, after {len(twins)}; skipped {dict(reasons)}")
    bad = []
    for twin in twins:
        original = originals[twin.twin_id or ""]
        before, after = original.dialogue[-1].content, twin.dialogue[-1].content
        place_gone = set(twin.provenance.removed_slots) & {"location", "location_to", "q"}
        for name, pattern in BAD.items():
            if name == "back-reference" and not place_gone:
                continue
            if _new_hits(pattern, before, after):
                bad.append((name, before, after))
        bad += [(problem, before, after) for problem in _structural(twin, original)]
    assert bad == []
    assert len(twins) + len(skipped) == len(originals)
    # The stricter rules may cost a few twins, never most of them.
    assert len(twins) >= FLOOR.get(task, 0.85) * BEFORE[task]


_ITEM = re.compile(r"[^,:;()—–]+")
_VALUE = re.compile(r"^\s*(?:for\s+)?[$'\"\d]")


def _structural(twin: Instance, original: Instance) -> list[str]:
    """Faults seen by comparing the twin with its original, not by a pattern on the twin:
    a list label left without its value ("Essay 94," -> "Essay,"), a value left without its
    label (", Internet 72.12," -> ", 72.12,"), a sentence whose subject was cut ("Ana left
    the company" -> "Left the company"), and slot words that also meant something else."""
    before, after = original.dialogue[-1].content, twin.dialogue[-1].content
    found = []
    items_before = [m.group(0).strip() for m in _ITEM.finditer(before)]
    items_after = {m.group(0).strip().rstrip(".!?") for m in _ITEM.finditer(after)}
    for item in items_before[1:]:  # list items: what follows a separator
        for kept in items_after - set(items_before):
            if kept and item.startswith(kept + " ") and _VALUE.match(item[len(kept) :]):
                found.append("a label with no value")
        words = item.split()
        if len(words) == 2 and re.fullmatch(r"\$?\d[\d.,]*", words[1]) and words[1] in items_after:
            found.append("a value with no label")
    slots = original.provenance.notes["slots"]
    for span in twin.provenance.removed_text:
        if before.startswith(span) and re.match(r" [a-z]", before[len(span) :]):
            found.append("a sentence with no subject")
    for name in twin.provenance.removed_slots:
        value = slots[name]
        same = len(re.findall(re.escape(value), before))
        if len(re.findall(re.escape(value), before, re.I)) > same:
            found.append("slot words that also meant something else")
    return found


@pytest.mark.parametrize("task", TASKS)
def test_twins_stay_exact(task: str) -> None:
    originals, twins, _ = _twins(task)
    for twin in twins:
        before = originals[twin.twin_id or ""]
        slots = before.provenance.notes["slots"]
        after = twin.dialogue[-1].content.lower()
        for name in twin.provenance.removed_slots:
            assert slots[name].lower() not in after, (name, after)
        for span in twin.provenance.removed_text:
            assert span.lower() in before.dialogue[-1].content.lower()


def test_every_skip_says_why() -> None:
    known = (NO_REQUIRED, "read badly", "one end of a range", "stay in the query", "too little")
    for task in TASKS:
        for iid, why in _twins(task)[2]:
            assert any(k in why for k in known), (iid, why)


def _query(query: str, slots: dict[str, str], *names: str) -> str:
    result = cut(query, slots, names)
    assert isinstance(result, _SlotCut), result
    return result.query


def test_a_leading_place_takes_its_dash_and_the_capital_comes_back() -> None:
    slots = {"location": "Tulsa"}
    query = "Tulsa - 2-bath condo for sale, 1 garage"
    assert _query(query, slots, "location") == "2-bath condo for sale, 1 garage"
    lower = {"location": "Reno"}
    assert _query("Reno, rent: condo with a pool", lower, "location") == "Rent: condo with a pool"


def test_an_article_goes_with_the_name_it_introduced() -> None:
    # "Where does the come from?" cannot be mended without inventing words: skipped, named.
    why = cut("Where does the Siamese come from?", {"breed_id": "Siamese"}, ["breed_id"])
    assert why == "the twin would read badly (article or preposition before a verb)"
    # A name that is only a modifier keeps the article of its noun.
    assert _query("Look up the maine coon cat breed", {"b": "maine coon"}, "b") == (
        "Look up the cat breed"
    )
    assert _query("What is the lifespan of the Bengal?", {"b": "Bengal"}, "b") == (
        "What is the lifespan?"
    )


def test_a_bare_origin_gets_its_preposition_when_the_destination_goes() -> None:
    slots = {"location_from": "Austin", "location_to": "Denver"}
    query = "Book a train Austin to Denver, leaving May 2, 2025 for 1 adult"
    assert _query(query, slots, "location_to") == (
        "Book a train from Austin, leaving May 2, 2025 for 1 adult"
    )
    # Also when the destination goes because the hotel's place (same words) was chosen.
    slots |= {"location": "Denver"}
    query += ", plus a hotel there"
    assert _query(query, slots, "location") == (
        "Book a train from Austin, leaving May 2, 2025 for 1 adult, plus a hotel"
    )
    home = {"location_from": "Mesa", "location_to": "Taos"}
    why = cut("I'm in Mesa and need a bus to Taos on May 2, 2025", home, ["location_from"])
    assert why == "the twin would read badly (a verb with no complement)"


def test_a_reference_to_a_removed_place_goes_too() -> None:
    slots = {"location_to": "Omaha", "location": "Omaha", "location_from": "Fargo"}
    query = "Find a bus from Fargo to Omaha on May 3, 2025, and a hotel there for two nights."
    result = cut(query, slots, ["location_to"])
    assert isinstance(result, _SlotCut)
    assert result.query == "Find a bus from Fargo on May 3, 2025, and a hotel for two nights."
    assert "there" in result.removed_text and result.removed_slots == ["location", "location_to"]
    # "Are there" is not a place.
    kept = _query("Are there condos for rent in Mesa?", {"location": "Mesa"}, "location")
    assert kept == "Are there condos for rent?"


def test_what_cannot_be_mended_is_skipped_with_a_reason() -> None:
    dates = {"checkin_date": "June 2, 2025", "checkout_date": "June 5, 2025"}
    query = "A hotel in Boise from June 2, 2025 to June 5, 2025, one room."
    assert cut(query, dates, ["checkin_date"]) == "the date is one end of a range"
    score = {"score": "91"}
    why = cut("The quiz score for Ana should be 91, not 80.", score, ["score"])
    assert isinstance(why, str) and "read badly" in why


def test_labels_and_quotes_go_with_their_value() -> None:
    assert _query("Cancel the vote with id 31337", {"v": "31337"}, "v") == "Cancel the vote"
    assert _query("Forecast in zipcode 10001 for today", {"zip": "10001"}, "zip") == (
        "Forecast for today"
    )
    assert _query("Weather in the city of Lyon, France, please", {"q": "Lyon, France"}, "q") == (
        "Weather, please"
    )
    assert _query("Name the column 'Total' in F1", {"h": "Total"}, "h") == "Name the column in F1"
    assert _query("Paint Ana Diaz's row blue", {"n": "Ana Diaz"}, "n") == "Paint the row blue"


def test_a_stay_keeps_its_dates_and_a_return_its_own_clause() -> None:
    where = {"location": "Boise"}
    assert _query("I'll be in Boise from May 2 to May 5. Need a hotel.", where, "location") == (
        "I'll be away from May 2 to May 5. Need a hotel."
    )
    # "be in X" with no dates after it is not a stay: no "away" ("going to be in Reno this week").
    week = _query("How's the weather going to be in Reno this week?", {"q": "Reno"}, "q")
    assert week == "How's the weather going to be this week?"
    dates = {"departure_date": "2024/11/24"}
    query = "A flight from SEA to Reno on 2024/11/24 and coming back 12/06/2024, max $300."
    assert _query(query, dates, "departure_date") == (
        "A flight from SEA to Reno, coming back 12/06/2024, max $300."
    )


def test_coordinates_take_their_label_and_bare_nouns_keep_an_article() -> None:
    slots = {"lat": "31.1", "lon": "-97.4"}
    query = "Show me pollution history at (lat, lon) = (31.1, -97.4) for last week!"
    assert _query(query, slots, "lat", "lon") == "Show me pollution history for last week!"
    assert _query("Please get rid of row 19, it's a duplicate.", {"r": "19"}, "r") == (
        "Please get rid of the row, it's a duplicate."
    )
    assert _query("Take favorite #13996 off my list", {"f": "13996"}, "f") == (
        "Take the favorite off my list"
    )
    # A noun that is part of a compound keeps its words as they are.
    assert _query("New budget row 5: Rent, $900", {"r": "5"}, "r") == "New budget row: Rent, $900"


@pytest.mark.parametrize(
    ("query", "slots", "reason"),
    [
        ("Put 13 in E28.", {"cell": "E28"}, "a verb with no place"),
        ("Overwrite B6 with 19260 please", {"cell": "B6"}, "a verb with no object"),
        ("We don't need Hire Year anymore, drop it.", {"c": "Hire Year"}, "a verb with no object"),
        ("Header fix: Stock should say On Hand", {"old": "Stock"}, "a verb with no subject"),
        ("Jonah Dubois left the company; delete the row.", {"n": "Jonah Dubois"}, "no subject"),
        ("Restock all that was under 5: set them to 60.", {"n": "under 5"}, "before punctuation"),
        ("Remove rows 6 through 8, they're tests.", {"first": "6"}, "one end of a range"),
        ("Ana — Essay 94, Lab 92, Project 80", {"a": "94"}, "a label with no value"),
        ("Spending: Rent $1320, Internet 72.12, Food $10.", {"b": "Internet"}, "label"),
        ("Mark lines that went over budget with Over budget", {"f": "Over budget"}, "also used"),
    ],
)
def test_fragments_that_cannot_be_mended_are_skipped_with_their_reason(
    query: str, slots: dict[str, str], reason: str
) -> None:
    why = cut(query, slots, list(slots))
    assert isinstance(why, str) and reason in why, why
