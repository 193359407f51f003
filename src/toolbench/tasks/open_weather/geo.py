"""Place look-ups the way OpenWeather resolves them: city names, ZIP codes, ids, nearest places.

A query ``q`` is ``name``, ``name,country`` or ``name,state,country`` (the state only counts
for the US; a US state in the country slot, 'Portland,OR', is read as one). Names match case-,
accent- and punctuation-insensitively (``gazetteer.fold``); several matches come most populous
first, so a bare 'Birmingham' is Birmingham, GB and 'Birmingham,AL,US' the one in Alabama.
Places matched by their own name come before places matched by another-language name.
"""

from __future__ import annotations

import math
import re
from functools import cache, lru_cache

import numpy as np

from toolbench.tasks.open_weather.gazetteer import (
    Place,
    cities,
    country_names,
    fold,
    nautical_offset,
    us_state_names,
    zip_codes,
)

__all__ = ["Place", "by_id", "by_zip", "country_code", "find_cities", "fold", "near", "us_state"]

EARTH_KM = 6371.0
KM_PER_DEGREE = math.pi * EARTH_KM / 180
MAX_QUERY = 200  # characters of ``q`` looked at; no place name is longer
_ZIP = re.compile(r"(\d{5})(?:-\d{4})?")
_COUNTRY_ALIASES = {
    "uk": "GB", "great britain": "GB", "britain": "GB", "england": "GB", "scotland": "GB",
    "wales": "GB", "usa": "US", "united states of america": "US", "america": "US",
    "south korea": "KR", "korea": "KR", "russia": "RU", "czechia": "CZ", "uae": "AE",
}  # fmt: skip


@cache
def _countries() -> dict[str, str]:
    table = {fold(name): code for code, name in country_names().items()}
    table.update(_COUNTRY_ALIASES)
    return table


@cache
def _states() -> dict[str, str]:
    table = {fold(name): name for name in us_state_names().values()}
    table.update({code.lower(): name for code, name in us_state_names().items()})
    return table


def country_code(text: str) -> str | None:
    """'GB', 'gb', 'uk' or 'United Kingdom' -> 'GB'; None when unknown."""
    key = fold(text)
    if len(key) == 2 and key.upper() in country_names():
        return key.upper()
    return _countries().get(key)


def us_state(text: str) -> str | None:
    """'CA', 'ca' or 'California' -> 'California'; None when unknown."""
    return _states().get(fold(text))


def _qualifiers(parts: list[str]) -> tuple[str | None, str | None] | None:
    """(country code, US state name) from the parts after the name; None if one is unknown."""
    country: str | None = None
    state: str | None = None
    if len(parts) == 2 and parts[1]:
        country = country_code(parts[1])
        if country is None:  # 'Portland,OR' / 'Paris, Texas': a US state in the country slot
            state, country = us_state(parts[1]), "US"
            if state is None:
                return None
    elif len(parts) >= 3:
        country = country_code(parts[-1]) if parts[-1] else None
        if parts[-1] and country is None:
            return None
        if country in (None, "US") and parts[1]:
            state = us_state(parts[1])
            if state is None:
                return None
    return country, state


@lru_cache(maxsize=8192)
def find_cities(q: str) -> tuple[Place, ...]:
    """Places matching ``q`` ('name[,state][,country]'), most populous first."""
    parts = [part.strip() for part in q[:MAX_QUERY].split(",")]
    qualifiers = _qualifiers(parts)
    if qualifiers is None:
        return ()
    country, state = qualifiers
    table = cities()
    key = fold(parts[0])
    matches = table.by_name.get(key, ()) + table.by_other_name.get(key, ())
    found = (
        place
        for place in matches
        if (country is None or place.country == country) and (state is None or place.state == state)
    )
    return tuple(dict.fromkeys(found))


def by_zip(text: str) -> Place | None:
    """'94040', '94040,us' or '94040-1234' -> the ZIP's area; only US codes (and those of its
    territories, e.g. '00601,pr') are known."""
    code, _, country = (part.strip() for part in text[:MAX_QUERY].partition(","))
    match = _ZIP.fullmatch(code)
    if match is None:
        return None
    place = zip_codes().get(match.group(1))
    if place is None or (country and country_code(country) not in ("US", place.country)):
        return None
    return place


def by_id(value: int) -> Place | None:
    return cities().by_id.get(value)


def distance_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return EARTH_KM * 2 * math.asin(min(1.0, math.sqrt(h)))


@lru_cache(maxsize=8192)
def near(lat: float, lon: float, limit: int, max_km: float) -> tuple[Place, ...]:
    """Up to ``limit`` places within ``max_km``, nearest first (ties: the bigger place).

    Only the band of latitudes that can be within ``max_km`` is measured (a binary search in
    the latitude-sorted table, then one vectorised haversine), so a look-up costs microseconds
    to a millisecond, not a scan of every city in Python."""
    table = cities()
    band = max_km / KM_PER_DEGREE
    lats = table.lats
    low = int(np.searchsorted(lats, math.radians(lat - band), side="left"))
    high = int(np.searchsorted(lats, math.radians(lat + band), side="right"))
    if low >= high:
        return ()
    p1, l1 = math.radians(lat), math.radians(lon)
    p2, l2 = lats[low:high], table.lons[low:high]
    h = np.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * np.cos(p2) * np.sin((l2 - l1) / 2) ** 2
    km = EARTH_KM * 2 * np.arcsin(np.minimum(1.0, np.sqrt(h)))
    inside = np.nonzero(km <= max_km)[0]
    # Rank by distance, then by position in the population order (stable, deterministic).
    rank = table.lat_order[low:high][inside]
    chosen = np.lexsort((rank, km[inside]))[:limit]
    return tuple(table.places[int(rank[i])] for i in chosen)


def timezone_guess(lon: float) -> int:
    """A UTC offset for a spot with no named place nearby: its nautical time zone."""
    return nautical_offset(lon)


def urban_level(lat: float, lon: float) -> float:
    """0..1, how built-up the spot is: drives the air-pollution model."""
    level = 0.05
    for place in near(lat, lon, 5, 150.0):
        size = min(1.0, math.log10(max(place.population, 10)) / 7)
        closeness = 1 - distance_km(lat, lon, place.lat, place.lon) / 150.0
        level = max(level, size * closeness)
    return level
