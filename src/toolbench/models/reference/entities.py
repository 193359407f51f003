"""Entity extraction for the non-LLM baseline: numbers, dates and place names in free text.

The baseline fills a demonstration's program with values from the test query, so it needs the
query's values in normalised form ("$1.25M" -> 1250000, "Sept 29 2025" -> (9, 29, 2025)) and
where they sit (their neighbouring words are the cues that say which call a value belongs to).
Everything here is deterministic and never raises on any input text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}  # fmt: skip
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
)
_ORDINALS = (
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
)
NUMBER_WORDS = {w: i for i, w in enumerate(_NUMBERS.split())}
ORDINAL_WORDS = {w: i for i, w in enumerate(_ORDINALS.split()) if i}
# Words that start sentences or requests and are never place names on their own.
# Domain words (hotel, condo, ...) come from the demonstrations' vocabulary instead.
_COMMON = """i i'm i'd i'll we we're we'd my our me you your hi hello hey please find show search
    looking look book reserve need want would could can help get plan any are is there what
    round trip also and the a an thanks thank budget price max min nothing it must needs size
    minimum maximum going flying staying searching travel traveling usd ok yes no br ba bd sq
    ft sqft apt from to in on at for with near around by of or until through then via between
    how when where which who why do does did will give check tell retrieve fetch list"""
COMMON = frozenset(_COMMON.split())
# Words that begin multi-word place names; kept even where a sentence starts.
_PREFIXES = "new san santa los las st st. fort port salt kansas oklahoma el la lake key grand"
PLACE_PREFIXES = frozenset(_PREFIXES.split())

_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_WEEKDAY = r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<![\d/-])(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?![\d/-])"), "ymd"),
    (re.compile(r"(?<![\d/-])(\d{1,2})[/-](\d{1,2})[/-](\d{4}|\d{2})(?![\d/-])"), "mdy"),
    (
        re.compile(
            rf"\b{_WEEKDAY}({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?",
            re.I,
        ),
        "Mdy",
    ),
    (
        re.compile(
            rf"\b{_WEEKDAY}(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\b\.?"
            r"(?:,?\s+(\d{4})\b)?",
            re.I,
        ),
        "dMy",
    ),
)
_NUMBER = re.compile(
    r"(?P<cur>\$\s?)?(?:(?P<neg>(?<![^\s(\[,=])-)|(?<![\w.,]))(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<ord>st|nd|rd|th)?"
    r"(?:\s?(?P<suf>k|K|m|M|million|thousand|mil)(?![a-zA-Z]))?"
    r"(?P<cur2>\s?(?:dollars|usd|USD|bucks)\b|\$)?"
)
_WORD_NUMBER = re.compile(
    r"\b(" + "|".join(sorted([*NUMBER_WORDS, *ORDINAL_WORDS], key=len, reverse=True)) + r")\b",
    re.I,
)
# A capitalised word, accented letters included ('São', 'Bắc'); a lower-case particle between
# two of them belongs to the name ('São José dos Pinhais').
_CAP_TOKEN = re.compile(
    r"(?<![^\W\d_])[A-ZÀ-ÖØ-Þ](?:[^\W\d_]|['’])*(?:[.-][^\W\d_]+)*\.?"
    r"|(?<= )(?:de|da|do|dos|das|del|di|du)(?= [A-ZÀ-ÖØ-Þ])"
)
_TOKEN = re.compile(r"[a-z]+|\d+(?:\.\d+)?")
# Codes: capitals and digits together, maybe joined by ':' or '-' ('C6', 'A2:A13', 'SO-1049').
_CODE = re.compile(
    r"(?<![\w$#.:-])(?=[A-Z][A-Z0-9:-]*\d)[A-Z][A-Z0-9]*(?:[:-][A-Z0-9]+)*(?![\w:-])"
)


@dataclass(frozen=True)
class Entity:
    """A value found in text. ``value``: float (number), (month, day, year) (date), str (place,
    or code: an identifier written as is, such as a cell 'C6' or an order 'SO-1049')."""

    kind: str
    value: Any
    start: int
    end: int
    text: str
    money: bool = False
    ordinal: bool = False


def stem(word: str) -> str:
    """A crude stem so that 'bedrooms'/'bedroom' and 'nights'/'night' share cues."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        word = word[:-1]
    if len(word) > 6 and word.endswith("ing"):
        word = word[:-3]
    return word


def tokens(text: str) -> list[tuple[str, int, int]]:
    """Lower-cased word and number tokens with their spans ('3br' -> '3', 'br')."""
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text.lower())]


def _valid_date(month: int, day: int, year: int) -> bool:
    return 1 <= month <= 12 and 1 <= day <= 31 and 1900 <= year <= 2100


def _dates(text: str) -> list[Entity]:
    found: list[Entity] = []
    taken: list[tuple[int, int]] = []
    for pattern, order in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end in taken):
                continue
            a, b, c = m.group(1), m.group(2), m.group(3)
            if order == "ymd":
                y, mo, d = int(a), int(b), int(c)
            elif order == "mdy":
                mo, d, y = int(a), int(b), int(c)
                y = y + 2000 if y < 100 else y
            elif order == "Mdy":
                mo, d, y = MONTHS[a.lower()], int(b), int(c) if c else 0
            else:
                d, mo, y = int(a), MONTHS[b.lower()], int(c) if c else 0
            if not _valid_date(mo, d, y or 2000):
                continue
            month_word = a if order == "Mdy" else b if order == "dMy" else ""
            if not c and month_word.lower() in ("may", "mar", "jun", "sep"):
                continue  # 'may 3' without a year is too often the verb or a plain word
            taken.append((m.start(), m.end()))
            found.append(Entity("date", (mo, d, y), m.start(), m.end(), m.group()))
    # A date written without its year borrows the year of the nearest full date.
    full = [e for e in found if e.value[2]]
    result = []
    for e in found:
        if not e.value[2]:
            if not full:
                continue
            nearest = min(full, key=lambda f: abs(f.start - e.start))
            e = Entity("date", (e.value[0], e.value[1], nearest.value[2]), e.start, e.end, e.text)
        result.append(e)
    return result


def parse_number(text: str) -> float | None:
    """'$1,250,000' -> 1250000.0, '1.25M' -> 1250000.0, '850k' -> 850000.0, 'six' -> 6.0."""
    text = text.strip()
    word = text.lower()
    if word in NUMBER_WORDS:
        return float(NUMBER_WORDS[word])
    if word in ORDINAL_WORDS:
        return float(ORDINAL_WORDS[word])
    m = _NUMBER.fullmatch(text)
    if m is None:
        return None
    return _number_value(m)


def _number_value(m: re.Match[str]) -> float:
    value = float(m.group("num").replace(",", ""))
    value = -value if m.group("neg") else value
    suffix = (m.group("suf") or "").lower()
    if suffix in ("k", "thousand"):
        value *= 1_000
    elif suffix in ("m", "million", "mil"):
        value *= 1_000_000
    return round(value, 6)


def _numbers(text: str, taken: list[tuple[int, int]]) -> list[Entity]:
    def free(start: int, end: int) -> bool:
        return not any(start < e and s < end for s, e in taken)

    found = []
    for m in _NUMBER.finditer(text):
        start = m.start("num") if m.group("cur") is None else m.start()
        start = m.start("neg") if m.group("neg") else start
        if not free(start, m.end()):
            continue
        money = bool(m.group("cur") or m.group("cur2"))
        text_ = text[start : m.end()].rstrip()
        found.append(
            Entity(
                "number",
                _number_value(m),
                start,
                start + len(text_),
                text_,
                money,
                bool(m.group("ord")),
            )
        )
    for m in _WORD_NUMBER.finditer(text):
        if free(m.start(), m.end()):
            word = m.group().lower()
            value = float(NUMBER_WORDS.get(word, ORDINAL_WORDS.get(word, 0)))
            found.append(
                Entity(
                    "number", value, m.start(), m.end(), m.group(), ordinal=word in ORDINAL_WORDS
                )
            )
    return found


def _sentence_start(text: str, pos: int) -> bool:
    before = text[:pos].rstrip()
    return not before or before[-1] in ".!?:;-\n"


def _overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans)


def _drop_word(word: str, known_words: Collection[str], at_start: bool, alone: bool) -> bool:
    """Whether a capitalised word is ordinary English rather than part of a place name."""
    low = re.sub(r"['’]s$", "", word.lower().rstrip("."))
    if low in COMMON or low in MONTHS or low in WEEKDAYS or low in NUMBER_WORDS:
        return True
    if low in ORDINAL_WORDS:
        return True
    parts = low.split("-")
    known = all(p in known_words or stem(p) in known_words for p in parts)
    return known and low not in PLACE_PREFIXES and (at_start or alone)


def _places(  # noqa: C901 -- two scans (capitalised runs, cue words), one span list
    text: str,
    taken: list[tuple[int, int]],
    known_words: Collection[str],
    gazetteer: Iterable[str],
    place_cues: Collection[str],
) -> list[Entity]:
    spans: list[tuple[int, int]] = list(taken)
    found: list[Entity] = []
    # Runs of capitalised words: 'Salt Lake City', 'St. Louis', 'Winston-Salem', 'JFK'.
    groups: list[list[re.Match[str]]] = []
    for m in _CAP_TOKEN.finditer(text):
        if _overlaps(m.start(), m.end(), spans):
            continue
        last = groups[-1][-1] if groups else None
        joins = last is not None and text[last.end() : m.start()] == " "
        if joins and last is not None and last.group().endswith("."):
            joins = last.group().lower() == "st."
        if joins:
            groups[-1].append(m)
        else:
            groups.append([m])
    for group in groups:
        while group and _drop_word(
            group[0].group(), known_words, _sentence_start(text, group[0].start()), len(group) == 1
        ):
            group = group[1:]
        if not group:
            continue
        start = group[0].start()
        name = text[start : group[-1].end()]
        if name.endswith(".") and not name.lower().endswith("st."):
            name = name[:-1]
        name = re.sub(r"['’]s$", "", name)  # "Laundry Pods's price": the name is Laundry Pods
        if len(name) >= 2:
            found.append(Entity("place", name, start, start + len(name), name))
            spans.append((start, start + len(name)))
    # In lower-cased text: the unknown words right after a cue such as 'in' or 'from'.
    lowercase = sum(c.isupper() for c in text) <= 1
    words = list(re.finditer(r"[A-Za-z][A-Za-z'’.-]*", text)) if lowercase else []
    for i, cue in enumerate(words):
        if cue.group().lower() not in place_cues:
            continue
        run: list[re.Match[str]] = []
        for m in words[i + 1 : i + 4]:
            gap = text[(run[-1] if run else cue).end() : m.start()]
            low = m.group().lower().rstrip(".")
            known = low in known_words or stem(low) in known_words
            if gap != " " or known or _drop_word(low, (), False, False):
                break
            run.append(m)
            if m.group().endswith(".") and low != "st":
                break
        if run and not _overlaps(run[0].start(), run[-1].end(), spans):
            name = text[run[0].start() : run[-1].end()]
            name = name[:-1] if name.endswith(".") and not name.lower().endswith("st.") else name
            found.append(
                Entity("place", name.title(), run[0].start(), run[0].start() + len(name), name)
            )
            spans.append((run[0].start(), run[0].start() + len(name)))
    # Known place names, matched case-insensitively (for lower-cased queries).
    lowered = text.lower()
    for place in sorted(set(gazetteer), key=lambda p: (-len(p), p)):
        for m in re.finditer(rf"(?<!\w){re.escape(place.lower())}(?!\w)", lowered):
            if not _overlaps(m.start(), m.end(), spans):
                found.append(Entity("place", place, m.start(), m.end(), text[m.start() : m.end()]))
                spans.append((m.start(), m.end()))
    return found


def extract_entities(
    text: str,
    known_words: Collection[str] = (),
    gazetteer: Iterable[str] = (),
    place_cues: Collection[str] = (),
) -> list[Entity]:
    """All dates, codes, numbers and places in ``text``, in order of position, never
    overlapping (a code's digits are no number: 'E28' is a cell, not 28).

    ``known_words`` are lower-case words that are not places on their own (the vocabulary of
    the demonstrations, the API's allowed values); ``gazetteer`` lists place names to find
    even when not capitalised; ``place_cues`` are words ('in', 'from') after which unknown
    lower-case words are taken as a place name.
    """
    if not isinstance(text, str) or not text:
        return []
    dates = _dates(text)
    taken = [(e.start, e.end) for e in dates]
    codes = [
        Entity("code", m.group(), m.start(), m.end(), m.group())
        for m in _CODE.finditer(text)
        if not _overlaps(m.start(), m.end(), taken)
    ]
    taken += [(e.start, e.end) for e in codes]
    numbers = _numbers(text, taken)
    taken += [(e.start, e.end) for e in numbers]
    known = frozenset(known_words) | {stem(w) for w in known_words}
    places = _places(text, taken, known, gazetteer, frozenset(place_cues))
    return sorted(dates + codes + numbers + places, key=lambda e: (e.start, e.end))


# -- cue features -----------------------------------------------------------------------------

FEATURE_WEIGHTS = {"L1": 3.0, "L2": 0.8, "L": 0.4, "R1": 3.0, "R2": 0.8, "R": 0.4, "B": 2.0}


def words(text: str) -> list[str]:
    """Stemmed word tokens, in order."""
    return [stem(w) for w, _, _ in tokens(text)]


def first_match(value: str, query_words: list[str]) -> int:
    """Index where all words of ``value`` occur in a row in the query (prefixes allowed), or -1."""
    want = words(value)
    for i in range(len(query_words) - len(want) + 1 if want else 0):
        window = query_words[i : i + len(want)]
        if all(
            q == w or (len(w) >= 4 and q.startswith(w)) for q, w in zip(window, want, strict=True)
        ):
            return i
    return -1


def surface_match(value: str, query_words: list[str]) -> float:
    """How strongly a choice value is named in the query: 1 in full, 0.6 by its head word."""
    if first_match(value, query_words) >= 0:
        return 1.0
    want = words(value)
    return 0.6 if len(want) > 1 and len(want[0]) >= 4 and want[0] in query_words else 0.0


def stream(text: str, entities: list[Entity]) -> list[tuple[str, int]]:
    """Stemmed tokens in order, each entity collapsed into one '<kind>' token (with its index)."""
    items = [(f"<{e.kind}>", e.start, i) for i, e in enumerate(entities)]
    for word, start, end in tokens(text):
        if not any(e.start <= start < e.end or start <= e.start < end for e in entities):
            items.append((stem(word), start, -1))
    items.sort(key=lambda item: item[1])
    return [(word, idx) for word, _, idx in items]


def _after_choice(
    items: list[tuple[str, int]], start: int, phrases: Collection[tuple[str, ...]]
) -> int:
    """Where the words after a number continue once a choice phrase (or its first words)
    right there is passed: in '2 King Bed room(s)' and '3 king rooms' the count's next word is
    'room', as in '2 rooms'."""
    best = start - 1
    for phrase in phrases:
        n = 0
        while n < len(phrase) and start + n < len(items) and items[start + n][0] == phrase[n]:
            n += 1
        best = max(best, start + n - 1)
    return best


def entity_features(
    text: str, entities: list[Entity], choices: Collection[tuple[str, ...]] = ()
) -> list[dict[str, float]]:
    """Weighted cue features of every entity: the words around it (nearest count most, a
    neighbouring value only when adjacent; after a number, a named choice such as a room type
    is passed over), the two words before it as a pair, its rank among values of its kind,
    and for numbers their size and marks ($, 2.5, 3rd)."""
    items = stream(text, entities)
    where = {idx: pos for pos, (_, idx) in enumerate(items) if idx >= 0}
    out = []
    for i, e in enumerate(entities):
        pos = where[i]
        right = _after_choice(items, pos + 1, choices) if e.kind == "number" else pos
        feats: dict[str, float] = {}
        for d in range(1, 5):
            for side, j in (("L", pos - d), ("R", right + d)):
                if not 0 <= j < len(items) or (side == "R" and d > 3):
                    continue
                word = items[j][0]
                if word.startswith("<") and d > 1:
                    continue
                tag = f"{side}{d}" if d <= 2 else side
                feats[f"{tag}:{word}"] = FEATURE_WEIGHTS[tag]
                feats.setdefault(f"{side}:{word}", FEATURE_WEIGHTS[side])
        if pos >= 2 and not items[pos - 1][0].startswith("<"):
            feats[f"B:{items[pos - 2][0]}_{items[pos - 1][0]}"] = FEATURE_WEIGHTS["B"]
        same = [x for x in entities if x.kind == e.kind]
        rank = same.index(e)
        feats[f"rank:{min(rank, 3)}"] = 0.5
        feats[f"last:{rank == len(same) - 1}"] = 0.3
        if e.kind == "number":
            v = abs(float(e.value))
            feats[f"mag:{int(math.log10(v)) if v >= 1 else 0}"] = 1.0
            if float(e.value) < 0:
                feats["negative"] = 1.0
            # Only the marked case is a cue; "not money" would just favour frequent slots.
            for flag, on in (("money", e.money), ("frac", v != int(v)), ("ordinal", e.ordinal)):
                if on:
                    feats[flag] = 1.0
        out.append(feats)
    return out
