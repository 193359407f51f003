"""The HTML report in a real browser (Playwright + Debian's chromium), built from real runs
made through the CLI: oracle and baseline on every task (web_shop episodes and tabletop's
nested calls and pictures included) and a replay run with wrong answers, crashes, epochs that
disagree and hostile text on three single-call tasks. The page's numbers are checked against each
run.json, the explorer is filtered and a failing sample opened to its diff, hostile
predictions stay inert, and the file loads with the network off (no request attempted)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.browser import ARTIFACTS
from tests.conftest import CliResult, read_run
from tests.report.runs import make_run, record
from tests.report.test_parts import tiny_png

Cli = Callable[..., CliResult]
TASKS = "home_search,booking,virtual_home"  # the replay run's (single-call tasks)
# oracle and baseline run every task, episodes and nested-call programs included
ALL_TASKS = (
    "home_search,booking,open_weather,the_cat_api,google_sheets,virtual_home,web_shop,tabletop"
)
HOSTILE = (
    '<script>window.__xss = 1; alert("script")</script>'
    "<img src=x onerror=\"window.__xss = 2; alert('img')\">"
    '<a id="bad" href="javascript:window.__xss = 3">click</a>'
)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Three runs and their HTML report, built once for this module's tests."""
    from toolbench.cli import main

    root = tmp_path_factory.mktemp("report")
    limit = ("--limit", "5", "--concurrency", "4")
    oracle, baseline, replay = root / "oracle", root / "baseline", root / "replay"
    assert main(["run", ALL_TASKS, "--model", "oracle", *limit, "--out", str(oracle)]) == 0
    assert main(["run", ALL_TASKS, "--model", "baseline", *limit, "--out", str(baseline)]) == 0
    golds = {
        (r["task"], str(r["id"])): r["prediction"]
        for r in read_run(oracle)[1]
        if r["task"] in TASKS.split(",")
    }
    lines = []
    for (task, sample_id), gold in golds.items():
        for epoch in (0, 1):
            text = gold
            if task == "home_search" and sample_id in ("1", "2"):  # a wrong state
                text = gold.replace("API.search()", "API.set_num_beds(9)\nAPI.search()")
            if task == "home_search" and sample_id == "3" and epoch == 1:  # flips across epochs
                text = "API.set_num_beds(2)"
            if task == "booking" and sample_id == "0":  # hostile text, and a crash
                text = HOSTILE
            lines.append({"task": task, "id": sample_id, "epoch": epoch, "prediction": text})
    predictions = root / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code = main(["run", TASKS, "--model", f"replay:{predictions}", *limit, "--epochs", "2",
                 "--out", str(replay)])  # fmt: skip
    assert code == 0
    page = root / "report.html"
    runs = [oracle, baseline, replay]
    assert main(["report", *map(str, runs), "--html", str(page)]) == 0
    return {"page": page, "runs": runs}


def _open(page: Any, path: Path) -> list[str]:
    """Load the file with the network off; every request that was not for the file itself
    (or an inline data: image) is aborted and returned."""
    attempted: list[str] = []

    def guard(route: Any) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:")):
            route.continue_()
        else:
            attempted.append(url)
            route.abort()

    page.context.set_offline(True)
    page.context.route("**/*", guard)
    page.on(
        "request",
        lambda r: None if r.url.startswith(("file:", "data:")) else attempted.append(r.url),
    )
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready=true]", timeout=15_000)
    return attempted


def test_report_in_the_browser(browser_page: Any, report: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    page = browser_page
    page.set_viewport_size({"width": 1400, "height": 1000})
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    attempted = _open(page, report["page"])

    # The overview holds each run.json's metrics, as the point of each interval.
    checked = 0
    for index, folder in enumerate(report["runs"]):
        info = json.loads((folder / "run.json").read_text())
        for task, metrics in info["metrics"].items():
            for metric, value in metrics.items():
                cell = page.locator(
                    f'td[data-run="{index}"][data-task="{task}"][data-metric="{metric}"]'
                )
                assert float(cell.get_attribute("data-mean")) == pytest.approx(value), (
                    task,
                    metric,
                )
                assert cell.inner_text().startswith(f"{value:.3f} [")
                checked += 1
    assert checked >= 2 * 8 * 2 + 3 * 2
    assert {"web_shop", "tabletop"} <= set(
        json.loads((report["runs"][0] / "run.json").read_text())["metrics"]
    )
    assert page.locator("#plots img").count() >= 10
    assert page.locator("#differences-table td.sig").count() >= 1

    # Audits: the sample flipping across epochs, and the crash reasons counted.
    assert "home_search" in page.locator("#audit-flaky").inner_text()
    assert page.locator("#audit-crashes tr.jump").count() >= 1

    # Filter the explorer: the replay run's failed home_search records.
    records = read_run(report["runs"][2])[1]
    failed = [r for r in records if r["task"] == "home_search" and not r["success"]]
    page.select_option("#f-task", "home_search")
    page.select_option("#f-run", "2")
    page.select_option("#f-success", "false")
    assert page.locator("#samples tbody tr").count() == len(failed) == 5
    page.fill("#f-text", "set_num_beds(9)")
    expect(page.locator("#samples tbody tr")).to_have_count(4)  # the page's CSP forbids eval
    page.locator('#samples tbody tr[data-id="1"]').first.click()
    detail = page.locator("#detail")
    assert "world state diff (0 changed, 0 missing, 1 extra" in detail.text_content()
    assert detail.locator("td.extra").first.inner_text() == "extra"
    assert "closest gold (label 1 of 1)" in detail.text_content()
    assert "matches the recorded prompt hash" in detail.text_content()

    # A virtual_home failure shows a line diff of plan and gold.
    page.fill("#f-text", "")
    page.select_option("#f-task", "virtual_home")
    page.select_option("#f-run", "1")
    page.locator("#samples tbody tr").first.click()
    assert page.locator("#detail .diff .del").count() >= 1

    # Hostile predictions render as text: nothing runs, no dialog, no link, no navigation.
    url = page.url
    page.select_option("#f-task", "booking")
    page.select_option("#f-run", "2")
    page.select_option("#f-success", "")
    page.fill("#f-text", "window.__xss")
    expect(page.locator("#samples tbody tr")).to_have_count(2)
    page.locator("#samples tbody tr").first.click()
    assert HOSTILE in detail.locator("pre").all_inner_texts()
    assert detail.locator("script, img, a").count() == 0
    page.locator("#detail pre").first.click()
    page.wait_for_timeout(200)
    assert page.evaluate("window.__xss") is None and not dialogs and page.url == url

    # A tabletop sample shows its initial and final tables, drawn by the run.
    page.fill("#f-text", "")
    page.select_option("#f-task", "tabletop")
    page.select_option("#f-run", "0")
    page.locator("#samples tbody tr").first.click()
    assert detail.locator(".images img").count() == 2

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
    assert not errors and attempted == []


def test_before_after_images_are_shown(browser_page: Any, tmp_path: Path) -> None:
    """A record naming images relative to its run folder (as tabletop's will) shows them, with
    its model calls and step trace; an image outside the folder is refused with its reason."""
    folder = tmp_path / "tabletop-run"
    records = [
        record("tabletop_like", "7", False,
               images={"before": "images/7-before.png", "after": "images/7-after.png"},
               calls=[{"step": "plan", "text": "pick(red_block)"},
                      {"step": "act", "text": "", "tool_calls": [{"name": "place"}]}],
               trace=[{"observation": "<b>red_block held</b>"}]),
        record("tabletop_like", "8", False, images={"before": "../outside.png"}),
    ]  # fmt: skip
    make_run(folder, records)
    (folder / "images").mkdir()
    (folder / "images" / "7-before.png").write_bytes(tiny_png(6, 4))
    (folder / "images" / "7-after.png").write_bytes(tiny_png(8, 5))
    (tmp_path / "outside.png").write_bytes(tiny_png())
    from toolbench.cli import main

    page_file = tmp_path / "r.html"
    assert main(["report", str(folder), "--html", str(page_file)]) == 0
    attempted = _open(browser_page, page_file)
    browser_page.locator('#samples tbody tr[data-id="7"]').click()
    images = browser_page.locator("#detail .images img")
    assert images.count() == 2
    widths = images.evaluate_all("imgs => imgs.map(i => i.naturalWidth)")
    assert widths == [6, 8]
    detail = browser_page.locator("#detail").text_content()
    assert "call 1: plan" in detail and "call 2: act" in detail and '"name": "place"' in detail
    assert '{"observation": "<b>red_block held</b>"}' in detail  # the step trace, as text
    browser_page.locator('#samples tbody tr[data-id="8"]').click()
    assert "outside the run folder" in browser_page.locator("#detail .images").inner_text()
    assert attempted == []
