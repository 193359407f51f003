"""open_weather: curl requests to a simulated OpenWeather API (weather, air, geocoding)."""

from typing import TYPE_CHECKING

from toolbench.tasks.lazy import task_attribute

if TYPE_CHECKING:
    from toolbench.tasks.open_weather.definition import TASK as TASK

__getattr__ = task_attribute(__name__)
