"""The store refuses a form another web page posts to it from the same browser, over real HTTP
on loopback: a foreign ``Origin`` or a cross-site ``Sec-Fetch-Site`` is 403 and changes nothing,
while the store's own pages (same origin) and clients that send neither header (agent
frameworks, curl, our runner) shop as before. The rule is the review UI's
(``toolbench.webcheck``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.tasks.web_shop.live import serving
from toolbench.tasks.web_shop.web.app import CyclePicker, ShopConfig, create_app
from toolbench.tasks.web_shop.world import Store

FOREIGN = [
    {"origin": "http://evil.example"},
    {"origin": "http://127.0.0.1:1"},  # another port of this host is another origin
    {"origin": "null"},  # an opaque origin (sandboxed frame, no-referrer page)
    {"origin": "http://[::1"},  # malformed: refused, not a server error
    {"sec-fetch-site": "cross-site"},
    {"sec-fetch-site": "same-site"},
    {"sec-fetch-site": "cross-site", "origin": "SELF"},  # the browser's word wins
]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    store = Store.load()
    with serving(create_app(ShopConfig(store, "v0", CyclePicker([5], len(store.goals))))) as base:
        yield base


def _headers(headers: dict[str, str], base: str) -> dict[str, str]:
    own = base.removeprefix("http://")
    return {k: v.replace("SELF", f"http://{own}") for k, v in headers.items()}


def _state(client: httpx.Client, sid: str) -> dict[str, Any]:
    response = client.get(f"/api/sessions/{sid}")
    assert response.status_code == 200, response.text
    return response.json()


def _form_session(client: httpx.Client) -> str:
    page = client.get("/?goal=5", follow_redirects=True)
    assert page.status_code == 200 and page.url.path.startswith("/s/")
    assert page.headers["referrer-policy"] == "same-origin"  # no-referrer sends Origin: null
    return page.url.path.removeprefix("/s/")


@pytest.mark.parametrize(
    "headers", FOREIGN, ids=lambda h: ",".join(f"{k}={v}" for k, v in h.items())
)
def test_a_cross_origin_form_post_is_refused_and_changes_nothing(
    url: str, headers: dict[str, str]
) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:
        sid = _form_session(client)
        before = _state(client, sid)
        response = client.post(
            f"/s/{sid}", data={"action": "search", "query": "usb flash drive"},
            headers=_headers(headers, url),
        )  # fmt: skip
        assert response.status_code == 403, response.text
        assert "refused" in response.text
        after = _state(client, sid)
        assert after == before and after["turns"] == 0 and after["page"]["kind"] == "search"


@pytest.mark.parametrize("headers", FOREIGN[:1] + FOREIGN[4:5])
def test_a_cross_origin_api_post_is_refused(url: str, headers: dict[str, str]) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:
        opened = client.post("/api/sessions", json={"goal": 5}, headers=headers)
        assert opened.status_code == 403 and "refused" in opened.json()["error"]
        sid = client.post("/api/sessions", json={"goal": 5}).json()["id"]
        step = client.post(
            f"/api/sessions/{sid}/step", json={"action": "click[buy now]"}, headers=headers
        )
        assert step.status_code == 403 and "refused" in step.json()["error"]
        assert _state(client, sid)["turns"] == 0


def test_own_pages_and_headerless_clients_still_shop(url: str) -> None:
    allowed = [
        {"origin": "SELF", "sec-fetch-site": "same-origin"},  # the store's own form
        {"sec-fetch-site": "none"},  # typed by the person
        {},  # no browser at all: curl, an agent framework
    ]
    with httpx.Client(base_url=url, timeout=30) as client:
        sid = _form_session(client)
        for turn, headers in enumerate(allowed, start=1):
            response = client.post(
                f"/s/{sid}", data={"action": "search", "query": f"drive {turn}"},
                headers=_headers(headers, url),
            )  # fmt: skip
            assert response.status_code == 303, response.text
            state = _state(client, sid)
            assert state["turns"] == turn and state["page"]["kind"] == "results"
        api = client.post("/api/sessions", json={"goal": 5}, headers=_headers(allowed[0], url))
        assert api.status_code == 201
        step = client.post(f"/api/sessions/{api.json()['id']}/step", json={"action": "search[x]"})
        assert step.status_code == 200 and step.json()["turns"] == 1
