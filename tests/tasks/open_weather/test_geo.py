"""OpenWeather's place-resolution rules over the real gazetteer (GeoNames cities, US ZIPs)."""

from __future__ import annotations

import itertools

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tasks.open_weather.conftest import KEY
from toolbench.tasks.open_weather import geo
from toolbench.tasks.open_weather.gazetteer import fold

NOT_FOUND = {"cod": "404", "message": "city not found"}


def _where(q: str) -> list[tuple[str, str, str]]:
    return [(p.name, p.country, p.state) for p in geo.find_cities(q)]


def test_an_ambiguous_name_is_the_most_populous_place_first() -> None:
    found = geo.find_cities("birmingham")
    assert [(p.country, p.state) for p in found[:2]] == [("GB", ""), ("US", "Alabama")]
    assert all(a.population >= b.population for a, b in itertools.pairwise(found))
    assert _where("Peoria")[:2] == [("Peoria", "US", "Arizona"), ("Peoria", "US", "Illinois")]


def test_state_and_country_qualifiers_narrow() -> None:
    assert _where("birmingham,al,us") == [("Birmingham", "US", "Alabama")]
    assert _where("Birmingham, Alabama") == [("Birmingham", "US", "Alabama")]
    assert _where("birmingham,gb") == [("Birmingham", "GB", "")]
    assert _where("birmingham,United Kingdom") == _where("birmingham,uk")
    assert _where("Peoria,IL,US") == [("Peoria", "US", "Illinois")]
    assert {country for _, country, _ in _where("London,CA")} == {"CA"}
    # A state only counts for the US; an unknown qualifier finds nothing (not everything).
    assert _where("London,ON,CA") == _where("London,CA")
    assert _where("birmingham,zz") == [] and _where("birmingham,xx,us") == []


def test_names_forgive_case_accents_and_punctuation() -> None:
    lucie = [("Port Saint Lucie", "US", "Florida")]
    assert (
        _where("port st. lucie") == _where("PORT ST LUCIE") == _where("Port Saint Lucie") == lucie
    )
    russia, florida = _where("St. Petersburg")[:2]
    assert (russia[1], florida[1:]) == ("RU", ("US", "Florida"))
    assert _where("saint petersburg,fl,us") == [florida]
    assert _where("winston-salem") == _where("Winston Salem")
    assert _where("sao paulo") == _where("São Paulo") != []
    assert _where("Munchen")[0][:2] == ("Munich", "DE")  # another-language name
    assert fold("Coeur d’Alene") == fold("coeur d'alene") == "coeur dalene"


def test_zip_codes_cover_the_whole_us() -> None:
    towns = (("10001", "New York"), ("94103", "San Francisco"), ("60614", "Chicago"),
             ("73301", "Austin"), ("99501", "Anchorage"), ("59601", "Helena"))  # fmt: skip
    for code, town in towns:
        place = geo.by_zip(code)
        assert place is not None and (place.name, place.country) == (town, "US"), code
    assert geo.by_zip("10001,us") == geo.by_zip("10001-1234") == geo.by_zip("10001")
    puerto_rico = geo.by_zip("00601")
    assert puerto_rico is not None and puerto_rico.country == "PR"
    assert geo.by_zip("00601,pr") == geo.by_zip("00601,us") == puerto_rico
    assert geo.by_zip("10001,gb") is None and geo.by_zip("00000") is None
    assert geo.by_zip("1000") is None and geo.by_zip("abcde") is None


def test_reverse_is_nearest_first() -> None:
    places = geo.near(36.154, -95.993, 5, 250.0)
    assert places[0].name == "Tulsa" and len(places) == 5
    distances = [geo.distance_km(36.154, -95.993, p.lat, p.lon) for p in places]
    assert distances == sorted(distances) and distances[-1] <= 250
    assert geo.near(-40.0, -130.0, 5, 250.0) == ()  # mid-Pacific
    # Across the antimeridian: Fiji's places are found from either side of 180°.
    assert geo.near(-17.8, 179.99, 1, 300.0) == geo.near(-17.8, -179.99, 1, 300.0) != ()


async def test_the_api_applies_the_rules(client: httpx.AsyncClient) -> None:
    async def get(path: str, **params: object) -> httpx.Response:
        return await client.get(path, params={"appid": KEY, **params})

    weather = (await get("/data/2.5/weather", q="birmingham")).json()
    assert (weather["name"], weather["sys"]["country"]) == ("Birmingham", "GB")
    alabama = (await get("/data/2.5/weather", q="birmingham,al,us")).json()
    assert alabama["sys"]["country"] == "US" and alabama["id"] != weather["id"]
    missing = await get("/data/2.5/weather", q="xyzzyville")
    assert (missing.status_code, missing.json()) == (404, NOT_FOUND)
    lakewoods = (await get("/geo/1.0/direct", q="lakewood", limit=3)).json()
    assert len(lakewoods) == 3 and all(p["name"] == "Lakewood" for p in lakewoods)
    assert len((await get("/geo/1.0/direct", q="lakewood", limit=50)).json()) == 5
    assert len((await get("/geo/1.0/direct", q="lakewood")).json()) == 5
    near = (await get("/geo/1.0/reverse", lat=36.154, lon=-95.993, limit=1)).json()
    assert [p["name"] for p in near] == ["Tulsa"] and near[0]["state"] == "Oklahoma"
    by_zip = (await get("/geo/1.0/zip", zip="73301")).json()
    assert by_zip["name"] == "Austin" and by_zip["country"] == "US"
    same = [(await get("/data/2.5/weather", zip=z)).content for z in ("73301", "73301,us")]
    assert same[0] == same[1]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_query_text_resolves_or_finds_nothing(text: str) -> None:
    assert isinstance(geo.find_cities(text), tuple)
    assert geo.by_zip(text) is None or text.strip()[:5].isdigit()
    assert isinstance(fold(text), str)
