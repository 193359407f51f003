"""The simulated OpenWeather API (api.openweathermap.org): one Starlette app for every world.

Endpoints: ``/data/2.5/weather`` and ``/data/2.5/forecast`` (by ``q``, ``zip``, ``id`` or
``lat``+``lon``; ``units``, ``mode``, ``lang``, and ``cnt`` for the forecast),
``/data/2.5/air_pollution`` with ``/forecast`` and ``/history`` (``lat``, ``lon``; ``start``
and ``end`` for history), and ``/geo/1.0/direct``, ``/reverse`` and ``/zip``.

Every response is a pure function of the request once defaults are filled in: ``units``
falls back to standard (as the real API does for unknown values), ``mode`` to JSON, ``lang``
to English; parameter order does not matter, and city names are matched case- and
accent-insensitively. There is no clock: "now" is ``weather.REFERENCE_TIME``. The world only
holds the API keys that are accepted; errors use the real API's bodies and status codes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from toolbench.kinds.service import SIMULATED_API_KEY
from toolbench.tasks.open_weather import geo, render
from toolbench.tasks.open_weather.geo import Place
from toolbench.tasks.open_weather.i18n import normalise_lang
from toolbench.tasks.open_weather.weather import (
    HISTORY_START,
    REFERENCE_TIME,
    UNITS,
    air_quality,
    observe,
)

HOST = "api.openweathermap.org"
FORECAST_STEPS = 40  # 5 days of 3-hour steps
AIR_FORECAST_HOURS = 96  # 4 days, hourly
MAX_HISTORY_HOURS = 366 * 24
GEO_LIMIT = 5
NAMED_WITHIN_KM = 30.0  # a coordinate takes the name of a city this close
REVERSE_WITHIN_KM = 250.0
MAX_INT = 10**15  # any integer parameter beyond this is refused (unix times fit easily)
MAX_ECHO = 64  # characters of a bad parameter quoted back in an error message
INVALID_KEY = "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info."


@dataclass(frozen=True)
class OpenWeatherWorld:
    """One execution's world: the API keys it accepts. Nothing else is stateful."""

    api_keys: frozenset[str] = field(default_factory=lambda: frozenset({SIMULATED_API_KEY}))


class ApiError(Exception):
    def __init__(self, status: int, cod: int | str, message: str) -> None:
        super().__init__(message)
        self.status, self.body = status, {"cod": cod, "message": message}


def _bad(message: str) -> ApiError:
    return ApiError(400, "400", message)


CITY_NOT_FOUND = ApiError(404, "404", "city not found")


def _echo(text: str) -> str:
    """A parameter as quoted back in an error: short, so a 100k-digit value is not echoed."""
    return text if len(text) <= MAX_ECHO else text[:MAX_ECHO] + "..."


def _float(params: Mapping[str, str], name: str, limit: float) -> float:
    text = params[name].strip()
    try:
        value = float(text)
    except ValueError:
        raise _bad(f"{_echo(text)} is not a float") from None
    if value != value or abs(value) == float("inf"):
        raise _bad(f"{_echo(text)} is not a float")
    if not -limit <= value <= limit:
        raise _bad("wrong latitude" if name == "lat" else "wrong longitude")
    return round(value, 4)


def _int(params: Mapping[str, str], name: str, limit: int = MAX_INT) -> int | None:
    """An integer parameter, or None if absent. Hostile spellings (``1.5e999``, ``nan``, a
    5000-digit string past Python's int-from-text limit, anything beyond ``limit``) are the
    API's 400, never an OverflowError/ValueError out of the handler."""
    text = params.get(name, "").strip()
    if not text:
        return None
    try:
        value = int(float(text)) if "." in text else int(text)
    except (ValueError, OverflowError):
        raise _bad(f"{name}: {_echo(text)} is not a number") from None
    if abs(value) > limit:
        raise _bad(f"{name}: {_echo(text)} is out of range")
    return value


def _coords(params: Mapping[str, str]) -> tuple[float, float]:
    if not params.get("lat", "").strip() or not params.get("lon", "").strip():
        raise _bad("Nothing to geocode")
    return _float(params, "lat", 90), _float(params, "lon", 180)


def _at(lat: float, lon: float) -> Place:
    """The location for a coordinate request: the coordinate, named after a close city."""
    nearby = geo.near(lat, lon, 1, NAMED_WITHIN_KM)
    if nearby:
        city = nearby[0]
        return Place(city.name, city.country, city.state, lat, lon, city.tz, city.population,
                     city.id)  # fmt: skip
    return Place("", "", "", lat, lon, geo.timezone_guess(lon), 0, 0)


def _locate(params: Mapping[str, str]) -> Place:
    """Resolve the weather endpoints' location parameters (coordinates win, then q, zip, id)."""
    if "lat" in params or "lon" in params:
        return _at(*_coords(params))
    if params.get("q", "").strip():
        cities = geo.find_cities(params["q"])
        if not cities:
            raise CITY_NOT_FOUND
        return cities[0]
    if params.get("zip", "").strip():
        place = geo.by_zip(params["zip"])
        if place is None:
            raise CITY_NOT_FOUND
        return place
    if params.get("id", "").strip():
        try:
            city = geo.by_id(int(params["id"]))
        except ValueError:  # also a >4300-digit id (Python's int-from-text limit)
            raise _bad(f"{_echo(params['id'])} is not a city ID") from None
        if city is None:
            raise CITY_NOT_FOUND
        return city
    raise _bad("Nothing to geocode")


def _options(params: Mapping[str, str]) -> tuple[str, str, str]:
    """(units, mode, lang) with the API's defaults; unknown values fall back to them."""
    units = params.get("units", "").strip().lower()
    mode = params.get("mode", "").strip().lower()
    return (
        units if units in UNITS else "standard",
        mode if mode in ("xml", "html") else "json",
        normalise_lang(params.get("lang")),
    )


def current_weather(params: Mapping[str, str]) -> Response:
    place = _locate(params)
    units, mode, lang = _options(params)
    obs = observe(place.lat, place.lon, place.tz, REFERENCE_TIME, "current")
    if mode == "xml":
        return _xml(render.current_xml(place, obs, units, lang))
    if mode == "html":
        return HTMLResponse(render.current_html(place, obs, units, lang))
    return JSONResponse(render.current_json(place, obs, units, lang))


def forecast(params: Mapping[str, str]) -> Response:
    place = _locate(params)
    units, mode, lang = _options(params)
    cnt = _int(params, "cnt")
    steps = FORECAST_STEPS if cnt is None or cnt < 1 else min(cnt, FORECAST_STEPS)
    first = (REFERENCE_TIME // 10800 + 1) * 10800
    items = [
        observe(place.lat, place.lon, place.tz, first + i * 10800, "forecast") for i in range(steps)
    ]
    if mode == "xml":
        return _xml(render.forecast_xml(place, items, units, lang))
    return JSONResponse(render.forecast_json(place, items, units, lang))


def _air(lat: float, lon: float, hours: range) -> Response:
    urban = geo.urban_level(lat, lon)
    entries = [air_quality(lat, lon, t, urban) for t in hours]
    return JSONResponse(render.air_json(lat, lon, entries))


def air_pollution(params: Mapping[str, str]) -> Response:
    lat, lon = _coords(params)
    return _air(lat, lon, range(REFERENCE_TIME, REFERENCE_TIME + 1))


def air_pollution_forecast(params: Mapping[str, str]) -> Response:
    lat, lon = _coords(params)
    return _air(lat, lon, range(REFERENCE_TIME, REFERENCE_TIME + AIR_FORECAST_HOURS * 3600, 3600))


def air_pollution_history(params: Mapping[str, str]) -> Response:
    lat, lon = _coords(params)
    start, end = _int(params, "start"), _int(params, "end")
    if start is None or end is None:
        raise _bad(f"{'start' if start is None else 'end'}: value is required")
    first = max(-(-start // 3600) * 3600, HISTORY_START)  # whole hours inside [start, end]
    if (end - first) // 3600 >= MAX_HISTORY_HOURS:
        raise _bad("requested period is too long (more than 366 days)")
    return _air(lat, lon, range(first, end + 1, 3600))


def _limit(params: Mapping[str, str]) -> int:
    limit = _int(params, "limit")
    return GEO_LIMIT if limit is None or limit < 1 else min(limit, GEO_LIMIT)


def geocode_direct(params: Mapping[str, str]) -> Response:
    q = params.get("q", "").strip()
    if not q:
        raise _bad("Nothing to geocode")
    places = geo.find_cities(q)[: _limit(params)]
    return JSONResponse([render.geo_entry(place) for place in places])


def geocode_reverse(params: Mapping[str, str]) -> Response:
    lat, lon = _coords(params)
    places = geo.near(lat, lon, _limit(params), REVERSE_WITHIN_KM)
    return JSONResponse([render.geo_entry(place) for place in places])


def geocode_zip(params: Mapping[str, str]) -> Response:
    text = params.get("zip", "").strip()
    if not text:
        raise _bad("Nothing to geocode")
    place = geo.by_zip(text)
    if place is None:
        raise ApiError(404, "404", "not found")
    return JSONResponse(render.zip_json(text.partition(",")[0].strip(), place))


def _xml(body: str) -> Response:
    return Response(body, media_type="application/xml; charset=utf-8")


Handler = Callable[[Mapping[str, str]], Response]


def _endpoint(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        world = getattr(request.state, "world", None)
        if not isinstance(world, OpenWeatherWorld):
            return JSONResponse({"cod": 500, "message": "no world injected"}, status_code=500)
        params = request.query_params
        key = params.get("appid") or params.get("APPID") or ""
        try:
            if key not in world.api_keys:
                raise ApiError(401, 401, INVALID_KEY)
            return handler(params)
        except ApiError as error:
            return JSONResponse(error.body, status_code=error.status)

    return endpoint


ROUTES = {
    "/data/2.5/weather": current_weather,
    "/data/2.5/forecast": forecast,
    "/data/2.5/air_pollution": air_pollution,
    "/data/2.5/air_pollution/forecast": air_pollution_forecast,
    "/data/2.5/air_pollution/history": air_pollution_history,
    "/geo/1.0/direct": geocode_direct,
    "/geo/1.0/reverse": geocode_reverse,
    "/geo/1.0/zip": geocode_zip,
}


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    message = "Internal error" if status == 404 else str(getattr(exc, "detail", "error"))
    return JSONResponse({"cod": str(status), "message": message}, status_code=status)


def build_app() -> Starlette:
    routes = [Route(path, _endpoint(handler), methods=["GET"]) for path, handler in ROUTES.items()]
    return Starlette(routes=routes, exception_handlers={HTTPException: _http_error})


class OpenWeatherService:
    """The ``SimulatedService`` for the open_weather task."""

    name = "open_weather"
    hosts = frozenset({HOST})
    checks_api_key = True

    def __init__(self) -> None:
        self._app = build_app()

    @property
    def app(self) -> Starlette:
        return self._app

    def new_state(self, fields: Mapping[str, Any]) -> OpenWeatherWorld:
        return OpenWeatherWorld()

    def world_accepting(self, key: str) -> OpenWeatherWorld:
        """A world whose only valid API key is ``key`` (``toolbench serve --api-key``)."""
        return OpenWeatherWorld(api_keys=frozenset({key}))

    def snapshot(self, state: Any) -> None:
        return None


SERVICE = OpenWeatherService()

ASGIApp = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def serve_app(world: OpenWeatherWorld | None = None) -> ASGIApp:
    """The app bound to one world (the default one unless given), e.g. for ``toolbench serve``."""
    bound = world if world is not None else SERVICE.new_state({})

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "state": {**scope.get("state", {}), "world": bound}}
        await SERVICE.app(scope, receive, send)

    return app
