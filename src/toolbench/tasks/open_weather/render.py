"""Response bodies in the real API's shapes: JSON objects, and the XML (and HTML) formats.

Key names and nesting follow OpenWeather's documented responses (current weather, 5 day /
3 hour forecast, air pollution, geocoding); the values come from ``weather.py``. Optional
blocks appear only when they would in the real API: ``rain``/``snow`` only when it rains or
snows, ``sys.country`` and ``state`` only when known.
"""

from __future__ import annotations

import datetime as dt
import html
import xml.etree.ElementTree as ET
from typing import Any

from toolbench.tasks.open_weather.geo import Place
from toolbench.tasks.open_weather.i18n import CONDITIONS, beaufort, compass, describe
from toolbench.tasks.open_weather.weather import (
    REFERENCE_TIME,
    Observation,
    convert_speed,
    convert_temp,
    sun_times,
)

TEMP_UNIT = {"standard": "kelvin", "metric": "celsius", "imperial": "fahrenheit"}
SPEED_UNIT = {"standard": "m/s", "metric": "m/s", "imperial": "mph"}


def iso(t: int, sep: str = "T") -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime(f"%Y-%m-%d{sep}%H:%M:%S")


def _weather(obs: Observation, lang: str) -> dict[str, Any]:
    group, icon, _ = CONDITIONS[obs.code]
    return {
        "id": obs.code,
        "main": group,
        "description": describe(obs.code, lang),
        "icon": icon + ("d" if obs.day else "n"),
    }


def _main(obs: Observation, units: str) -> dict[str, Any]:
    return {
        "temp": convert_temp(obs.temp, units),
        "feels_like": convert_temp(obs.feels_like, units),
        "temp_min": convert_temp(obs.temp_min, units),
        "temp_max": convert_temp(obs.temp_max, units),
        "pressure": obs.pressure,
        "humidity": obs.humidity,
        "sea_level": obs.pressure,
        "grnd_level": obs.grnd_level,
    }


def _wind(obs: Observation, units: str) -> dict[str, Any]:
    return {
        "speed": convert_speed(obs.wind_speed, units),
        "deg": obs.wind_deg,
        "gust": convert_speed(obs.wind_gust, units),
    }


def current_json(place: Place, obs: Observation, units: str, lang: str) -> dict[str, Any]:
    rise, set_ = sun_times(place.lat, place.lon, place.tz, obs.dt)
    body: dict[str, Any] = {
        "coord": {"lon": place.lon, "lat": place.lat},
        "weather": [_weather(obs, lang)],
        "base": "stations",
        "main": _main(obs, units),
        "visibility": obs.visibility,
        "wind": _wind(obs, units),
    }
    if obs.rain:
        body["rain"] = {"1h": obs.rain}
    if obs.snow:
        body["snow"] = {"1h": obs.snow}
    sys: dict[str, Any] = {"country": place.country} if place.country else {}
    body.update(
        clouds={"all": obs.clouds},
        dt=obs.dt,
        sys={**sys, "sunrise": rise, "sunset": set_},
        timezone=place.tz,
        id=place.id,
        name=place.name,
        cod=200,
    )
    return body


def forecast_json(place: Place, items: list[Observation], units: str, lang: str) -> dict[str, Any]:
    entries = []
    for obs in items:
        main = _main(obs, units)
        main["temp_kf"] = round(obs.temp - obs.temp_min, 2)
        entry: dict[str, Any] = {
            "dt": obs.dt,
            "main": main,
            "weather": [_weather(obs, lang)],
            "clouds": {"all": obs.clouds},
            "wind": _wind(obs, units),
            "visibility": obs.visibility,
            "pop": obs.pop,
        }
        if obs.rain:
            entry["rain"] = {"3h": obs.rain}
        if obs.snow:
            entry["snow"] = {"3h": obs.snow}
        entry["sys"] = {"pod": "d" if obs.day else "n"}
        entry["dt_txt"] = iso(obs.dt, " ")
        entries.append(entry)
    rise, set_ = sun_times(place.lat, place.lon, place.tz, REFERENCE_TIME)
    city = {
        "id": place.id,
        "name": place.name,
        "coord": {"lat": place.lat, "lon": place.lon},
        "country": place.country,
        "population": place.population,
        "timezone": place.tz,
        "sunrise": rise,
        "sunset": set_,
    }
    return {"cod": "200", "message": 0, "cnt": len(entries), "list": entries, "city": city}


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    node = ET.SubElement(parent, tag, {k: str(v) for k, v in attrs.items()})
    if text is not None:
        node.text = text
    return node


def _xml(root: ET.Element) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>' + ET.tostring(root, encoding="unicode")


def current_xml(place: Place, obs: Observation, units: str, lang: str) -> str:
    rise, set_ = sun_times(place.lat, place.lon, place.tz, obs.dt)
    root = ET.Element("current")
    city = _sub(root, "city", id=place.id, name=place.name)
    _sub(city, "coord", lon=place.lon, lat=place.lat)
    _sub(city, "country", place.country)
    _sub(city, "timezone", str(place.tz))
    _sub(city, "sun", rise=iso(rise), set=iso(set_))
    main = _main(obs, units)
    unit = TEMP_UNIT[units]
    _sub(root, "temperature", value=main["temp"], min=main["temp_min"], max=main["temp_max"],
         unit=unit)  # fmt: skip
    _sub(root, "feels_like", value=main["feels_like"], unit=unit)
    _sub(root, "humidity", value=obs.humidity, unit="%")
    _sub(root, "pressure", value=obs.pressure, unit="hPa")
    wind = _sub(root, "wind")
    speed = convert_speed(obs.wind_speed, units)
    _sub(wind, "speed", value=speed, unit=SPEED_UNIT[units], name=beaufort(obs.wind_speed))
    _sub(wind, "gusts", value=convert_speed(obs.wind_gust, units))
    code, name = compass(obs.wind_deg)
    _sub(wind, "direction", value=obs.wind_deg, code=code, name=name)
    _sub(root, "clouds", value=obs.clouds, name=describe(_cloud_code(obs.clouds), lang))
    _sub(root, "visibility", value=obs.visibility)
    if obs.rain or obs.snow:
        kind = "rain" if obs.rain else "snow"
        _sub(root, "precipitation", value=obs.rain or obs.snow, mode=kind, unit="1h")
    else:
        _sub(root, "precipitation", mode="no")
    icon = CONDITIONS[obs.code][1] + ("d" if obs.day else "n")
    _sub(root, "weather", number=obs.code, value=describe(obs.code, lang), icon=icon)
    _sub(root, "lastupdate", value=iso(obs.dt))
    return _xml(root)


def forecast_xml(place: Place, items: list[Observation], units: str, lang: str) -> str:
    root = ET.Element("weatherdata")
    location = _sub(root, "location")
    _sub(location, "name", place.name)
    _sub(location, "type", "")
    _sub(location, "country", place.country)
    _sub(location, "timezone", str(place.tz))
    _sub(location, "location", altitude=0, latitude=place.lat, longitude=place.lon,
         geobase="geonames", geobaseid=place.id)  # fmt: skip
    _sub(root, "credit", "")
    meta = _sub(root, "meta")
    _sub(meta, "lastupdate", "")
    _sub(meta, "calctime", "0")
    _sub(meta, "nextupdate", "")
    rise, set_ = sun_times(place.lat, place.lon, place.tz, REFERENCE_TIME)
    _sub(root, "sun", rise=iso(rise), set=iso(set_))
    forecast = _sub(root, "forecast")
    unit = TEMP_UNIT[units]
    for obs in items:
        time = _sub(forecast, "time", **{"from": iso(obs.dt), "to": iso(obs.dt + 3 * 3600)})
        icon = CONDITIONS[obs.code][1] + ("d" if obs.day else "n")
        _sub(time, "symbol", number=obs.code, name=describe(obs.code, lang), var=icon)
        if obs.rain or obs.snow:
            _sub(time, "precipitation", probability=obs.pop, unit="3h",
                 value=obs.rain or obs.snow, type="rain" if obs.rain else "snow")  # fmt: skip
        else:
            _sub(time, "precipitation", probability=obs.pop)
        code, name = compass(obs.wind_deg)
        _sub(time, "windDirection", deg=obs.wind_deg, code=code, name=name)
        _sub(time, "windSpeed", mps=convert_speed(obs.wind_speed, units),
             unit=SPEED_UNIT[units], name=beaufort(obs.wind_speed))  # fmt: skip
        _sub(time, "windGust", gust=convert_speed(obs.wind_gust, units), unit=SPEED_UNIT[units])
        main = _main(obs, units)
        _sub(time, "temperature", unit=unit, value=main["temp"], min=main["temp_min"],
             max=main["temp_max"])  # fmt: skip
        _sub(time, "feels_like", value=main["feels_like"], unit=unit)
        _sub(time, "pressure", unit="hPa", value=obs.pressure)
        _sub(time, "humidity", value=obs.humidity, unit="%")
        _sub(time, "clouds", value=describe(_cloud_code(obs.clouds), lang), all=obs.clouds,
             unit="%")  # fmt: skip
        _sub(time, "visibility", value=obs.visibility)
    return _xml(root)


def current_html(place: Place, obs: Observation, units: str, lang: str) -> str:
    """A small HTML card, standing in for the real API's mode=html widget."""
    main = _main(obs, units)
    sign = {"standard": " K", "metric": " °C", "imperial": " °F"}[units]
    title = html.escape(place.name or f"{place.lat}, {place.lon}")
    return (
        '<!DOCTYPE html><html lang="' + lang + '"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body><div>{title}</div>"
        f"<div>{main['temp']}{sign}</div><div>{html.escape(describe(obs.code, lang))}</div>"
        f"<div>{convert_speed(obs.wind_speed, units)} {SPEED_UNIT[units]}, "
        f"{obs.humidity}%, {obs.pressure} hPa</div></body></html>"
    )


def _cloud_code(clouds: int) -> int:
    return (
        800
        if clouds <= 10
        else 801
        if clouds <= 25
        else 802
        if clouds <= 50
        else (803 if clouds <= 84 else 804)
    )


def air_json(lat: float, lon: float, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"coord": {"lon": lon, "lat": lat}, "list": entries}


def geo_entry(place: Place) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": place.name, "lat": place.lat, "lon": place.lon,
                             "country": place.country}  # fmt: skip
    if place.state:
        entry["state"] = place.state
    return entry


def zip_json(code: str, place: Place) -> dict[str, Any]:
    return {"zip": code, "name": place.name, "lat": place.lat, "lon": place.lon,
            "country": place.country}  # fmt: skip
