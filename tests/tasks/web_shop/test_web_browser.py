"""A real browser shops in the store: Playwright driving Debian's chromium against the app on a
loopback port. A scripted shopper searches, opens the right product, selects the options
(seeing them selected), buys and sees reward 1; a wrong purchase shows a reward below 1; a
search for markup shows it as text and runs nothing; a form on another origin's page that posts
to the store is refused by the store (the browser's own Origin/Sec-Fetch-Site headers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

from tests.tasks.web_shop.live import serving
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.web.app import CyclePicker, ShopConfig, create_app
from toolbench.tasks.web_shop.world import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store.load()


@pytest.fixture(scope="module")
def url(store: Store) -> Iterator[str]:
    with serving(create_app(ShopConfig(store, "v0", CyclePicker([], len(store.goals))))) as base:
        yield base


def _act(page: Any, action: str) -> None:
    """Do what ``action`` says with the mouse and keyboard, as a person would."""
    if action.startswith("search["):
        page.fill("#query", action[len("search[") : -1])
        page.click("#search")
    else:
        page.click(f'button[value="{action}"]')
    page.wait_for_load_state()


def test_shopping_in_a_real_browser(browser_page: Any, url: str, store: Store) -> None:
    """One browser (starting chromium is the slow part) for three shoppers."""
    _buys_the_right_product(browser_page, url, store)
    _buys_a_wrong_product(browser_page, url, store)
    _searches_for_markup(browser_page, url)
    _a_foreign_page_cannot_shop(browser_page, url)


def _buys_the_right_product(page: Any, url: str, store: Store) -> None:
    goal = store.goal(0)
    mirror = store.new_session(0)  # decides the next action; the browser carries it out
    page.goto(f"{url}/?goal=0")
    assert goal.instruction_text in page.inner_text("#instruction")
    while not mirror.done:
        action = ideal_action(mirror)
        mirror.step(action)
        _act(page, action)
        assert page.inner_text("#turns").startswith(f"Turn {mirror.steps} of 25")
        selected = mirror.options if mirror.kind == "item" else {}
        for name, value in selected.items():  # chosen options are visibly selected
            button = page.locator(f'button.option[value="click[{value}]"]')
            assert button.get_attribute("aria-pressed") == "true", name
            assert "selected" in (button.get_attribute("class") or "")
    assert mirror.options == goal.goal_options
    assert page.inner_text("#reward") == "1.000"
    assert goal.asin in page.inner_text("#over")
    page.click("#next")  # the next goal opens
    assert page.url.startswith(f"{url}/s/") and page.inner_text("#turns").startswith("Turn 0")


def _buys_a_wrong_product(page: Any, url: str, store: Store) -> None:
    page.goto(f"{url}/?goal=7")
    wrong = store.goal(7)
    _act(page, f"search[{wrong.query}]")
    other = next(
        a for a in page.locator("button.asin").all_inner_texts() if a.strip() != wrong.asin
    )
    mirror = store.new_session(7)
    for action in (f"search[{wrong.query}]", f"click[{other.strip()}]", "click[Buy Now]"):
        result = mirror.step(action)
    for action in (f"click[{other.strip()}]", "click[Buy Now]"):
        _act(page, action)
    shown = page.inner_text("#reward")
    assert result.done and shown == f"{result.reward:.3f}" and float(shown) < 1.0


def _searches_for_markup(page: Any, url: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'><svg onload=alert(3)>"
    page.goto(f"{url}/?goal=3")
    _act(page, f"search[{hostile}]")
    assert page.inner_text("#keywords") == hostile.lower()
    assert page.input_value("#query") == hostile.lower()
    assert page.locator("main img, main svg, main script").count() == 0
    page.wait_for_timeout(200)
    assert dialogs == []


def _a_foreign_page_cannot_shop(page: Any, url: str) -> None:
    """Another origin (this host, another port) whose page posts a Buy Now form to the store."""
    page.goto(f"{url}/?goal=0")
    sid = page.url.rsplit("/", 1)[1]

    async def attacker(request: Request) -> HTMLResponse:
        return HTMLResponse(
            f'<form method="post" action="{url}/s/{sid}">'
            '<button id="go" name="action" value="click[Buy Now]">win</button></form>'
        )

    with serving(Starlette(routes=[Route("/", attacker)])) as elsewhere:
        page.goto(elsewhere)
        with page.expect_response(f"{url}/s/{sid}") as answer:
            page.click("#go")
        assert answer.value.status == 403
        assert "refused" in page.inner_text("body")
    state = httpx.get(f"{url}/api/sessions/{sid}", timeout=30).json()
    assert state["turns"] == 0 and not state["done"] and state["page"]["kind"] == "search"
