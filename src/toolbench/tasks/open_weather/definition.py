"""The open_weather task object (imported on first use of ``toolbench.tasks.open_weather.TASK``)."""

from pathlib import Path

from toolbench.core.task import TaskDefaults, TaskGenerator
from toolbench.kinds.curl_task import CurlTask
from toolbench.tasks.open_weather import docs, generator
from toolbench.tasks.open_weather.agent_world import PARAM_TYPES, TOOL_NAMES
from toolbench.tasks.open_weather.service import SERVICE

TASK = CurlTask(
    name="open_weather",
    summary="a curl request to the OpenWeather API (weather, forecast, air pollution, geocoding)",
    service=SERVICE,
    package_dir=Path(__file__).parent,
    live_key_env="OPEN_WEATHER_KEY",
    defaults=TaskDefaults(top_k_api=10, top_k_example=3, max_tokens=128),
    generator=TaskGenerator.of(generator, docs),
    tool_names=TOOL_NAMES,
    param_types=PARAM_TYPES,
)
