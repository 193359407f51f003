"""Place lookups over the gazetteer: city names, ZIP codes, city ids and nearest places.

Name matching is case-, accent- and punctuation-insensitive ('sao paulo' finds São Paulo,
'St Louis' finds St. Louis), as the real API's is. A query ``q`` is ``name``, ``name,country``
or ``name,state,country`` (state only counts for the US); several matches are ordered by
population, so a bare 'London' is London, GB.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from toolbench.tasks.open_weather.places import CITIES, COUNTRY_NAMES, US_STATES, ZIPS


@dataclass(frozen=True)
class Place:
    name: str
    country: str
    state: str
    lat: float
    lon: float
    tz: int
    population: int
    id: int


_LETTERS = str.maketrans({"ø": "o", "æ": "ae", "ß": "ss", "ł": "l", "đ": "d", "ı": "i"})


def fold(text: str) -> str:
    """A matching key: no accents, no case, no dots, 'saint' = 'st', hyphens as spaces."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = text.translate(_LETTERS)
    text = re.sub(r"[.'’]", "", text).replace("-", " ")
    text = re.sub(r"\bsaint\b", "st", text)
    return " ".join(text.split())


def city_id(name: str, country: str, state: str) -> int:
    digest = hashlib.blake2b(f"{name}|{country}|{state}".encode(), digest_size=8).digest()
    return 1_000_000 + int.from_bytes(digest, "big") % 9_000_000


PLACES: tuple[Place, ...] = tuple(
    Place(name, country, state, lat, lon, tz, pop, city_id(name, country, state))
    for name, country, state, lat, lon, tz, pop in CITIES
)
_BY_NAME: dict[str, list[Place]] = {}
for _place in sorted(PLACES, key=lambda p: -p.population):
    _BY_NAME.setdefault(fold(_place.name), []).append(_place)
_BY_ID = {place.id: place for place in PLACES}
_ZIPS = {
    code: Place(name, "US", US_STATES[st], lat, lon, tz, 0, 0)
    for code, name, st, lat, lon, tz in ZIPS
}
_COUNTRIES = {fold(name): code for code, name in COUNTRY_NAMES.items()}
_COUNTRIES.update({"uk": "GB", "great britain": "GB", "england": "GB", "us": "US", "usa": "US"})
_COUNTRIES.update({"united states": "US", "united states of america": "US", "america": "US"})
_STATES = {fold(name): name for name in US_STATES.values()}
_STATES.update({code.lower(): name for code, name in US_STATES.items()})


def country_code(text: str) -> str | None:
    """'GB', 'gb', 'uk' or 'United Kingdom' -> 'GB'; None when unknown."""
    key = fold(text)
    if len(key) == 2 and key.upper() in COUNTRY_NAMES:
        return key.upper()
    return _COUNTRIES.get(key)


def us_state(text: str) -> str | None:
    """'CA', 'ca' or 'California' -> 'California'; None when unknown."""
    return _STATES.get(fold(text))


def find_cities(q: str) -> list[Place]:
    """Places matching ``q`` ('name[,state][,country]'), most populous first."""
    parts = [part.strip() for part in q.split(",")]
    matches = _BY_NAME.get(fold(parts[0]), [])
    country: str | None = None
    state: str | None = None
    if len(parts) == 2 and parts[1]:
        country = country_code(parts[1])
        if country is None:  # 'Portland,OR' / 'Paris, Texas': a US state in the country slot
            state, country = us_state(parts[1]), "US"
            if state is None:
                return []
    elif len(parts) >= 3:
        country = country_code(parts[-1]) if parts[-1] else None
        if parts[-1] and country is None:
            return []
        if country in (None, "US") and parts[1]:
            state = us_state(parts[1])
            if state is None:
                return []
    return [
        place
        for place in matches
        if (country is None or place.country == country) and (state is None or place.state == state)
    ]


def by_zip(text: str) -> Place | None:
    """'94040' or '94040,us' -> the ZIP area; only US codes are known."""
    code, _, country = (part.strip() for part in text.partition(","))
    if country and country_code(country) != "US":
        return None
    return _ZIPS.get(code)


def by_id(value: int) -> Place | None:
    return _BY_ID.get(value)


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371.0 * 2 * math.asin(min(1.0, math.sqrt(h)))


@lru_cache(maxsize=4096)
def near(lat: float, lon: float, limit: int, max_km: float) -> tuple[Place, ...]:
    """Up to ``limit`` places within ``max_km``, nearest first (ties by name)."""
    scored = [(distance_km(lat, lon, p.lat, p.lon), p.name, p) for p in PLACES]
    scored = sorted((s for s in scored if s[0] <= max_km), key=lambda s: (s[0], s[1]))
    return tuple(place for _, _, place in scored[:limit])


def timezone_guess(lon: float) -> int:
    """A UTC offset for a spot with no named place nearby: its nautical time zone."""
    return round(lon / 15) * 3600


def urban_level(lat: float, lon: float) -> float:
    """0..1, how built-up the spot is: drives the air-pollution model."""
    level = 0.05
    for place in near(lat, lon, 5, 150.0):
        size = min(1.0, math.log10(max(place.population, 10)) / 7)
        closeness = 1 - distance_km(lat, lon, place.lat, place.lon) / 150.0
        level = max(level, size * closeness)
    return level
