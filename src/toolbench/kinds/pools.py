"""Shared value pools and phrasing helpers for the seeded template generators.

The generators must read like real users and stay a pure function of (split, n, seed), so
everything random here takes an explicit ``random.Random`` and nothing touches global state.
A query is assembled from *pieces* (text, slot key or None) so that the generator knows exactly
which substring supplies each criterion, even after styling (lower-casing, typos) is applied.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable, Sequence
from typing import Any

# Real US cities, some with multi-word or punctuated names so place matching is not trivial.
US_CITIES = (
    "Albuquerque", "Anchorage", "Ann Arbor", "Arlington", "Asheville", "Atlanta", "Aurora",
    "Austin", "Bakersfield", "Baltimore", "Baton Rouge", "Bellevue", "Birmingham", "Boise",
    "Boston", "Boulder", "Buffalo", "Cape Coral", "Charleston", "Charlotte", "Chattanooga",
    "Chicago", "Cincinnati", "Cleveland", "Colorado Springs", "Columbus", "Dallas", "Dayton",
    "Denver", "Des Moines", "Detroit", "Durham", "El Paso", "Eugene", "Fort Collins",
    "Fort Worth", "Fresno", "Gainesville", "Grand Rapids", "Greensboro", "Greenville",
    "Henderson", "Honolulu", "Houston", "Indianapolis", "Jacksonville", "Kansas City",
    "Knoxville", "Lancaster", "Las Vegas", "Lexington", "Lincoln", "Little Rock", "Long Beach",
    "Los Angeles", "Louisville", "Lubbock", "Madison", "Memphis", "Mesa", "Miami", "Milwaukee",
    "Minneapolis", "Nashville", "New Haven", "New Orleans", "Newark", "Oakland", "Oklahoma City",
    "Omaha", "Orlando", "Pasadena", "Philadelphia", "Phoenix", "Pittsburgh", "Portland",
    "Providence", "Provo", "Raleigh", "Reno", "Richmond", "Rochester", "Sacramento",
    "Salt Lake City", "San Antonio", "San Diego", "San Jose", "Santa Fe", "Savannah",
    "Scottsdale", "Seattle", "Spokane", "St. Louis", "St. Petersburg", "Syracuse", "Tacoma",
    "Tallahassee", "Tampa", "Tucson", "Tulsa", "Virginia Beach", "Wichita", "Winston-Salem",
)  # fmt: skip

# Travel destinations: US cities plus a few well-known cities abroad.
TRAVEL_CITIES = (
    *US_CITIES[::2],
    "New York", "San Francisco", "Washington", "Toronto", "Montreal", "Vancouver",
    "Mexico City", "London", "Paris", "Rome", "Madrid", "Lisbon", "Dublin", "Tokyo",
)  # fmt: skip

CRUISE_PORTS = (
    "Miami", "Fort Lauderdale", "Port Canaveral", "Galveston", "New Orleans", "Seattle",
    "San Juan", "Nassau", "Cozumel", "Juneau", "Vancouver", "Honolulu", "Key West", "Bermuda",
)  # fmt: skip

AIRPORTS = ("JFK", "LAX", "SFO", "ORD", "ATL", "DFW", "DEN", "SEA", "BOS", "MIA", "PHX", "MSP")

NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)  # fmt: skip

ORDINAL_WORDS = (
    "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
    "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
    "sixteenth", "seventeenth", "eighteenth", "nineteenth", "twentieth",
)  # fmt: skip

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
MONTH_ABBR = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sept", "Oct", "Nov", "Dec")

# Misspellings real users make, applied only to frame words (never inside a slot's text).
TYPOS = {
    "looking": "lookng", "between": "betwen", "budget": "budjet", "would": "woud",
    "please": "pls", "something": "somthing", "around": "arround", "want": "wnat",
    "need": "ned", "with": "wiht", "find": "fnid", "available": "availible",
    "the": "teh", "and": "adn", "thanks": "thx", "family": "famliy", "for": "fro",
}  # fmt: skip

Piece = tuple[str, str | None]


def number_word(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def ordinal(n: int, words: bool = False) -> str:
    """'3rd', or 'third' when ``words`` (only up to twentieth, like people write)."""
    if words and n < len(ORDINAL_WORDS):
        return ORDINAL_WORDS[n]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def count(rng: random.Random, n: int, word: str, plural: str | None = None) -> str:
    """'3 bedrooms', 'three bedrooms' or '1 bedroom': digits or words, correct plural."""
    noun = word if n == 1 else (plural or word + "s")
    num = number_word(n) if n <= 10 and rng.random() < 0.3 else str(n)
    return f"{num} {noun}"


def money(rng: random.Random, value: int, small: bool = False) -> str:
    """One of the ways people write a dollar amount; every form parses back to ``value``.

    ``small`` is for rents, nightly rates and tickets, where '1.2M'-style forms make no sense.
    """
    forms = [f"${value:,}", f"{value:,} dollars", f"${value}"]
    if small:
        forms += [f"{value} USD", f"{value} bucks", str(value)]
        if value >= 1000 and value % 100 == 0:
            forms.append(f"${value / 1000:g}k")
    else:
        if value % 1000 == 0 and value < 1_000_000:
            forms += [f"${value // 1000}k", f"{value // 1000}K", f"${value // 1000}K"]
        if value >= 1_000_000 and value % 10_000 == 0:
            forms += [f"{value / 1e6:g}M", f"${value / 1e6:g}M", f"${value / 1e6:g} million"]
        forms.append(str(value))
    return rng.choice(forms)


def date_text(rng: random.Random, day: dt.date) -> str:
    """A calendar date in one of the many shapes users type; the year is always present."""
    m, d, y = day.month, day.day, day.year
    month, abbr = MONTHS[m - 1], MONTH_ABBR[m - 1]
    forms = [
        f"{month} {d}, {y}",
        f"{month} {d} {y}",
        f"{abbr} {d} {y}",
        f"{abbr} {d}, {y}",
        f"{y}-{m:02d}-{d:02d}",
        f"{m:02d}/{d:02d}/{y}",
        f"{m}/{d}/{y}",
        f"{y}/{m:02d}/{d:02d}",
        f"the {ordinal(d)} of {month}, {y}",
        f"{month} {ordinal(d)}, {y}",
        f"{d} {month} {y}",
        f"{day.strftime('%A')}, {month} {d}, {y}",
    ]
    return rng.choice(forms)


def random_date(rng: random.Random, first: dt.date, last: dt.date) -> dt.date:
    return first + dt.timedelta(days=rng.randrange((last - first).days + 1))


def article(phrase: str) -> str:
    """'a' or 'an' for the phrase that follows, by sound: 'an 8-bedroom', 'a one-bedroom'."""
    word = phrase.lower()
    if word.startswith(("one", "uni", "use")):
        return "a"
    if word[:1] in "aeiou8" or re.match(r"1[18](\D|$)", word):
        return "an"
    return "a"


def join_or(rng: random.Random, items: Sequence[str], conj: str = "or") -> str:
    if len(items) == 1:
        return items[0]
    comma = "," if len(items) > 2 and rng.random() < 0.5 else ""
    return ", ".join(items[:-1]) + f"{comma} {conj} {items[-1]}"


def fill(template: str, values: dict[str, str]) -> list[Piece]:
    """Split 'with {num_beds} and a pool' into pieces; '{key}' becomes a slot piece."""
    pieces: list[Piece] = []
    pos = 0
    for match in re.finditer(r"\{(\w+)\}", template):
        if match.start() > pos:
            pieces.append((template[pos : match.start()], None))
        pieces.append((values[match.group(1)], match.group(1)))
        pos = match.end()
    if pos < len(template):
        pieces.append((template[pos:], None))
    return pieces


def render(
    rng: random.Random, pieces: Sequence[Piece], typo_rate: float = 0.08, lower_rate: float = 0.08
) -> tuple[str, dict[str, str]]:
    """Join pieces into the final query and return it with {slot key: substring}.

    Styling is applied here so that slots stay exact substrings: typos touch frame text only,
    and lower-casing touches both the query and the recorded slot texts.
    """
    frame_idx = [i for i, (_, key) in enumerate(pieces) if key is None]
    pieces = list(pieces)
    if frame_idx and rng.random() < typo_rate:
        for i in rng.sample(frame_idx, len(frame_idx)):
            words = re.findall(r"[A-Za-z]+", pieces[i][0])
            hits = [w for w in words if w.lower() in TYPOS and w.islower()]
            if hits:
                word = rng.choice(hits)
                text = re.sub(rf"\b{word}\b", TYPOS[word], pieces[i][0], count=1)
                pieces[i] = (text, None)
                break
    lower = rng.random() < lower_rate
    if not lower and pieces:
        first, key = pieces[0]
        stripped = first.lstrip()
        pieces[0] = (stripped[:1].upper() + stripped[1:], key)
    query = re.sub(r"\s+", " ", "".join(text for text, _ in pieces)).strip()
    query = re.sub(r"\s+([,.?!;:])", r"\1", query)
    slots: dict[str, str] = {}
    for text, key in pieces:
        if key is not None and key not in slots:
            slots[key] = text.strip()
    if lower:
        query = query.lower()
        slots = {key: text.lower() for key, text in slots.items()}
    return query, slots


def shape(query: str) -> str:
    """The query with numbers and capitalised names masked: two queries of the same shape
    differ only in their values. Used to measure template variety."""
    masked = re.sub(r"\d[\d,./:-]*", "#", query)
    return re.sub(r"\b[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)*", "X", masked).lower()


def generate_unique(
    task: str,
    split: str,
    n: int,
    seed: int,
    make: Callable[[random.Random], dict[str, Any]],
    test_size: int,
) -> list[dict[str, Any]]:
    """``n`` records with distinct queries, a pure function of the arguments.

    Train and test draw from different random streams, and train also skips any query of the
    default-size test set for the same seed, so that training data never leaks a test query.
    """
    if split not in ("test", "train"):
        raise ValueError(f"split must be 'test' or 'train', not {split!r}")
    rng = random.Random(f"{task}-{split}-{seed}")
    seen: set[str] = set()
    if split == "train":
        test = generate_unique(task, "test", test_size, seed, make, test_size)
        seen = {r["prompt"].lower() for r in test}
    records: list[dict[str, Any]] = []
    while len(records) < n:
        record = make(rng)
        if record["prompt"].lower() not in seen:
            seen.add(record["prompt"].lower())
            records.append(record)
    return records
