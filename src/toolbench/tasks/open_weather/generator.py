"""Seeded template generator for open_weather test and training data.

Each record is ``{"prompt", "completion": [gold curl line], "slots"}``; ``slots`` maps every
request parameter the user supplies (q, zip, lat, lon, units, mode, lang, cnt, limit, start,
end) to the exact query substring that supplies it. Output is a pure function of
(split, n, seed). Gold lines put the location first, then ``appid={API_KEY}``, then units,
mode, lang, cnt (geocoding: q/lat/lon, limit, appid; history: lat, lon, start, end, appid).
"""

from __future__ import annotations

import calendar
import datetime as dt
import random
import unicodedata
from functools import cache
from typing import Any
from urllib.parse import quote

from toolbench.kinds.pools import date_text, fill, generate_unique, join_or, number_word, render
from toolbench.tasks.open_weather import geo
from toolbench.tasks.open_weather.gazetteer import (
    Place,
    cities,
    country_names,
    us_state_names,
    zip_codes,
)

TASK = "open_weather"
DEFAULT_TEST_SIZE = 100
DEFAULT_SEED = 0
BASE = "https://api.openweathermap.org"
DRAWN_FROM_POPULATION = 100_000  # queries name real cities at least this big

# (endpoint, location kind, weight)
KINDS = (
    ("weather", "city", 13), ("weather", "zip", 8), ("weather", "coords", 11),
    ("forecast", "city", 12), ("forecast", "zip", 8), ("forecast", "coords", 10),
    ("air_pollution", "coords", 8), ("air_pollution/forecast", "coords", 7),
    ("air_pollution/history", "coords", 7), ("direct", "city", 6), ("reverse", "coords", 5),
    ("zip", "zip", 5),
)  # fmt: skip

WHERE = {
    "city": ("in {q}", "in {q}", "for {q}", "in the city of {q}"),
    "zip": ("in {zip}", "for zip code {zip}", "in the {zip} area", "around ZIP {zip}",
            "for postal code {zip}", "in zipcode {zip}"),
    "coords": ("at latitude {lat} and longitude {lon}", "at longitude {lon}, latitude {lat}",
               "at longitute {lon} and latitude {lat}", "at lat {lat}, lon {lon}",
               "at the location with (longitute, latitude) = ({lon}, {lat})",
               "at (lat, lon) = ({lat}, {lon})", "at the coordinates {lat}, {lon}",
               "at {lat} {lon}", "for the spot where latitude is {lat} and longitude is {lon}",
               "at the place with longitude {lon} and latitude {lat}"),
}  # fmt: skip
HEMI = "at {lat} {lon}"  # the form that takes '56.7°S 12.1°E'-style values

OPENERS: dict[str, tuple[str, ...]] = {
    "weather": (
        "What's the weather like {where} right now", "Get the current weather {where}",
        "Tell me the current weather conditions {where}", "What is the temperature {where} now",
        "Is it raining {where} at this moment", "Current weather {where}, please",
        "Check the present conditions {where}", "Can you look up the weather {where} right now",
        "I'd like to know how the weather is {where} today", "How windy is it {where} now",
    ),
    "forecast": (
        "What's the forecast {where}", "Do you know what the weather will be like {where} "
        "in the following days", "Give me the weather forecast {where}",
        "Retrieve the temperature and wind forecast {where}", "Forecast {where}, please",
        "I'm planning a trip; what's the upcoming weather {where}",
        "Get me the 3-hourly forecast {where}", "How will the weather develop {where}",
    ),
    "forecast_span": (
        "Will it rain {where} tomorrow", "Give me the 5-day forecast {where}",
        "What should I expect weather-wise {where} over the next 5 days",
        "How's the weather going to be {where} this week",
        "Retrieve tomorrow's temperature and wind speed data {where}",
    ),
    "air_pollution": (
        "What's the current air pollution level {where}", "How's the air quality {where} "
        "right now", "Give me the air quality data {where} at this moment",
        "Is the air clean {where} today", "Check current pollutant concentrations {where}",
        "Air quality index {where}, now",
    ),
    "air_pollution/forecast": (
        "What's the air quality forecast {where}", "How will the air quality be {where} in "
        "the coming days", "What air pollution should I expect {where} over the next few days",
        "Predict pollution levels {where} for the next 4 days",
        "Give me the hourly air quality outlook {where}",
    ),
    "air_pollution/history": (
        "What was the air pollution {where} from {start} to {end}",
        "Get historical air quality data {where} between {start} and {end}",
        "Show me pollution history {where} for {start} through {end}",
        "How polluted was the air {where} from {start} until {end}",
        "I need past air quality records {where}, starting {start} and ending {end}",
    ),
    "direct": (
        "Find the coordinates of {q}", "Where is {q}", "Look up locations named {q}",
        "Geocode {q}", "What are the latitude and longitude of {q}",
        "Get me geographic coordinates for places called {q}",
    ),
    "reverse": (
        "Which city is {where}", "Name the places {where}", "Reverse geocode the point {where}",
        "What town is closest to the spot {where}", "What places are there {where}",
    ),
    "zip": (
        "Get the coordinates for zip code {zip}", "Where is ZIP {zip}",
        "Which town has the postal code {zip}", "Geocode the zip {zip}",
        "What are the lat/lon of the {zip} zip code",
    ),
}  # fmt: skip
QUESTION = ("What", "How", "Is", "Will", "Do", "Can", "Where", "Which", "I'm")

UNITS_TEXT = {
    "standard": (("in {units} units", "standard"), ("with temperatures in {units}", "Kelvin"),
                 ("using {units} units", "standard"), ("in {units}", "kelvin")),
    "metric": (("in {units}", "Celsius"), ("in {units} units", "metric"),
               ("using the {units} system", "metric"), ("in {units}", "degrees Celsius"),
               ("in {units}", "°C")),
    "imperial": (("in {units}", "Fahrenheit"), ("in {units} units", "imperial"),
                 ("with wind speed in {units}", "miles per hour"), ("in {units}", "°F"),
                 ("in {units}", "degrees Fahrenheit")),
}  # fmt: skip
MODE_TEXT = ("in {mode} format", "as {mode}", "as a {mode}-mode response", "in {mode} mode")
LANG_TEXT = ("in {lang}", "with descriptions in {lang}", "written in {lang}")
LANG_NAMES = {
    "en": ("English",), "fr": ("French",), "zh_cn": ("simplified Chinese", "Simplified Chinese"),
    "it": ("Italian",), "de": ("German",), "ru": ("Russian",), "ja": ("Japanese",),
    "nl": ("Dutch",), "es": ("Spanish",), "pt": ("Portuguese",),
}  # fmt: skip
CNT_TEXT = ("for the next {cnt} time slots", "for just {cnt} timestamps",
            "with only {cnt} entries", "for the first {cnt} forecast steps")  # fmt: skip
CNT_SENT = ("Give me {cnt} time slots.", "I only need {cnt} timestamps.",
            "Just the first {cnt} entries, please.", "Return {cnt} data points.")  # fmt: skip
CNT_SENT_ONE = ("Give me {cnt} time slot.", "I only need {cnt} timestamp.")
CNT_ONE = ("for the next {cnt} time slot", "with just {cnt} timestamp")
# Geocoding result counts are asked for in a sentence of their own.
LIMIT_ONE = ("Just {limit} result, please.", "Return only {limit} match.",
             "Show the top {limit} location.")  # fmt: skip
LIMIT_TEXT = ("Give me up to {limit} results.", "Return at most {limit} matches.",
              "Show the top {limit} locations.", "No more than {limit} places, please.",
              "Limit it to {limit}.", "I only need {limit} of them.")  # fmt: skip
TAIL = ("Please respond {x}.", "I'd like the answer {x}.", "Return the data {x}.",
        "Give it to me {x}.", "Show the results {x}.")  # fmt: skip
FIRST_DAY, LAST_DAY = dt.date(2021, 1, 1), dt.date(2025, 5, 15)


def curl(path: str, params: list[tuple[str, str]]) -> str:
    return f"curl -X GET '{BASE}/{path}?" + "&".join(f"{k}={v}" for k, v in params) + "'"


@cache
def drawn_places() -> tuple[Place, ...]:
    """The cities queries are about, most populous first (a fixed order: draws are seeded)."""
    return tuple(p for p in cities().places if p.population >= DRAWN_FROM_POPULATION)


@cache
def shared_names() -> tuple[Place, ...]:
    """Drawn cities whose name other places share too: geocoding them has several answers."""
    return tuple(p for p in drawn_places() if len(geo.find_cities(p.name)) > 1)


@cache
def drawn_zips() -> tuple[str, ...]:
    return tuple(sorted(zip_codes()))


@cache
def state_codes() -> dict[str, str]:
    return {name: code for code, name in us_state_names().items()}


def _is_default(place: Place) -> bool:
    """Whether a bare name finds this place (it is the most populous of its name)."""
    return geo.find_cities(place.name)[:1] == (place,)


def _ascii(name: str) -> str:
    return "".join(
        ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch)
    )


def _city(rng: random.Random, prefer_shared: bool) -> tuple[str, str]:
    """(query text, gold q) for a city, with a state/country qualifier when one is needed."""
    place = rng.choice(shared_names() if prefer_shared and rng.random() < 0.6 else drawn_places())
    name = _ascii(place.name) if rng.random() < 0.4 else place.name  # 'Sao Paulo' is fine too
    if _is_default(place) and rng.random() < 0.65:
        return name, quote(name, safe=",")
    if place.country == "US" and place.state in state_codes():
        code = state_codes()[place.state]
        state = rng.choice((place.state, code))
        return f"{name}, {state}", quote(name) + f",{code},US"
    country = rng.choice((country_names().get(place.country, place.country), place.country))
    return f"{name}, {country}", quote(name) + f",{place.country}"


def _coords(rng: random.Random, near_city: bool) -> tuple[float, float]:
    if near_city or rng.random() < 0.3:
        place = rng.choice(drawn_places())
        return place.lat + rng.uniform(-0.3, 0.3), place.lon + rng.uniform(-0.3, 0.3)
    return rng.uniform(-80, 80), rng.uniform(-180, 180)


def _location(
    rng: random.Random, kind: str, endpoint: str, values: dict[str, str]
) -> tuple[str, list[tuple[str, str]]]:
    """Fill ``values`` with the location's slot texts; return (where phrase, gold params)."""
    if kind == "city":
        values["q"], q = _city(rng, prefer_shared=endpoint == "direct")
        return rng.choice(WHERE["city"]), [("q", q)]
    if kind == "zip":
        code = rng.choice(drawn_zips())
        if rng.random() < 0.15:
            values["zip"] = f"{code}, US"
            return rng.choice(WHERE["zip"]), [("zip", f"{code},us")]
        values["zip"] = code
        return rng.choice(WHERE["zip"]), [("zip", code)]
    lat, lon = _coords(rng, near_city=endpoint == "reverse")
    digits = rng.choices((1, 2, 4), weights=(7, 3, 1))[0]
    lat_text, lon_text = ("0.0" if round(v, digits) == 0 else f"{v:.{digits}f}" for v in (lat, lon))
    if rng.random() < 0.12:
        values["lat"] = lat_text.lstrip("-") + ("°S" if lat_text.startswith("-") else "°N")
        values["lon"] = lon_text.lstrip("-") + ("°W" if lon_text.startswith("-") else "°E")
        where = HEMI
    else:
        values["lat"], values["lon"] = lat_text, lon_text
        where = rng.choice(WHERE["coords"])
    return where, [("lat", lat_text), ("lon", lon_text)]


def _history(rng: random.Random, values: dict[str, str]) -> list[tuple[str, str]]:
    if rng.random() < 0.15:  # raw unix times
        start = calendar.timegm(FIRST_DAY.timetuple()) + rng.randrange(0, 1_400) * 86400
        start += rng.randrange(24) * 3600
        end = start + rng.randrange(3, 24 * 10) * 3600
        values["start"], values["end"] = str(start), str(end)
        return [("start", str(start)), ("end", str(end))]
    first = FIRST_DAY + dt.timedelta(days=rng.randrange((LAST_DAY - FIRST_DAY).days))
    last = first + dt.timedelta(days=rng.choice((1, 1, 2, 3, 5, 7, 10, 14)))
    values["start"], values["end"] = date_text(rng, first), date_text(rng, last)
    return [
        ("start", str(calendar.timegm(first.timetuple()))),
        ("end", str(calendar.timegm(last.timetuple()))),
    ]


def _cnt(rng: random.Random, values: dict[str, str]) -> tuple[str, int]:
    """(fragment, cnt) for a forecast length phrase."""
    style = rng.random()
    if style < 0.2:
        hours = rng.choice((3, 6, 9, 12, 18, 24, 36, 48))
        values["cnt"] = f"{hours} hours"
        return "for the next {cnt}", hours // 3
    if style < 0.3:
        days = rng.choice((1, 2, 3, 4))
        values["cnt"] = f"{days} days" if days > 1 else "24 hours"
        return "for the next {cnt}", 8 * days
    n = rng.choices((rng.randint(1, 5), rng.randint(6, 16), rng.randint(17, 40)), (5, 3, 1))[0]
    values["cnt"] = number_word(n) if n <= 10 and rng.random() < 0.25 else str(n)
    return rng.choice(CNT_TEXT if n > 1 else CNT_ONE), n


def _options(
    rng: random.Random, endpoint: str, values: dict[str, str]
) -> tuple[list[str], list[tuple[str, str]], str]:
    """Optional-parameter fragments, their gold params, and a sentence asking for a cnt."""
    fragments: list[str] = []
    params: list[tuple[str, str]] = []
    if rng.random() < 0.45:
        units = rng.choice(("standard", "metric", "imperial"))
        fragment, values["units"] = rng.choice(UNITS_TEXT[units])
        fragments.append(fragment)
        params.append(("units", units))
    if rng.random() < 0.3:
        mode = rng.choice(("json", "json", "xml"))
        values["mode"] = rng.choice((mode, mode.upper()))
        fragment = rng.choice(MODE_TEXT)
        fragments.append(fragment.replace("a {", "an {") if mode == "xml" else fragment)
        params.append(("mode", mode))
    if rng.random() < 0.35:
        lang = rng.choice(list(LANG_NAMES))
        values["lang"] = rng.choice(LANG_NAMES[lang])
        fragments.append(rng.choice(LANG_TEXT))
        params.append(("lang", lang))
    extra = ""
    used_cnt = endpoint == "forecast" and rng.random() < 0.35
    if used_cnt:
        fragment, n = _cnt(rng, values)
        if fragment != "for the next {cnt}" and rng.random() < 0.4:
            extra = rng.choice(CNT_SENT if n > 1 else CNT_SENT_ONE)
        else:
            fragments.append(fragment)
        params.append(("cnt", str(n)))
    rng.shuffle(fragments)
    return fragments, params, extra


def _sentence(rng: random.Random, opener: str, fragments: list[str]) -> str:
    mark = "?" if opener.startswith(QUESTION) else rng.choice((".", ".", "!", ""))
    if not fragments:
        return opener + mark
    joined = join_or(rng, fragments, "and")
    if rng.random() < 0.55 and not opener.endswith("please"):
        return opener + rng.choice((" ", ", ")) + joined + mark
    return opener + (mark or ".") + " " + rng.choice(TAIL).replace("{x}", joined)


def _then(first: str, sentences: list[str]) -> str:
    """``first`` followed by whole sentences (it gets a full stop if it has no mark)."""
    if not sentences:
        return first
    return " ".join([first + ("" if first[-1] in ".?!" else "."), *sentences])


def _record(rng: random.Random) -> dict[str, Any]:
    endpoint, kind, _ = rng.choices(KINDS, weights=[k[2] for k in KINDS])[0]
    values: dict[str, str] = {}
    where, loc_params = _location(rng, kind, endpoint, values)
    params = list(loc_params)
    if endpoint in ("weather", "forecast"):
        fragments, options, extra = _options(rng, endpoint, values)
        spans = endpoint == "forecast" and "cnt" not in values and rng.random() < 0.4
        key = "forecast_span" if spans else endpoint
        opener = rng.choice(OPENERS[key]).replace("{where}", where)
        template = _then(_sentence(rng, opener, fragments), [extra] if extra else [])
        params += [("appid", "{API_KEY}"), *options]
        path = f"data/2.5/{endpoint}"
    elif endpoint.startswith("air_pollution"):
        if endpoint.endswith("history"):
            params += _history(rng, values)
        opener = rng.choice(OPENERS[endpoint]).replace("{where}", where)
        template = _sentence(rng, opener, [])
        params.append(("appid", "{API_KEY}"))
        path = f"data/2.5/{endpoint}"
    else:
        fragments = []
        if endpoint != "zip" and rng.random() < 0.6:
            n = rng.randint(1, 5)
            values["limit"] = number_word(n) if rng.random() < 0.3 else str(n)
            fragments.append(rng.choice(LIMIT_TEXT if n > 1 else LIMIT_ONE))
            params.append(("limit", str(n)))
        opener = rng.choice(OPENERS[endpoint]).replace("{where}", where)
        template = _then(_sentence(rng, opener, []), fragments)
        params.append(("appid", "{API_KEY}"))
        path = f"geo/1.0/{endpoint}"
    pieces = fill(template, values)
    query, slots = render(rng, pieces)
    order = [key for key, _ in params if key in slots]
    return {
        "prompt": query,
        "completion": [curl(path, params)],
        "slots": {key: slots[key] for key in order},
    }


def generate(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records for ``split`` ('test' or 'train'); the same arguments give the same list,
    and train never repeats a query of the default test set (see ``generate_unique``)."""
    return generate_unique(TASK, split, n, seed, _record, DEFAULT_TEST_SIZE)
