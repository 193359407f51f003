"""The HTML report read by a person: audits of a few rows right after the overview (the rest
folded, their count said), no section that has nothing to show, and a sample explorer whose
columns are readable at 1,400 px (checked in chromium, screenshot kept as a test artifact)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.browser import ARTIFACTS
from tests.conftest import CliResult
from tests.report.runs import make_run, record

Cli = Callable[..., CliResult]


# A crash whose message holds one 184-character name: text that cannot wrap at a space.
LONG_NAME = "an_undefined_city_name_" * 8


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A baseline run with dozens of failures (more than an audit shows) and its page; and a
    page of it beside a replay run (long folder name) whose crashes have long messages."""
    from toolbench.cli import main

    root = tmp_path_factory.mktemp("readable")
    run = root / "baseline"
    args = ["run", "home_search,booking,virtual_home", "--model", "baseline", "--limit", "40"]
    assert main([*args, "--out", str(run)]) == 0
    page = root / "report.html"
    assert main(["report", str(run), "--html", str(page)]) == 0
    replies = root / "replies.jsonl"
    program = f"API.set_location({LONG_NAME})\nAPI.search()"
    replies.write_text("".join(
        json.dumps({"task": "home_search", "id": str(n), "prediction": program}) + "\n"
        for n in range(5)
    ))  # fmt: skip
    crashes = root / "replayed-crashes-with-long-messages"
    assert main(["run", "home_search", "--model", f"replay:{replies}", "--limit", "5",
                 "--out", str(crashes)]) == 0  # fmt: skip
    both = root / "both.html"
    assert main(["report", str(run), str(crashes), "--html", str(both)]) == 0
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    return {"run": run, "page": page, "records": records, "both": both}


def _section_ids(page: str) -> list[str]:
    return re.findall(r'<section id="([a-z-]+)">', page)


def _rows(page: str, table_id: str) -> int:
    match = re.search(rf'<table class="grid audit" id="{table_id}">(.*?)</table>', page, re.S)
    assert match, table_id
    return match.group(1).count('<tr class="jump"')


def test_audits_show_twenty_rows_after_the_overview(one_run: dict[str, Any]) -> None:
    page = one_run["page"].read_text()
    failed = [r for r in one_run["records"] if not r["success"]]
    assert len(failed) > 20
    sections = _section_ids(page)
    assert sections[:3] == ["runs", "overview", "audits"], sections
    assert sections[-1] == "explorer"
    assert f"Failed in every epoch ({len(failed)})" in page  # the count of them all
    assert _rows(page, "audit-failed") == 20
    assert _rows(page, "audit-failed-more") == len(failed) - 20  # folded, one click away
    assert f"show {len(failed) - 20} more rows</summary>" in page
    before_explorer = page[: page.index('<section id="explorer">')]
    assert before_explorer.count('<tr class="jump"') < len(failed) + 20  # not every row twice


def test_an_audit_longer_than_the_page_keeps_says_where_the_rest_is(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbench.report import audits

    monkeypatch.setattr(audits, "MAX_ROWS", 30)
    run = make_run(tmp_path / "run", [record("home_search", str(n), False) for n in range(45)])
    page = tmp_path / "r.html"
    code, _, err = cli("report", str(run), "--html", str(page))
    assert code == 0, err
    text = page.read_text()
    assert "Failed in every epoch (45)" in text
    assert _rows(text, "audit-failed") == 20 and _rows(text, "audit-failed-more") == 10
    assert "15 more not listed here; the explorer&#39;s success filter (failed)" in text


def test_an_awareness_report_has_no_empty_sections(cli: Cli, tmp_path: Path) -> None:
    dataset = tmp_path / "aware.jsonl"
    code, _, err = cli("aware", "build", "--source", "task:home_search", "--manipulation",
                       "slot_removal", "--seed", "0", "--out", str(dataset))  # fmt: skip
    assert code == 0, err
    run = tmp_path / "aware-run"
    code, _, err = cli("aware", "run", str(dataset), "--model", "oracle", "--mode", "explicit",
                       "--limit", "6", "--out", str(run))  # fmt: skip
    assert code == 0, err
    page = tmp_path / "r.html"
    assert cli("report", str(run), "--html", str(page))[0] == 0
    text = page.read_text()
    assert _section_ids(text) == ["runs", "awareness", "explorer"]
    for empty in ("No task runs", "Nothing to plot", "Overview", "Audits", "Plots"):
        assert empty not in text, empty
    links = re.findall(r'<a href="#([a-z-]+)">', text)
    assert set(links) <= set(_section_ids(text)), links  # no link to a section left out


def test_explorer_columns_are_readable_at_1400_px(
    browser_page: Any, one_run: dict[str, Any]
) -> None:
    page = browser_page
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(one_run["both"].as_uri())
    page.wait_for_selector("body[data-ready=true]", timeout=15_000)
    measured = _measure(page)  # every record of both runs
    assert measured["messages"] > 20 and measured["longest"] >= 200, measured
    _readable(measured)
    page.select_option("#f-run", "1")  # the crashes with long names, for the screenshot
    page.locator("#explorer").scroll_into_view_if_needed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "explorer-1400px.png"
    page.screenshot(path=str(shot))
    print(f"screenshot: {shot.resolve()}")
    _readable(_measure(page))


def _measure(page: Any) -> dict[str, Any]:
    """The explorer's list as laid out: column widths, cells whose text is cut, scrolling."""
    measured: dict[str, Any] = page.evaluate(
        """() => {
        const list = document.querySelector('.list');
        const heads = [...document.querySelectorAll('#samples thead th')];
        const cells = [...document.querySelectorAll('#samples tbody td')];
        const msgs = [...document.querySelectorAll('#samples tbody td.msg')];
        return {
          columns: heads.map(h => [h.textContent, h.getBoundingClientRect().width]),
          clipped: cells.filter(c => c.scrollWidth > c.clientWidth).map(c => c.textContent),
          longest: Math.max(...msgs.map(m => m.textContent.length)),
          messages: msgs.filter(m => m.textContent).length,
          listScroll: [list.scrollWidth, list.clientWidth],
        };
    }"""
    )
    return measured


def _readable(measured: dict[str, Any]) -> None:
    assert measured["clipped"] == [], measured["clipped"]  # every cell's text is all there
    widths = dict(measured["columns"])
    assert all(width >= 30 for width in widths.values()), widths
    assert widths["message"] >= 270, widths
    scroll, client = measured["listScroll"]
    assert scroll <= client, measured  # no sideways scrolling to read a row
