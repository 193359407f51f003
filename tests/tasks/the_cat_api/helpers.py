"""Send requests to the simulated Cat API in-process, with a chosen world injected."""

from __future__ import annotations

from typing import Any

import httpx

from toolbench.tasks.the_cat_api.derive import split_curl
from toolbench.tasks.the_cat_api.service import SERVICE, bind
from toolbench.tasks.the_cat_api.world import CatWorld

ORIGIN = "https://api.thecatapi.com"


def world(state: dict[str, Any] | None = None, seed: int = 0) -> CatWorld:
    fields: dict[str, Any] = {"seed": seed}
    if state is not None:
        fields["state"] = state
    return SERVICE.new_state(fields)


async def send(
    target: CatWorld, method: str, url: str, body: str | bytes | None = None
) -> httpx.Response:
    transport = httpx.ASGITransport(app=bind(target))
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client:
        return await client.request(method, url, content=body)


async def get(target: CatWorld, url: str) -> Any:
    response = await send(target, "GET", url)
    assert response.status_code == 200, response.text
    return response.json()


async def run_curl(target: CatWorld, line: str) -> httpx.Response:
    method, url, body = split_curl(line)
    return await send(target, method, url, body)
