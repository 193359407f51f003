"""API docs and demonstrations for open_weather, written for this project.

``FUNCTIONS`` holds one doc per endpoint variant (file name = key): a '# ...' line saying what
the call returns, the curl line with placeholders (``{API_KEY}`` stays literal; the optional
parameters go where ``{optional_params}`` is, each as ``&name=value``), then the parameters and
their allowed values. ``EXAMPLES`` are (query, gold curl line) demonstrations that together use
every endpoint and every parameter and language.
"""

from __future__ import annotations

BASE = "https://api.openweathermap.org"

_KEY = "appid: (required) Your API key.\n"
_UNITS = (
    "units: (optional) Measurement system. 'standard' (the default: kelvin, m/s), 'metric' "
    "(degrees Celsius, m/s) or 'imperial' (degrees Fahrenheit, miles per hour).\n"
)
_MODE = "mode: (optional) Response format: 'json' (the default) or 'xml'.\n"
_LANG = (
    "lang: (optional) Language of the weather descriptions: 'en' English (the default), 'fr' "
    "French, 'zh_cn' simplified Chinese, 'it' Italian, 'de' German, 'ru' Russian, 'ja' "
    "Japanese, 'nl' Dutch, 'es' Spanish, 'pt' Portuguese.\n"
)
_CNT = (
    "cnt: (optional) How many 3-hour forecast steps to return, 1 to 40. Leave it out for all "
    "40 (5 days); e.g. the next 24 hours is cnt=8.\n"
)
_CITY = (
    "q: (required) City name, optionally followed by a comma and the ISO 3166 country code "
    "('Paris,FR'); for a US city the state code goes between them ('Portland,ME,US'). "
    "Spaces are written %20.\n"
)
_ZIP = "zip: (required) US ZIP code, optionally followed by ',us' ('94040' or '94040,us').\n"
_COORDS = (
    "lat, lon: (required) Latitude (-90 to 90, south negative) and longitude (-180 to 180, "
    "west negative) in decimal degrees.\n"
)
_LIMIT = (
    "limit: (optional) At most this many places in the answer, 1 to 5 (default 5); write "
    "&limit=... only when the number of results is asked for.\n"
)


def _doc(summary: str, path: str, query: str, params: str) -> str:
    return f"# {summary}\ncurl -X GET '{BASE}/{path}?{query}'\n\nParameters:\n{params}".rstrip()


_OPT = "&appid={API_KEY}{optional_params}"

FUNCTIONS: dict[str, str] = {
    "current_weather_city": _doc(
        "Current weather conditions in the city {city}.",
        "data/2.5/weather", "q={city}" + _OPT, _CITY + _KEY + _UNITS + _MODE + _LANG,
    ),
    "current_weather_zip": _doc(
        "Current weather conditions in the area of the US ZIP code {zip_code}.",
        "data/2.5/weather", "zip={zip_code}" + _OPT, _ZIP + _KEY + _UNITS + _MODE + _LANG,
    ),
    "current_weather_coords": _doc(
        "Current weather conditions at latitude {lat}, longitude {lon}.",
        "data/2.5/weather", "lat={lat}&lon={lon}" + _OPT, _COORDS + _KEY + _UNITS + _MODE + _LANG,
    ),
    "forecast_city": _doc(
        "Weather forecast for the city {city}: 5 days in 3-hour steps.",
        "data/2.5/forecast", "q={city}" + _OPT, _CITY + _KEY + _UNITS + _MODE + _LANG + _CNT,
    ),
    "forecast_zip": _doc(
        "Weather forecast for the area of the US ZIP code {zip_code}: 5 days in 3-hour steps.",
        "data/2.5/forecast", "zip={zip_code}" + _OPT,
        _ZIP + _KEY + _UNITS + _MODE + _LANG + _CNT,
    ),
    "forecast_coords": _doc(
        "Weather forecast at latitude {lat}, longitude {lon}: 5 days in 3-hour steps.",
        "data/2.5/forecast", "lat={lat}&lon={lon}" + _OPT,
        _COORDS + _KEY + _UNITS + _MODE + _LANG + _CNT,
    ),
    "air_pollution_current": _doc(
        "Air quality right now at latitude {lat}, longitude {lon}: the air quality index "
        "(1 good to 5 very poor) and pollutant concentrations.",
        "data/2.5/air_pollution", "lat={lat}&lon={lon}&appid={API_KEY}", _COORDS + _KEY,
    ),
    "air_pollution_forecast": _doc(
        "Hourly air quality forecast for the next 4 days at latitude {lat}, longitude {lon}.",
        "data/2.5/air_pollution/forecast", "lat={lat}&lon={lon}&appid={API_KEY}",
        _COORDS + _KEY,
    ),
    "air_pollution_history": _doc(
        "Hourly air quality records at latitude {lat}, longitude {lon} between two moments in "
        "the past (records start on 27 November 2020).",
        "data/2.5/air_pollution/history",
        "lat={lat}&lon={lon}&start={start}&end={end}&appid={API_KEY}",
        _COORDS
        + "start, end: (required) Beginning and end of the period as Unix time (seconds since "
        "1970-01-01 UTC). A calendar date stands for 00:00 UTC of that day, e.g. 2023-01-10 "
        "is 1673308800.\n" + _KEY,
    ),
    "geocode_direct": _doc(
        "Coordinates of the places named {city} (several places can share a name).",
        "geo/1.0/direct", "q={city}&limit={limit}&appid={API_KEY}", _CITY + _LIMIT + _KEY,
    ),
    "geocode_reverse": _doc(
        "Names of the places near latitude {lat}, longitude {lon}, nearest first.",
        "geo/1.0/reverse", "lat={lat}&lon={lon}&limit={limit}&appid={API_KEY}",
        _COORDS + _LIMIT + _KEY,
    ),
    "geocode_zip": _doc(
        "Name and coordinates of the place with the US ZIP code {zip_code}.",
        "geo/1.0/zip", "zip={zip_code}&appid={API_KEY}", _ZIP + _KEY,
    ),
}  # fmt: skip


def _curl(path: str, query: str) -> str:
    return f"curl -X GET '{BASE}/{path}?{query}'"


EXAMPLES: list[tuple[str, str]] = [
    (
        "What's the temperature in Madrid right now, in Celsius?",
        _curl("data/2.5/weather", "q=Madrid&appid={API_KEY}&units=metric"),
    ),
    (
        "Current weather for ZIP code 10001 in Fahrenheit, with the description in Spanish.",
        _curl("data/2.5/weather", "zip=10001&appid={API_KEY}&units=imperial&lang=es"),
    ),
    (
        "Give me the current conditions at latitude 35.7, longitude 139.7 as XML.",
        _curl("data/2.5/weather", "lat=35.7&lon=139.7&appid={API_KEY}&mode=xml"),
    ),
    (
        "Current weather in Paris, France in standard units, described in simplified Chinese.",
        _curl("data/2.5/weather", "q=Paris,FR&appid={API_KEY}&units=standard&lang=zh_cn"),
    ),
    (
        "How's the weather at 59.9°N, 30.3°E at the moment? Answer in Russian.",
        _curl("data/2.5/weather", "lat=59.9&lon=30.3&appid={API_KEY}&lang=ru"),
    ),
    (
        "Weather right now in Rome, Italy, metric units and Italian descriptions please.",
        _curl("data/2.5/weather", "q=Rome,IT&appid={API_KEY}&units=metric&lang=it"),
    ),
    (
        "What's it like outside in Montreal right now? Descriptions in French, please.",
        _curl("data/2.5/weather", "q=Montreal&appid={API_KEY}&lang=fr"),
    ),
    (
        "Is it sunny in the 33101 area? Tell me in Portuguese.",
        _curl("data/2.5/weather", "zip=33101&appid={API_KEY}&lang=pt"),
    ),
    (
        "Will it rain in Portland, Maine over the next few days?",
        _curl("data/2.5/forecast", "q=Portland,ME,US&appid={API_KEY}"),
    ),
    (
        "Forecast for zip 60614 please, JSON format, descriptions in Dutch.",
        _curl("data/2.5/forecast", "zip=60614&appid={API_KEY}&mode=json&lang=nl"),
    ),
    (
        "Show the next 4 forecast time slots at longitude -43.2, latitude -22.9, with "
        "temperatures in kelvin.",
        _curl("data/2.5/forecast", "lat=-22.9&lon=-43.2&appid={API_KEY}&units=standard&cnt=4"),
    ),
    (
        "Get the 5-day forecast for Osaka, Japan in XML with Japanese descriptions.",
        _curl("data/2.5/forecast", "q=Osaka,JP&appid={API_KEY}&mode=xml&lang=ja"),
    ),
    (
        "Forecast for Austin, TX for the next 12 hours in imperial units.",
        _curl("data/2.5/forecast", "q=Austin,TX,US&appid={API_KEY}&units=imperial&cnt=4"),
    ),
    (
        "Five-day outlook for New York, with the weather described in German.",
        _curl("data/2.5/forecast", "q=New%20York&appid={API_KEY}&lang=de"),
    ),
    (
        "Weather forecast for Cape Town, English descriptions, 2 time steps only.",
        _curl("data/2.5/forecast", "q=Cape%20Town&appid={API_KEY}&lang=en&cnt=2"),
    ),
    (
        "How clean is the air right now at latitude 28.6 and longitude 77.2?",
        _curl("data/2.5/air_pollution", "lat=28.6&lon=77.2&appid={API_KEY}"),
    ),
    (
        "Predict the air quality for the coming days at (lat, lon) = (-33.9, 151.2).",
        _curl("data/2.5/air_pollution/forecast", "lat=-33.9&lon=151.2&appid={API_KEY}"),
    ),
    (
        "What were the pollution levels at latitude 48.9, longitude 2.4 between January 10, "
        "2023 and January 12, 2023?",
        _curl(
            "data/2.5/air_pollution/history",
            "lat=48.9&lon=2.4&start=1673308800&end=1673481600&appid={API_KEY}",
        ),
    ),
    (
        "List up to 3 places called Springfield with their coordinates.",
        _curl("geo/1.0/direct", "q=Springfield&limit=3&appid={API_KEY}"),
    ),
    (
        "Which named places lie near latitude 51.51, longitude -0.13? Return at most 2.",
        _curl("geo/1.0/reverse", "lat=51.51&lon=-0.13&limit=2&appid={API_KEY}"),
    ),
    (
        "Where is the US postal code 90210 located?",
        _curl("geo/1.0/zip", "zip=90210&appid={API_KEY}"),
    ),
]
