"""The browser review in a real chromium: hostile dataset text stays inert, keys work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.aware.review.conftest import incomplete_ids
from tests.aware.review.web_data import HOSTILE, IMG, LINK, NAME, SCRIPT, write_hostile
from tests.aware.review.webserver import press, serving, sign_in, watch_dialogs
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.review.web import ReviewWeb
from toolbench.aware.review_reasons import REVIEW_REASONS
from toolbench.aware.schema import read_instances


def test_hostile_dataset_text_is_inert_and_shown_as_text(tmp_path: Path, browser_page: Any) -> None:
    ds = write_hostile(tmp_path / "evil.jsonl")
    web = ReviewWeb(ds)
    page = browser_page
    fired = watch_dialogs(page)
    try:
        with serving(web.app) as url:
            sign_in(page, url, NAME)
            page.wait_for_selector("#instance-id")
            for details in page.query_selector_all("#apis details"):
                details.evaluate("d => d.open = true")  # parameters shown too
            page.hover("#dialogue")  # an onmouseover that escaped its attribute would fire
            text = page.inner_text("body")
            instance_id = page.inner_text("#instance-id")
            scripts = page.eval_on_selector_all("script", "els => els.map(e => e.src)")
            links = page.eval_on_selector_all("a", "els => els.map(e => e.href)")
            images = page.query_selector_all("img, svg, iframe, object, embed")
            xss = page.evaluate("() => window.__xss === undefined ? null : window.__xss")
            header = page.inner_text("header")
    finally:
        web.close()
    assert fired == [] and xss is None
    assert scripts == [f"{url}static/keys.js"] and links == [] and images == []
    for hostile in HOSTILE:
        assert hostile in text, hostile
    assert instance_id == f"evil{IMG}~utterance_removal"
    assert f"in Paris {LINK}" in text and f'"{SCRIPT}"' in text  # provenance, parameters
    assert NAME in header


def test_keys_undo_skip_and_progress(ds: Path, browser_page: Any) -> None:
    order = incomplete_ids(read_instances(ds))
    web = ReviewWeb(ds)
    page = browser_page
    try:
        with serving(web.app) as url:
            sign_in(page, url, "kim")
            shown = lambda: page.inner_text("#instance-id")  # noqa: E731
            progress = lambda: page.inner_text("#progress-text")  # noqa: E731
            assert (shown(), progress()) == (order[0], "0 of 5 reviewed")
            press(page, "a")
            assert (shown(), progress()) == (order[1], "1 of 5 reviewed")
            assert page.inner_text("#notice") == "accepted"
            page.keyboard.press("r")  # no reason ticked: nothing is sent
            assert page.is_visible("#reject-hint") and shown() == order[1]
            page.keyboard.press("1")
            page.keyboard.press("3")
            page.keyboard.press("3")  # ticks and unticks
            page.click("#note")
            page.keyboard.type("as typed: a r s u")  # keys in the note are text
            page.keyboard.press("Escape")
            press(page, "r")
            assert (shown(), progress()) == (order[2], "2 of 5 reviewed")
            press(page, "s")
            assert (shown(), progress()) == (order[3], "2 of 5 reviewed")
            assert "skipped" in page.inner_text("#notice")
            press(page, "u")  # undoes the rejection, not the skip
            assert (shown(), progress()) == (order[1], "1 of 5 reviewed")
            assert "undone" in page.inner_text("#notice")
            press(page, "a")
            assert shown() == order[3]  # what was on screen at the undo, still held
            press(page, "a")
            press(page, "a")
            assert shown() == order[2]  # the skipped one comes back last
            press(page, "a")
            assert "Every instance in the queue is reviewed" in page.inner_text("#done")
            assert page.inner_text("#progress-text") == "5 of 5 reviewed"
            assert page.is_enabled("#undo")
    finally:
        web.close()
    first_reason = next(iter(REVIEW_REASONS[web.by_id[order[1]].manipulation]))
    with ReviewStore(default_db_path(ds), list(web.by_id)) as store:
        events = [(e.instance_id, e.action, e.reasons, e.note) for e in store.events()]
        assert {d.status for d in store.current_decisions().values()} == {"accepted"}
    assert events[:4] == [
        (order[0], "accept", (), ""),
        (order[1], "reject", (first_reason,), "as typed: a r s u"),
        (order[2], "skip", (), ""),
        (order[1], "undo", (), ""),
    ]


def test_google_sheets_dialogue_and_decision_come_before_the_api_list(
    tmp_path: Path, browser_page: Any
) -> None:
    """A real google_sheets item offers ~30 APIs (their descriptions alone ran 2,900 px): the
    dialogue, what changed and every decision button are on the first screen (1280 x 900),
    the APIs after them, folded, and still all on the page."""
    from toolbench.cli import main

    ds = tmp_path / "sheets.jsonl"
    assert main(["aware", "build", "--source", "task:google_sheets", "--manipulation",
                 "tool_removal", "--seed", "0", "--out", str(ds)]) == 0  # fmt: skip
    web = ReviewWeb(ds)
    page = browser_page
    page.set_viewport_size({"width": 1280, "height": 900})
    try:
        with serving(web.app) as url:
            sign_in(page, url, "kim")
            page.wait_for_selector("#instance-id")
            shown = web.by_id[page.inner_text("#instance-id")]
            boxes = {
                selector: page.locator(selector).bounding_box()
                for selector in ("#dialogue", "#changes", "#accept", "#skip", "#reject", "#apis")
            }
            others = page.locator("details#apis-others")
            folded = others.count() == 1 and others.evaluate("d => !d.open")
            names = page.locator("#apis .api-name").all_text_contents()
            if folded:
                page.click("#apis-others summary")
            description = page.locator("#apis .api .text").first.is_visible()
    finally:
        web.close()
    assert shown.source == "task:google_sheets" and len(shown.apis) >= 25
    for selector in ("#dialogue", "#changes", "#accept", "#skip", "#reject"):
        box = boxes[selector]
        assert box is not None and box["y"] + box["height"] <= 900, (selector, box)
    apis = boxes["#apis"]
    assert apis is not None and apis["y"] > boxes["#reject"]["y"]  # type: ignore[index]
    assert folded and description
    assert sorted(names) == sorted(api.name for api in shown.apis)
