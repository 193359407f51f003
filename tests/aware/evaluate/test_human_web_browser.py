"""The human baseline pages in a real chromium: hostile text stays inert; y/n/s/u keys work;
the results are a table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.aware.review.web_data import HOSTILE, NAME, SCRIPT, write_hostile
from tests.aware.review.webserver import press, serving, sign_in, watch_dialogs
from toolbench.aware.evaluate.human import HumanSession
from toolbench.aware.evaluate.human_web import HumanWeb
from toolbench.tables.grid import Grid


def test_hostile_text_inert_and_keys(tmp_path: Path, browser_page: Any) -> None:
    ds = write_hostile(tmp_path / "evil.jsonl")
    study = HumanSession(ds, None, n=2, balanced=False, seed=0, include_pending=True)
    web = HumanWeb(study)
    page = browser_page
    fired = watch_dialogs(page)
    try:
        with serving(web.app) as url:
            sign_in(page, url, f"ann {SCRIPT}")
            first = page.inner_text("#position")
            message = page.inner_text("#message")
            page.hover("#message")
            elements = page.query_selector_all("#message *, img, svg, iframe, a")
            scripts = page.eval_on_selector_all("script", "els => els.map(e => e.src)")
            assert page.inner_text("#progress-text") == "0 of 2 answered"
            press(page, "y")
            assert page.inner_text("#progress-text") == "1 of 2 answered"
            second = page.inner_text("#position")
            assert second != first
            page.keyboard.type("x")  # not a shortcut: nothing is sent
            press(page, "u")
            assert (page.inner_text("#position"), page.inner_text("#notice")) == (
                first,
                "undone: your last answer; answer this one again",
            )
            press(page, "n")
            assert page.inner_text("#position") == second
            press(page, "s")  # the only one left comes straight back
            assert page.inner_text("#position") == second
            press(page, "y")
            assert "Every question is answered" in page.inner_text("#done")
            assert page.inner_text("#progress-text") == "2 of 2 answered"
            xss = page.evaluate("() => window.__xss === undefined ? null : window.__xss")
    finally:
        web.close()
    assert fired == [] and xss is None and elements == []
    assert scripts == [f"{url}static/keys.js"]
    texts = [t for t in HOSTILE if t in message]
    assert texts, message  # the dialogue's markup is on screen as text
    with study.open_store() as store:
        answers = {study.position[g.instance_id]: g.answer for g in store.given()}
        actions = [e.action for e in store.events()]
    assert answers == {int(first.split()[1]): "no", int(second.split()[1]): "yes"}
    assert actions == ["answer", "undo", "answer", "skip", "answer"]


def test_results_render_as_a_table(tmp_path: Path, browser_page: Any) -> None:
    """The results page in chromium: real table rows and columns (not text in a <pre>), the
    terminal's numbers in them, and an annotator's markup shown as typed."""
    ds = write_hostile(tmp_path / "evil.jsonl")
    study = HumanSession(ds, None, n=2, balanced=False, seed=0, include_pending=True)
    web = HumanWeb(study, results_token="tok")
    page = browser_page
    fired = watch_dialogs(page)
    try:
        with serving(web.app) as url:
            sign_in(page, url, NAME)
            press(page, "n")
            page.goto(f"{url}results?token=tok")
            tables = page.eval_on_selector_all(
                "#results table",
                """els => els.map(t => ({
                    caption: t.caption.innerText,
                    head: [...t.tHead.rows[0].cells].map(c => c.innerText),
                    body: [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.innerText)),
                    width: t.getBoundingClientRect().width,
                    columns: t.tHead.rows[0].cells.length,
                }))""",
            )
            pre = page.query_selector_all("pre")
            xss = page.evaluate("() => window.__xss === undefined ? null : window.__xss")
    finally:
        web.close()
    grids = [b for b in study.results() if isinstance(b, Grid)]
    assert [t["caption"] for t in tables] == [g.title for g in grids]
    for table, grid in zip(tables, grids, strict=True):
        assert table["head"] == grid.columns and table["columns"] == len(grid.columns)
        assert table["body"] == [[grid.text(c) for c in row] for row in grid.rows]
        assert 0 < table["width"] <= page.viewport_size["width"]
    assert tables[1]["body"][0][:2] == [NAME, "1"]
    assert pre == [] and fired == [] and xss is None
