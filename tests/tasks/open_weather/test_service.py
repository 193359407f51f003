"""The simulated OpenWeather API: shapes, units, formats, languages, determinism, errors."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET
from typing import Any

import httpx
import pytest

from tests.tasks.open_weather.conftest import BASE, KEY
from toolbench.tasks.open_weather.gazetteer import cities
from toolbench.tasks.open_weather.geo import find_cities
from toolbench.tasks.open_weather.i18n import LANGS, describe
from toolbench.tasks.open_weather.service import SERVICE, OpenWeatherWorld, serve_app
from toolbench.tasks.open_weather.weather import HISTORY_START, REFERENCE_TIME

CURRENT_KEYS = {"coord", "weather", "base", "main", "visibility", "wind", "clouds", "dt", "sys",
                "timezone", "id", "name", "cod"}  # fmt: skip
MAIN_KEYS = {"temp", "feels_like", "temp_min", "temp_max", "pressure", "humidity", "sea_level",
             "grnd_level"}  # fmt: skip
NOT_FOUND = {"cod": "404", "message": "city not found"}
WRONG_LAT = {"cod": "400", "message": "wrong latitude"}
COMPONENTS = {"co", "no", "no2", "o3", "so2", "pm2_5", "pm10", "nh3"}


async def get(client: httpx.AsyncClient, path: str, **params: Any) -> httpx.Response:
    params.setdefault("appid", KEY)
    return await client.get(path, params={k: v for k, v in params.items() if v is not None})


async def ok(client: httpx.AsyncClient, path: str, **params: Any) -> Any:
    response = await get(client, path, **params)
    assert response.status_code == 200, response.text
    return response.json()


async def test_current_weather_shape(client: httpx.AsyncClient) -> None:
    body = await ok(client, "/data/2.5/weather", q="London")
    assert CURRENT_KEYS <= set(body) <= CURRENT_KEYS | {"rain", "snow"}
    assert body["cod"] == 200 and body["name"] == "London" and body["base"] == "stations"
    assert body["coord"] == {"lon": -0.1257, "lat": 51.5085}  # GeoNames' London
    assert set(body["weather"][0]) == {"id", "main", "description", "icon"}
    assert set(body["main"]) == MAIN_KEYS and set(body["wind"]) == {"speed", "deg", "gust"}
    assert set(body["sys"]) == {"country", "sunrise", "sunset"} and body["sys"]["country"] == "GB"
    assert body["dt"] == REFERENCE_TIME and body["timezone"] == 3600
    assert body["sys"]["sunrise"] < REFERENCE_TIME < body["sys"]["sunset"]
    assert 0 <= body["clouds"]["all"] <= 100 and 0 < body["main"]["humidity"] <= 100


async def test_forecast_shape_and_cnt(client: httpx.AsyncClient) -> None:
    body = await ok(client, "/data/2.5/forecast", zip="94957")
    assert (body["cod"], body["message"], body["cnt"], len(body["list"])) == ("200", 0, 40, 40)
    assert set(body["city"]) == {"id", "name", "coord", "country", "population", "timezone",
                                 "sunrise", "sunset"}  # fmt: skip
    assert body["city"]["name"] == "Ross" and body["city"]["country"] == "US"
    times = [item["dt"] for item in body["list"]]
    assert times[0] > REFERENCE_TIME and all(b - a == 10800 for a, b in itertools.pairwise(times))
    item = body["list"][0]
    assert {"dt", "main", "weather", "clouds", "wind", "visibility", "pop", "sys", "dt_txt"} <= set(
        item
    )
    assert set(item["main"]) == MAIN_KEYS | {"temp_kf"} and item["sys"]["pod"] in ("d", "n")
    assert item["dt_txt"] == "2025-06-01 15:00:00"
    three = await ok(client, "/data/2.5/forecast", zip="94957", cnt=3)
    assert three["cnt"] == 3 and three["list"] == body["list"][:3]
    assert (await ok(client, "/data/2.5/forecast", zip="94957", cnt=100))["cnt"] == 40


async def test_air_pollution_endpoints(client: httpx.AsyncClient) -> None:
    now = await ok(client, "/data/2.5/air_pollution", lat=51.5, lon=-0.12)
    assert now["coord"] == {"lon": -0.12, "lat": 51.5} and len(now["list"]) == 1
    entry = now["list"][0]
    assert set(entry) == {"main", "components", "dt"} and set(entry["components"]) == COMPONENTS
    assert 1 <= entry["main"]["aqi"] <= 5 and entry["dt"] == REFERENCE_TIME
    forecast = await ok(client, "/data/2.5/air_pollution/forecast", lat=51.5, lon=-0.12)
    assert len(forecast["list"]) == 96 and forecast["list"][0] == entry
    start = REFERENCE_TIME - 5 * 3600
    history = await ok(client, "/data/2.5/air_pollution/history", lat=51.5, lon=-0.12,
                       start=start, end=REFERENCE_TIME)  # fmt: skip
    assert [e["dt"] for e in history["list"]] == list(range(start, REFERENCE_TIME + 1, 3600))
    assert history["list"][-1] == entry  # one model: the same hour has the same air


async def test_air_pollution_history_edges(client: httpx.AsyncClient) -> None:
    path = "/data/2.5/air_pollution/history"
    assert (await ok(client, path, lat=1, lon=2, start=200, end=100))["list"] == []
    early = await ok(client, path, lat=1, lon=2, start=HISTORY_START - 7200, end=HISTORY_START)
    assert [e["dt"] for e in early["list"]] == [HISTORY_START]
    response = await get(client, path, lat=1, lon=2, start=HISTORY_START)
    assert response.status_code == 400 and response.json()["cod"] == "400"
    too_long = await get(client, path, lat=1, lon=2, start=HISTORY_START, end=REFERENCE_TIME)
    assert too_long.status_code == 400


async def test_geocoding(client: httpx.AsyncClient) -> None:
    londons = await ok(client, "/geo/1.0/direct", q="London")
    assert [(p["country"], p.get("state")) for p in londons] == [
        ("GB", None), ("CA", None), ("US", "Ohio"), ("US", "Kentucky")
    ]  # fmt: skip
    assert set(londons[0]) == {"name", "lat", "lon", "country"}
    assert set(londons[2]) == {"name", "lat", "lon", "country", "state"}
    assert await ok(client, "/geo/1.0/direct", q="London", limit=1) == londons[:1]
    springfields = await ok(client, "/geo/1.0/direct", q="Springfield", limit=10)
    assert len(springfields) == 5  # of 12; the API answers at most 5
    texas = await ok(client, "/geo/1.0/direct", q="Paris,TX,US")
    assert [p["state"] for p in texas] == ["Texas"]
    assert await ok(client, "/geo/1.0/direct", q="Xyzzyville") == []
    near = await ok(client, "/geo/1.0/reverse", lat=42.36, lon=-71.06, limit=2)
    assert [p["name"] for p in near] == ["Boston", "Beacon Hill"]
    assert len(await ok(client, "/geo/1.0/reverse", lat=42.36, lon=-71.06)) == 5
    assert await ok(client, "/geo/1.0/reverse", lat=-40.0, lon=-130.0) == []  # mid-Pacific
    place = await ok(client, "/geo/1.0/zip", zip="94040")
    assert place == {"zip": "94040", "name": "Mountain View", "lat": 37.3855, "lon": -122.088,
                     "country": "US"}  # fmt: skip
    assert await ok(client, "/geo/1.0/zip", zip="94040,us") == place
    missing = await get(client, "/geo/1.0/zip", zip="00000")
    assert (missing.status_code, missing.json()) == (404, {"cod": "404", "message": "not found"})


@pytest.mark.parametrize("path", ["/data/2.5/weather", "/data/2.5/forecast"])
async def test_unit_conversions(client: httpx.AsyncClient, path: str) -> None:
    def readings(body: dict[str, Any]) -> list[dict[str, Any]]:
        return body.get("list") or [body]

    k, c, f = [
        readings(await ok(client, path, q="Chicago", units=units, cnt=5))
        for units in ("standard", "metric", "imperial")
    ]
    for rk, rc, rf in zip(k, c, f, strict=True):
        for name in ("temp", "feels_like", "temp_min", "temp_max"):
            kelvin, celsius, fahrenheit = rk["main"][name], rc["main"][name], rf["main"][name]
            assert celsius == pytest.approx(kelvin - 273.15, abs=0.0051)
            assert fahrenheit == pytest.approx(celsius * 1.8 + 32, abs=0.0051)
        assert rc["wind"] == rk["wind"]  # metric keeps m/s
        assert rf["wind"]["speed"] == pytest.approx(rk["wind"]["speed"] * 2.236936, abs=0.0051)
        assert rf["wind"]["gust"] == pytest.approx(rk["wind"]["gust"] * 2.236936, abs=0.0051)
        assert rk["main"]["pressure"] == rf["main"]["pressure"]
        assert rk["main"]["humidity"] == rc["main"]["humidity"]
    # Unknown units fall back to standard, as the real API does.
    assert readings(await ok(client, path, q="Chicago", units="kelvin", cnt=5)) == k


async def test_xml_mode(client: httpx.AsyncClient) -> None:
    response = await get(client, "/data/2.5/weather", q="Tokyo", mode="xml", units="metric")
    assert response.headers["content-type"].startswith("application/xml")
    root = ET.fromstring(response.text)
    assert root.tag == "current"
    for tag in ("city", "temperature", "feels_like", "humidity", "pressure", "wind", "clouds",
                "visibility", "precipitation", "weather", "lastupdate"):  # fmt: skip
        assert root.find(tag) is not None, tag
    city = root.find("city")
    assert city is not None and city.get("name") == "Tokyo" and city.findtext("country") == "JP"
    temperature = root.find("temperature")
    assert temperature is not None and temperature.get("unit") == "celsius"
    json_body = await ok(client, "/data/2.5/weather", q="Tokyo", units="metric")
    assert float(temperature.get("value", "nan")) == json_body["main"]["temp"]
    weather = root.find("weather")
    assert weather is not None and weather.get("value") == json_body["weather"][0]["description"]
    forecast = await get(client, "/data/2.5/forecast", q="Tokyo", mode="xml", cnt=4)
    root = ET.fromstring(forecast.text)
    assert root.tag == "weatherdata" and root.findtext("location/name") == "Tokyo"
    times = root.findall("forecast/time")
    assert len(times) == 4 and times[0].get("from") == "2025-06-01T15:00:00"
    assert {child.tag for child in times[0]} >= {"symbol", "precipitation", "windDirection",
                                                  "windSpeed", "temperature", "pressure",
                                                  "humidity", "clouds"}  # fmt: skip
    html = await get(client, "/data/2.5/weather", q="Tokyo", mode="html")
    assert html.headers["content-type"].startswith("text/html") and "Tokyo" in html.text


async def test_lang_translates_descriptions(client: httpx.AsyncClient) -> None:
    english = await ok(client, "/data/2.5/forecast", q="Lima", cnt=8)
    codes = [item["weather"][0]["id"] for item in english["list"]]
    changed = 0
    for lang in LANGS:
        body = await ok(client, "/data/2.5/forecast", q="Lima", cnt=8, lang=lang)
        descriptions = [item["weather"][0]["description"] for item in body["list"]]
        assert descriptions == [describe(code, lang) for code in codes]
        assert [i["weather"][0]["main"] for i in body["list"]] == [
            i["weather"][0]["main"] for i in english["list"]
        ]
        changed += descriptions != [describe(code, "en") for code in codes]
    assert changed == len(LANGS) - 1
    assert await ok(client, "/data/2.5/forecast", q="Lima", cnt=8, lang="xx") == english
    assert await ok(client, "/data/2.5/forecast", q="Lima", cnt=8, lang="sp") == await ok(
        client, "/data/2.5/forecast", q="Lima", cnt=8, lang="es"
    )


async def test_deterministic_and_defaults_are_equivalent(client: httpx.AsyncClient) -> None:
    for path in ("/data/2.5/weather", "/data/2.5/forecast"):
        base = await client.get(f"{path}?q=London&appid={KEY}")
        variants = [
            f"{path}?q=London&appid={KEY}&units=standard&mode=json&lang=en",
            f"{path}?lang=en&mode=json&appid={KEY}&units=standard&q=London",
            f"{path}?q=LONDON&appid={KEY}",
            f"{path}?q=london,gb&appid={KEY}",
            f"{path}?q=London,uk&appid={KEY}",
            f"{path}?q=London,%20GB&appid={KEY}",
        ]
        for url in variants:
            assert (await client.get(url)).content == base.content, url
    plus = await client.get(f"/data/2.5/weather?q=New+York&appid={KEY}")
    space = await client.get(f"/data/2.5/weather?q=New%20York&appid={KEY}")
    assert plus.status_code == 200 and plus.content == space.content
    accents = [await ok(client, "/data/2.5/weather", q=q) for q in ("São Paulo", "sao paulo")]
    assert accents[0] == accents[1]
    a = await ok(client, "/data/2.5/weather", lat="10.9", lon="168.3")
    assert a == await ok(client, "/data/2.5/weather", lon="168.30", lat="10.90")
    city = find_cities("Osaka")[0]
    assert await ok(client, "/data/2.5/weather", id=city.id) == await ok(
        client, "/data/2.5/weather", q="Osaka"
    )
    # A fresh world and a second call give the same bytes: nothing depends on time or history.
    again = await client.get(f"/data/2.5/forecast?q=London&appid={KEY}")
    assert again.content == (await client.get(f"/data/2.5/forecast?q=London&appid={KEY}")).content


@pytest.mark.parametrize(
    ("url", "status", "body"),
    [
        ("/data/2.5/weather?q=London", 401, None),
        ("/data/2.5/weather?q=London&appid=nope", 401, None),
        ("/geo/1.0/direct?q=London&appid=", 401, None),
        ("/data/2.5/weather?q=Xyzzyville&appid={K}", 404, NOT_FOUND),
        ("/data/2.5/forecast?zip=00000&appid={K}", 404, NOT_FOUND),
        ("/data/2.5/weather?lat=91&lon=0&appid={K}", 400, WRONG_LAT),
        ("/data/2.5/air_pollution?lat=-90.5&lon=0&appid={K}", 400, WRONG_LAT),
        ("/data/2.5/weather?lat=0&lon=181&appid={K}", 400,
         {"cod": "400", "message": "wrong longitude"}),
        ("/data/2.5/weather?lat=abc&lon=1&appid={K}", 400,
         {"cod": "400", "message": "abc is not a float"}),
        ("/data/2.5/weather?appid={K}", 400, {"cod": "400", "message": "Nothing to geocode"}),
        ("/data/2.5/air_pollution?lat=1&appid={K}", 400,
         {"cod": "400", "message": "Nothing to geocode"}),
        ("/data/3.0/onecall?lat=1&lon=1&appid={K}", 404, None),
    ],
)  # fmt: skip
async def test_errors(client: httpx.AsyncClient, url: str, status: int, body: Any) -> None:
    response = await client.get(url.replace("{K}", KEY))
    assert response.status_code == status
    if status == 401:
        assert response.json() == {
            "cod": 401,
            "message": "Invalid API key. Please see https://openweathermap.org/faq#error401 "
            "for more info.",
        }
    elif body is not None:
        assert response.json() == body


async def test_anywhere_on_earth(client: httpx.AsyncClient) -> None:
    points = [(90, 180), (-90, -180), (0, 0), (-77.85, 166.67), (69.65, 18.96), (-54.8, -68.3),
              (12.3456, -170.1)]  # fmt: skip
    for lat, lon in points:
        for path in ("/data/2.5/weather", "/data/2.5/forecast", "/data/2.5/air_pollution"):
            await ok(client, path, lat=lat, lon=lon)
    polar = await ok(client, "/data/2.5/weather", lat=78.2232, lon=15.6267)
    assert polar["name"] == "Longyearbyen" and polar["sys"]["sunrise"] == 0
    ocean = await ok(client, "/data/2.5/weather", lat=-40, lon=-130)
    assert ocean["name"] == "" and ocean["id"] == 0 and "country" not in ocean["sys"]


async def test_service_contract_and_serve_app() -> None:
    assert SERVICE.name == "open_weather"
    assert SERVICE.hosts == frozenset({"api.openweathermap.org"})
    world = SERVICE.new_state({"anything": 1})
    assert isinstance(world, OpenWeatherWorld) and KEY in world.api_keys
    assert SERVICE.snapshot(world) is None
    transport = httpx.ASGITransport(app=serve_app())
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as c:
        assert (await c.get(f"/data/2.5/weather?q=Paris&appid={KEY}")).status_code == 200
    # Without an injected world the app refuses rather than guessing one.
    transport = httpx.ASGITransport(app=SERVICE.app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as c:
        assert (await c.get(f"/data/2.5/weather?q=Paris&appid={KEY}")).status_code == 500


def test_gazetteer_ids_are_unique() -> None:
    places = cities().places
    assert len({place.id for place in places}) == len(places) >= 50_000
