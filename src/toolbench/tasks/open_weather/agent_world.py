"""open_weather as tools for agents (``toolbench.kinds.curl_agent`` builds them from the docs).

Each API doc is one tool: the docs describe the weather and forecast endpoints once per way of
naming the place (city, ZIP code, coordinates), so each way is its own tool with its own
required parameters, as the model reads them. The service is stateless, so the answer is the
last call that got a 2xx response (``curl_agent``'s rule), judged like a model's curl line.
"""

from __future__ import annotations

import json

#: Doc file name -> tool name (what the call does).
TOOL_NAMES = {
    "current_weather_city": "get_current_weather_by_city",
    "current_weather_zip": "get_current_weather_by_zip",
    "current_weather_coords": "get_current_weather_by_coordinates",
    "forecast_city": "get_forecast_by_city",
    "forecast_zip": "get_forecast_by_zip",
    "forecast_coords": "get_forecast_by_coordinates",
    "air_pollution_current": "get_air_pollution",
    "air_pollution_forecast": "get_air_pollution_forecast",
    "air_pollution_history": "get_air_pollution_history",
    "geocode_direct": "geocode_place_name",
    "geocode_reverse": "reverse_geocode",
    "geocode_zip": "geocode_zip",
}

_NUMBER = json.dumps({"type": "number"})
_INTEGER = json.dumps({"type": "integer"})
#: Parameter name -> JSON Schema (as JSON text); the others are strings.
PARAM_TYPES = {
    "lat": _NUMBER,
    "lon": _NUMBER,
    "cnt": _INTEGER,
    "limit": _INTEGER,
    "start": _INTEGER,
    "end": _INTEGER,
}
