"""The deterministic weather and air-quality model behind the simulated OpenWeather.

Nothing here reads the clock: "now" is ``REFERENCE_TIME`` (2025-06-01 12:00 UTC), and every
value is drawn from a ``random.Random`` seeded by a hash of (rounded coordinates, what is being
observed, time step). So the same place and time always give the same weather, and a request's
response is a pure function of the request. Values are plausible, not real: a latitude/season
climate plus a daily cycle and seeded day-to-day and hour-to-hour noise.

Everything is computed in standard units (kelvin, m/s); ``convert_temp``/``convert_speed``
give the metric and imperial views with fixed rounding, so K, °C and °F agree exactly to 0.01.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
import math
import random
from dataclasses import dataclass

REFERENCE_TIME = calendar.timegm((2025, 6, 1, 12, 0, 0))
# The air-pollution archive starts here, as the real one does (27 Nov 2020).
HISTORY_START = calendar.timegm((2020, 11, 27, 0, 0, 0))
UNITS = ("standard", "metric", "imperial")
MPH_PER_MS = 2.236936


def rng_for(*parts: object) -> random.Random:
    text = "|".join(str(part) for part in parts)
    return random.Random(int.from_bytes(hashlib.blake2b(text.encode()).digest()[:8], "big"))


def coord_key(lat: float, lon: float) -> str:
    return f"{lat:.4f},{lon:.4f}"


def convert_temp(kelvin: float, units: str) -> float:
    if units == "metric":
        return round(kelvin - 273.15, 2)
    if units == "imperial":
        return round(round(kelvin - 273.15, 2) * 1.8 + 32, 2)
    return kelvin


def convert_speed(ms: float, units: str) -> float:
    return round(ms * MPH_PER_MS, 2) if units == "imperial" else ms


def sun_times(lat: float, lon: float, tz: int, t: int) -> tuple[int, int]:
    """Sunrise and sunset (unix, UTC) of the local day holding ``t``; (0, 0) in polar day or
    night. A textbook solar-declination model: right to a few minutes, which is plenty."""
    day_start = (t + tz) // 86400 * 86400  # 00:00 UTC of the local calendar date
    day_of_year = dt.datetime.fromtimestamp(day_start, dt.timezone.utc).timetuple().tm_yday
    decl = math.radians(23.44) * math.sin(2 * math.pi * (284 + day_of_year) / 365)
    phi = math.radians(lat)
    cos_w = (math.sin(math.radians(-0.833)) - math.sin(phi) * math.sin(decl)) / max(
        math.cos(phi) * math.cos(decl), 1e-9
    )
    if abs(cos_w) > 1:
        return 0, 0
    half_day = math.degrees(math.acos(cos_w)) / 15 * 3600
    noon = day_start + (12 - lon / 15) * 3600
    return round(noon - half_day), round(noon + half_day)


def is_day(lat: float, lon: float, tz: int, t: int) -> bool:
    rise, set_ = sun_times(lat, lon, tz, t)
    if rise == set_ == 0:  # polar: day in the summer hemisphere
        return (lat > 0) == (_season(t) > 0)
    return rise <= t < set_


def _season(t: int) -> float:
    """+1 at the northern summer peak (mid July), -1 at the winter one."""
    day = (t // 86400) % 365.25
    return math.cos(2 * math.pi * (day - 196) / 365.25)


def _climate_c(lat: float, lon: float, t: int) -> float:
    annual = 28 - 0.55 * max(0.0, abs(lat) - 18)
    seasonal = 0.15 * abs(lat) * _season(t) * (1 if lat >= 0 else -1)
    local_hour = ((t % 86400) / 3600 + lon / 15) % 24
    return annual + seasonal + 4 * math.cos(2 * math.pi * (local_hour - 15) / 24)


@dataclass(frozen=True)
class Observation:
    """One weather reading in standard units."""

    dt: int
    temp: float
    feels_like: float
    temp_min: float
    temp_max: float
    pressure: int
    grnd_level: int
    humidity: int
    wind_speed: float
    wind_deg: int
    wind_gust: float
    clouds: int
    code: int
    visibility: int
    rain: float  # mm over the period (1h for current weather, 3h for forecasts); 0 = none
    snow: float
    pop: float
    day: bool


def observe(lat: float, lon: float, tz: int, t: int, kind: str) -> Observation:
    """The weather at (lat, lon) at unix time ``t``; ``kind`` is 'current' or 'forecast'."""
    key = coord_key(lat, lon)
    site = rng_for(key, "site")
    elevation, wetness = site.uniform(0, 600), site.uniform(0.2, 0.9)
    today = rng_for(key, "day", t // 86400)
    day_temp, day_cloud = today.gauss(0, 2.5), today.random()
    day_pressure, day_wind, day_deg = (
        today.gauss(0, 7),
        abs(today.gauss(3.5, 2)),
        today.randrange(360),
    )
    rng = rng_for(key, kind, t // 3600)
    temp_c = _climate_c(lat, lon, t) + day_temp + rng.gauss(0, 0.6)
    clouds = (
        0 if rng.random() < 0.15 else min(100, round(100 * (0.6 * day_cloud + 0.4 * rng.random())))
    )
    wind = round(max(0.1, day_wind * (0.7 + 0.6 * rng.random())), 2)
    precip = clouds > 60 and rng.random() < wetness * (clouds - 60) / 40
    strength = rng.random()
    humidity = 40 + 40 * wetness + (15 if precip else 0) + rng.gauss(0, 5) - max(0, temp_c - 28)
    humidity = int(min(100, max(8, round(humidity))))
    code, visibility, rain, snow = _condition(clouds, precip, strength, temp_c, humidity, wind, rng)
    hours = 1 if kind == "current" else 3
    rain, snow = round(rain * hours, 2), round(snow * hours, 2)
    spread = rng.uniform(0, 1.5 if kind == "current" else 0.6)
    temp = round(temp_c + 273.15, 2)
    pressure = round(1013 + day_pressure - (5 if precip else 0))
    return Observation(
        dt=t,
        temp=temp,
        feels_like=round(_feels_like(temp_c, humidity, wind) + 273.15, 2),
        temp_min=round(temp - spread, 2),
        temp_max=round(temp + spread * rng.uniform(0.3, 1), 2),
        pressure=pressure,
        grnd_level=pressure - round(elevation / 8.3),
        humidity=humidity,
        wind_speed=wind,
        wind_deg=(day_deg + rng.randrange(-40, 41)) % 360,
        wind_gust=round(wind * rng.uniform(1.2, 1.9), 2),
        clouds=clouds,
        code=code,
        visibility=visibility,
        rain=rain,
        snow=snow,
        pop=round(0.3 + 0.7 * rng.random() if precip else 0.3 * clouds / 100 * rng.random(), 2),
        day=is_day(lat, lon, tz, t),
    )


def _condition(
    clouds: int,
    precip: bool,
    strength: float,
    temp_c: float,
    humidity: int,
    wind: float,
    rng: random.Random,
) -> tuple[int, int, float, float]:
    """(condition code, visibility m, rain mm/h, snow mm/h)."""
    if precip:
        if temp_c < 0.5:
            code = 600 if strength < 0.6 else 601 if strength < 0.9 else 602
            return code, rng.randrange(1000, 8001, 100), 0.0, round(0.1 + 3 * strength, 2)
        if temp_c > 20 and rng.random() < 0.25:
            code = 200 if strength < 0.5 else 201 if strength < 0.9 else 211
            return code, rng.randrange(3000, 10001, 100), round(0.5 + 9 * strength, 2), 0.0
        if strength < 0.2:
            code = 300 if strength < 0.12 else 301
            return code, 10000, round(0.05 + strength, 2), 0.0
        code = 500 if strength < 0.65 else 501 if strength < 0.9 else 502
        mm = 0.1 + 2.4 * strength if code == 500 else 2.5 + 12 * (strength - 0.65)
        return code, 10000 if code == 500 else rng.randrange(4000, 10001, 100), round(mm, 2), 0.0
    if humidity >= 86 and wind < 3.5:
        if temp_c < 15 and rng.random() < 0.5:
            return 741, rng.randrange(100, 1000, 10), 0.0, 0.0
        return 701, rng.randrange(1500, 5001, 100), 0.0, 0.0
    if humidity < 40 and rng.random() < 0.15:
        return 721, rng.randrange(3000, 8001, 100), 0.0, 0.0
    code = 800 if clouds <= 10 else 801 if clouds <= 25 else 802 if clouds <= 50 else 803
    return (804 if clouds > 84 else code), 10000, 0.0, 0.0


def _feels_like(temp_c: float, humidity: int, wind: float) -> float:
    if temp_c <= 10 and wind > 1.3:  # wind chill (wind in km/h)
        v = (wind * 3.6) ** 0.16
        return 13.12 + 0.6215 * temp_c - 11.37 * v + 0.3965 * temp_c * v
    vapour = humidity / 100 * 6.105 * math.exp(17.27 * temp_c / (237.7 + temp_c))
    return temp_c + 0.33 * vapour - 0.70 * wind - 4.0  # apparent temperature


# Air quality: OpenWeather's index bands (upper bounds of 1..4) per pollutant, in μg/m³.
AQI_BANDS = {
    "so2": (20, 80, 250, 350),
    "no2": (40, 70, 150, 200),
    "pm10": (20, 50, 100, 200),
    "pm2_5": (10, 25, 50, 75),
    "o3": (60, 100, 140, 180),
    "co": (4400, 9400, 12400, 15400),
}


def air_quality(lat: float, lon: float, t: int, urban: float) -> dict[str, object]:
    """One hourly air-pollution entry for the hour holding ``t``: {main, components, dt}."""
    key = coord_key(lat, lon)
    hour = t // 3600 * 3600
    today = rng_for(key, "air-day", hour // 86400)
    rng = rng_for(key, "air", hour // 3600)
    local_hour = ((hour % 86400) / 3600 + lon / 15) % 24
    rush = 1 + 0.35 * math.cos(2 * math.pi * (local_hour - 8.5) / 12)
    level = urban * (0.5 + today.random()) * rush
    sun = max(0.0, math.cos(2 * math.pi * (local_hour - 14) / 24))

    def noisy(base: float, scale: float) -> float:
        return round(base + scale * level * rng.uniform(0.6, 1.4), 2)

    pm2_5 = noisy(0.5, 25)
    components = {
        "co": noisy(150, 600),
        "no": noisy(0.01, 15 * level),
        "no2": noisy(0.3, 35),
        "o3": round((20 + 60 * sun) * rng.uniform(0.7, 1.3) * (1.1 - 0.4 * level), 2),
        "so2": noisy(0.2, 12),
        "pm2_5": pm2_5,
        "pm10": round(pm2_5 * rng.uniform(1.15, 1.8), 2),
        "nh3": noisy(0.1, 6),
    }
    aqi = max(
        1 + sum(components[name] >= bound for bound in bands) for name, bands in AQI_BANDS.items()
    )
    return {"main": {"aqi": aqi}, "components": components, "dt": hour}
