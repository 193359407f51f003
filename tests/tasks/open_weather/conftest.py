"""An in-process client for the simulated OpenWeather, with a fresh world injected."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from toolbench.kinds.service import SIMULATED_API_KEY
from toolbench.tasks.open_weather.service import SERVICE

KEY = SIMULATED_API_KEY
BASE = "https://api.openweathermap.org"


def with_world(world: Any) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        scope = {**scope, "state": {**scope.get("state", {}), "world": world}}
        await SERVICE.app(scope, receive, send)

    return app


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=with_world(SERVICE.new_state({})))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as c:
        yield c
