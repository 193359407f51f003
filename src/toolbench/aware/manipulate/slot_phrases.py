"""How far a slot's words reach, and whether what is left still reads like a request.

Cutting only the exact words of a slot leaves debris a user would never type: "the temperament
of the?", "the vote with id", "in zipcode, for the next 6 hours", "Shade 's row". The words
around a slot that only exist to introduce it (a preposition, an article, a label such as
"id", "#", "zipcode" or "the city of", a possessive, "the ... area") belong to the phrase it
heads, so they go with it. What cannot be repaired by a fixed rule (a verb that was the slot,
half of a date range, a place referred back to later) is detected here so the caller can pick
another slot or skip the twin and say why. A few rewrites keep a request whole instead of
skipping it: "I'll be in Boise from ..." becomes "I'll be away from ..." (not "I'll be from"),
"on May 2 and coming back May 9" becomes ", coming back May 9", a coordinate label whose
numbers went ("at (lat, lon) =") goes too, and a noun whose value went gets back its article
("get rid of row 19" -> "get rid of the row"). Every rule is a regular expression over the query:
the same query always gives the same twin.
"""

from __future__ import annotations

import re
from collections import Counter

#: Words that introduce a slot ("in New Orleans", "returning 2024/03/05", "with id 248658").
#: Longer alternatives first so "the city of" wins over "of".
_INTRODUCERS = (
    r"the city of|city of|the town of|with id|with the id|zip ?code|postal code|zip|"
    r"check-?in(?: on)?|check-?out(?: on)?|and (?:out|ending|leaving|returning|departing)|"
    r"(?:(?:for|at) )?the (?:spot|place|point|location) (?:where|with)|"
    r"(?:and )?(?:coming back|latitude|longitude|longitute|lat|lon)(?: is| =|:)?|"
    r"ending|starting|returning|departing|leaving|back on|id|#|no\.|number|"
    r"in|at|near|around|for|from|to|on|of|with|"
    r"called|named|by|into|under|until|since|about|titled|labelled|labeled"
)
_DETERMINERS = r"the|a|an|my|our|this|that"
_LEFT = re.compile(rf"(?:(?<![\w-])(?:{_INTRODUCERS}|{_DETERMINERS})\s*)$", re.IGNORECASE)
_DETERMINER_LEFT = re.compile(rf"(?:\b(?:{_DETERMINERS})\s+)$", re.IGNORECASE)
#: After the slot: the phrase ended (punctuation, end, or a word starting a new phrase).
_PHRASE_END = re.compile(
    r"^\s*(?:$|[,.;:?!)]|(?:and|or|but|with|for|from|to|on|in|at|by|please|this|right|"
    r"starting|ending|returning|departing|leaving|until)\b)",
    re.IGNORECASE,
)
_AREA = re.compile(r"^\s+area\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"^['’]s\b")
_OPEN_ENDED = re.compile(
    r"^\s+or (?:earlier|later|before|after|more|less|above|below|fewer|newer|older)\b",
    re.IGNORECASE,
)

ARTICLES = r"the|a|an"
PREPOSITIONS = (
    r"in|at|near|around|for|from|to|on|of|with|by|into|under|until|since|about|after|before|"
    r"above|below|between|than|called|named|titled|labelled|labeled|via"
)
_DANGLING_WORDS = (
    rf"{ARTICLES}|{PREPOSITIONS}|and|or|be|is|are|id|#|=|lat|lon|latitude|longitude|longitute|"
    r"out|back|where|least|over|say|write|put|as|was|were"
)
_AUX = r"is|are|was|were|be|do|does|did|should|must|can|could|will|would|has|have|gets|come|comes"
#: Each check names a fragment that no user writes.
_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("starts with punctuation", re.compile(r"^\s*[^\w\s\"'$(]")),
    ("doubled space", re.compile(r"\S  +\S")),
    ("doubled comma", re.compile(r"[,;:—–/]\s*[,;:/]")),
    ("empty quotes or brackets", re.compile(r"(['\"])\s*\1|\s\)|\(\s")),
    ("ends with a separator", re.compile(r"[/—–]\s*$|^\s*\w+\s+/\s")),
    (
        "a verb with no object",
        re.compile(
            r"\b(?:put|write|enter|type|overwrite|remove|delete|drop|move|copy)\s+"
            r"(?:in|into|at|on|with|from)\b|\b(?:need|want|use)\s+(?:anymore|any more)\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "Put 13." once "in E28" is gone: a value with nowhere to go.
        "a verb with no place",
        re.compile(
            r"\bput\b(?![^.;!?]*\b(?:in|into|on|at|under|above|below|as|back|there)\b)",
            re.IGNORECASE,
        ),
    ),
    (
        "a verb with no subject",
        re.compile(r"(?:^|[:;—–]\s*)(?:should|must|would|will)\s+(?:say|read|be|show)\b", re.I),
    ),
    (
        "a verb with no complement",
        re.compile(r"\b(?:i'm|i am|we're|we are)\s*(?:and|or|but|[,.;!?])", re.IGNORECASE),
    ),
    ("a stray letter", re.compile(r"(?:^|\s)s\b")),
    ("doubled article", re.compile(rf"\b(?:{ARTICLES})\s+(?:{ARTICLES})\b", re.IGNORECASE)),
    (
        "article or preposition before punctuation or at the end",
        re.compile(rf"(?<![\w-])(?:{_DANGLING_WORDS})\s*(?:[,.;:?!)]|$)", re.IGNORECASE),
    ),
    (
        "article or preposition before a verb",
        re.compile(rf"\b(?:{ARTICLES}|{PREPOSITIONS})\s+(?:{_AUX})\b", re.IGNORECASE),
    ),
    ("a possessive with no owner", re.compile(r"(?:^|\s)['’]s\b")),
    ("empty coordinates", re.compile(r"\(\s*[,;]?\s*\)|=(?!\s*[\w(\"'+-])|\)\s*=\s*(?![(\d+-])")),
)
#: "there" as a place, not "is there" / "there are".
_THERE = r"(?<!\bis\s)(?<!\bare\s)(?<!\bwas\s)\bthere\b(?!\s+(?:is|are|was|were|be|any)\b)"
_REFERENCE = rf"(?:{_THERE}|\b(?:that city|the same city|that place|the same place|that town)\b)"
BACK_REFERENCE = re.compile(_REFERENCE, re.IGNORECASE)
_BACK_REFERENCE_PHRASE = re.compile(rf"\s*(?:\b(?:in|at|to)\s+)?{_REFERENCE}", re.IGNORECASE)
#: Slots that name a place; a later "there" points at them.
PLACE_SLOTS = frozenset({"location", "location_to", "location_from", "q", "zip", "city"})


def phrase_span(text: str, start: int, end: int) -> tuple[int, int, str]:
    """Widen the slot's words at ``text[start:end]`` to the whole phrase they head; returns the
    new span and what replaces it ("" normally, "the" for a possessive: "Grace's row" becomes
    "the row", which still reads as a request and no longer says whose)."""
    if _POSSESSIVE.match(text[end:]) is not None:
        return start, end + 2, "the"
    if start > 0 and end < len(text) and text[start - 1] == text[end] and text[end] in "'\"":
        start, end = start - 1, end + 1  # "the header 'Status'": the quotes go too
    if (open_ended := _OPEN_ENDED.match(text[end:])) is not None:
        end += open_ended.end()  # "hired in 2015 or earlier": "or earlier" has no anchor left
    area = _AREA.match(text[end:])
    ended = _PHRASE_END.match(text[end:]) is not None
    if area is not None and _DETERMINER_LEFT.search(text[:start]) is not None:
        end += area.end()  # "in the Little Rock area": the whole phrase is the place
        ended = True
    slot_start = start
    while (match := _LEFT.search(text[:start])) is not None:
        word = match.group(0).strip().lower()
        if re.fullmatch(_DETERMINERS, word) and not ended:
            break  # "the american bobtail cat breed": the article belongs to "breed"
        start = match.start()
    dated = _DATES_FOLLOW.match(text[end:]) is not None
    if dated and _BE_IN.match(text[start:slot_start]) and _BE.search(text[:start]):
        return start, end, "away"  # "I'll be in Boise from ..." -> "I'll be away from ..."
    if ended and (joined := _AND_RETURN.match(text[end:])) is not None:
        return start, end + joined.end(), ","  # "to Reno on May 2 and coming back May 9"
    return start, end, ""


_BE_IN = re.compile(r"\s*(?:in|at)\b", re.IGNORECASE)
_BE = re.compile(r"\b(?:be|being)\s*$", re.IGNORECASE)
_DATES_FOLLOW = re.compile(r"^\s+(?:from|between)\b", re.IGNORECASE)
#: "and" that joined a removed departure to its return: the return stays, the "and" goes.
_AND_RETURN = re.compile(
    r"^\s+and\s+(?=(?:coming back|returning|back on|flying back)\b)", re.IGNORECASE
)
_COORDINATE = r"(?:lat|lon|lng|latitude|longitude|longitute)"
#: A coordinate label whose numbers were cut: "at (lat, lon) = for ..." has nothing to point at.
_ORPHAN_LABEL = re.compile(
    rf"\s*(?:\b(?:at|for|with)\s+)?(?:the (?:location|spot|place|point) with\s+)?"
    rf"\(\s*{_COORDINATE}\s*,\s*{_COORDINATE}\s*\)\s*=(?!\s*[(\d+-])",
    re.IGNORECASE,
)
#: Nouns that keep their value's article when the value goes: "of row 19" -> "of the row".
_BARE_NOUN = re.compile(
    r"(?<![\w'])(?P<before>[\w']+)\s+(?P<noun>(?:cat\s+)?"
    r"(?:row|column|vote|favou?rite|image|photo|picture|pic))\s*$",
    re.IGNORECASE,
)
#: Words after which such a noun needs its article (a verb or a preposition, not "budget row").
_NEEDS_ARTICLE = re.compile(
    rf"{PREPOSITIONS}|up|off|rid|show|undo|mark|add|take|remove|delete|get|see",
    re.IGNORECASE,
)


def drop_orphan_labels(text: str) -> tuple[str, list[str]]:
    """Remove "(lat, lon) =" (and the "at" that led to it) once its numbers are gone."""
    found = [m.group(0).strip() for m in _ORPHAN_LABEL.finditer(text)]
    return _ORPHAN_LABEL.sub("", text), found


def with_article(prefix: str) -> str:
    """``prefix`` (the text before a removed value) with "the" before a bare noun the value
    named: "get rid of row 19" -> "get rid of the row", not "get rid of row"."""
    match = _BARE_NOUN.search(prefix)
    if match is None or not _NEEDS_ARTICLE.fullmatch(match.group("before")):
        return prefix
    return prefix[: match.start("noun")] + "the " + prefix[match.start("noun") :]


_LABEL_LEFT = re.compile(r"[:,(—–]\s*(?P<label>[A-Za-z][\w'-]*(?:\s+[\w'-]+){0,2})\s*$")
_VALUE_END = re.compile(r"^\s*(?:[,.;)]|$)")
_NOT_LABEL = re.compile(rf"\b(?:{ARTICLES}|my|our|your|and|or)\b", re.IGNORECASE)


_ITEM_START = re.compile(r"[:,(—–]\s*$")
_BARE_VALUE = re.compile(r"^\s*\$?\d[\d.,]*\s*(?:[,.;)]|$)")


def leaves_bare_label(text: str, start: int, end: int) -> bool:
    """True when ``text[start:end]`` (already widened) is one half of a "label value" list
    item and the other half would stay alone: "Essay 94, Lab 92" -> "Essay, Lab 92" (value
    cut), "Rent $1320, Internet 72.12" -> "Rent $1320, 72.12" (label cut)."""
    if _ITEM_START.search(text[:start]) and _BARE_VALUE.match(text[end:]):
        return True
    left = _LABEL_LEFT.search(text[:start])
    if left is None or _VALUE_END.match(text[end:]) is None:
        return False
    return _NOT_LABEL.search(left.group("label")) is None


def drop_back_references(text: str) -> tuple[str, list[str]]:
    """Remove "there" / "in that city" when the place they point at was removed, so the
    twin does not refer to something the user never named."""
    found = [m.group(0).strip() for m in _BACK_REFERENCE_PHRASE.finditer(text)]
    return _BACK_REFERENCE_PHRASE.sub("", text), found


def problems(text: str) -> list[str]:
    """The fragments in ``text`` a user would not write (empty when it reads cleanly)."""
    return [name for name, pattern in _CHECKS if pattern.search(text)]


def new_problems(original: str, twin: str) -> list[str]:
    """The fragments the cut added: a check fires more often in the twin than in the
    original ("2016 or before." ends in a preposition on purpose; the twin may keep that, but
    not turn it into "is or before.")."""
    found = []
    for name, pattern in _CHECKS:
        before = Counter(m.group(0).strip().lower() for m in pattern.finditer(original))
        after = Counter(m.group(0).strip().lower() for m in pattern.finditer(twin))
        if after - before:
            found.append(name)
    return found


def starts_like(original: str, text: str) -> str:
    """Upper-case the first letter when the original sentence started upper-case: cutting
    "Jacksonville - " must not leave "1.5-bath house ..." looking like a continuation."""
    if original[:1].isupper() and text[:1].islower():
        return text[0].upper() + text[1:]
    return text
