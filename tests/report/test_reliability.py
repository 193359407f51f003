"""pass@k and pass^k (reliability across trials) in every form of the report."""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Callable
from fractions import Fraction
from math import comb
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CliResult
from tests.report.runs import make_run, record
from toolbench.report import html
from toolbench.report.reliability import (
    ks_shown,
    pass_at_k,
    pass_hat_k,
    per_sample,
    reliability,
    reliability_json,
)
from toolbench.report.summary import LoadedRun, summarize

Cli = Callable[..., CliResult]


def _trials(task: str, successes: dict[str, list[bool]]) -> list[dict[str, object]]:
    """A record per sample x epoch, epochs written one after another (as a run writes them)."""
    epochs = max(len(v) for v in successes.values())
    return [
        record(task, sample_id, wins[epoch], epoch=epoch)
        for epoch in range(epochs)
        for sample_id, wins in successes.items()
        if epoch < len(wins)
    ]


# 3 samples x 4 trials with c = 4, 2, 0 successes.
TABLE = {"0": [True] * 4, "1": [True, False, True, False], "2": [False] * 4}


def test_hand_computed_table_matches_tau_bench_exactly(tmp_path: Path) -> None:
    """pass^k = mean over samples of C(c, k) / C(n, k) (tau-bench's ``display_metrics``);
    pass@k = mean of 1 - C(n - c, k) / C(n, k)."""
    run = LoadedRun(make_run(tmp_path / "r", _trials("t", TABLE)))
    table = reliability("t", run.tallies["t"])
    assert list(table) == [1, 2, 3, 4]
    hat = {1: 0.5, 2: (1 + 1 / 6 + 0) / 3, 3: (1 + 0 + 0) / 3, 4: 1 / 3}
    at = {1: 0.5, 2: (1 + 5 / 6 + 0) / 3, 3: (1 + 1 + 0) / 3, 4: 2 / 3}
    for k in table:
        assert table[k]["pass^k"].mean == hat[k]
        assert table[k]["pass@k"].mean == at[k]
        assert table[k]["pass^k"].n == 3
    # pass^1 == pass@1 == the success rate, interval included.
    success = summarize(run)["t"]["success_rate"]
    assert table[1]["pass^k"] == table[1]["pass@k"] == success


def test_a_sample_short_of_trials_is_left_out_at_that_k(tmp_path: Path) -> None:
    """Sample 1 lost an epoch to an infra error: it has 3 trials, so it counts up to k = 3."""
    records = _trials("t", {"0": [True] * 4, "1": [True] * 4})
    records[-1] = {**records[-1], "status": "infra_error", "success": False}
    run = LoadedRun(make_run(tmp_path / "r", records))
    table = reliability("t", run.tallies["t"])
    assert [table[k]["pass^k"].n for k in table] == [2, 2, 2, 1]
    assert all(table[k]["pass^k"].mean == 1.0 for k in table)
    assert reliability_json(run)["t"]["left_out"] == {"4": 1}


def test_one_trial_per_sample_has_no_reliability_table(tmp_path: Path) -> None:
    run = LoadedRun(make_run(tmp_path / "r", [record("t", str(i), i % 2 == 0) for i in range(6)]))
    assert reliability("t", run.tallies["t"]) == {}
    assert reliability_json(run) == {}


def test_ks_shown() -> None:
    assert ks_shown(3) == [1, 2, 3]
    assert ks_shown(8) == list(range(1, 9))
    assert ks_shown(9) == [1, 2, 4, 8, 9]
    assert ks_shown(16) == [1, 2, 4, 8, 16]


@st.composite
def _counts(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(1, 40))
    return n, draw(st.integers(0, n))


@given(_counts())
def test_per_sample_estimators_are_exact_and_monotone(nc: tuple[int, int]) -> None:
    n, c = nc
    hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    assert hats[0] == ats[0] == c / n
    assert all(0.0 <= v <= 1.0 for v in hats + ats)
    assert all(a >= b for a, b in itertools.pairwise(hats))
    assert all(a <= b for a, b in itertools.pairwise(ats))
    for k in range(1, n + 1):
        assert hats[k - 1] == float(Fraction(comb(c, k), comb(n, k)))
        assert ats[k - 1] == float(1 - Fraction(comb(n - c, k), comb(n, k)))


@given(st.lists(st.integers(0, 6), min_size=1, max_size=12))
def test_task_means_are_monotone_in_k(successes: list[int]) -> None:
    """Over samples of 6 trials each: pass^k never rises with k, pass@k never falls, and at
    k = 1 both are the mean success."""
    counts = {str(i): [6, c] for i, c in enumerate(successes)}
    means_at, means_hat = [], []
    for k in range(1, 7):
        at, hat = per_sample(counts, k)
        means_at.append(sum(at) / len(at))
        means_hat.append(sum(hat) / len(hat))
    assert (
        means_at[0]
        == pytest.approx(means_hat[0])
        == pytest.approx(sum(successes) / 6 / len(successes))
    )
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(means_hat))
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(means_at))
    assert all(0.0 <= v <= 1.0 for v in means_at + means_hat)


def test_every_form_of_the_report_shows_it(cli: Cli, tmp_path: Path) -> None:
    """Terminal, JSON, CSV and HTML: the same pass^2 of the hand-computed table."""
    folder = make_run(tmp_path / "r", _trials("t", TABLE))
    expected = (1 + 1 / 6 + 0) / 3
    code, out, err = cli("report", str(folder), "--json")
    assert code == 0, err
    entry = json.loads(out)["runs"][str(folder)]["t"]["reliability"]
    assert entry["trials"] == 4 and entry["k"]["2"]["pass^k"]["mean"] == expected
    assert entry["per_epoch_success_rate"] == {"0": 2 / 3, "1": 1 / 3, "2": 2 / 3, "3": 1 / 3}
    code, out, _ = cli("report", str(folder))
    assert code == 0 and "reliability across trials" in out and "pass^k" in out
    page, sheet = tmp_path / "r.html", tmp_path / "r.csv"
    assert cli("report", str(folder), "--csv", str(sheet), "--html", str(page))[0] == 0
    rows = list(csv.DictReader(io.StringIO(sheet.read_text())))
    cell = next(r for r in rows if r["row"] == "t / 2" and r["column"].startswith("pass^k"))
    assert float(cell["mean"]) == expected and cell["table"].startswith("reliability")


def test_the_html_report_shows_the_table(tmp_path: Path) -> None:
    run = LoadedRun(make_run(tmp_path / "r", _trials("t", TABLE)))
    page = html.render([run], None)
    section = page[page.index('<section id="reliability">') :]
    section = section[: section.index("</section>")]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section))
    assert "Reliability across trials" in text and "pass^k [95% CI]" in text
    # Row k = 2 of task t: pass@2 = 0.611..., pass^2 = 0.389...
    assert re.search(r"t 2 0\.611 \[[\d.]+, [\d.]+\] 0\.389 \[[\d.]+, [\d.]+\]", text), text
    assert "0.667 / 0.333 / 0.667 / 0.333" in text  # the success rate of each epoch


def test_oracle_with_three_epochs_has_pass_hat_3_of_one(cli: Cli, tmp_path: Path) -> None:
    out_dir = tmp_path / "run"
    code, _, err = cli("run", "home_search", "--model", "oracle", "--limit", "3",
                       "--epochs", "3", "--out", str(out_dir))  # fmt: skip
    assert code == 0, err
    code, out, err = cli("report", str(out_dir))
    assert code == 0, err
    assert re.search(
        r"home_search\W+3\W.*1\.000 \[1\.000, 1\.000\]\W+1\.000 \[1\.000, 1\.000\]", out
    ), out
    code, out, _ = cli("report", str(out_dir), "--json")
    pass_3 = json.loads(out)["runs"][str(out_dir)]["home_search"]["reliability"]["k"]["3"]
    assert pass_3["pass^k"]["mean"] == 1.0 and pass_3["pass^k"]["n"] == 3
