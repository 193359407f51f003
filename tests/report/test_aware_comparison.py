"""Two awareness runs compared: the paired differences ``report --json`` gives as
``difference`` reach ``--csv``, ``--markdown`` and ``--html`` too, with the same numbers."""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

Cli = Callable[..., CliResult]
METRICS = ("accuracy", "f1", "precision", "recall", "yes_ratio", "balanced_accuracy", "mcc")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A random and an oracle awareness run over the same 16 instances (two modes)."""
    from toolbench.cli import main

    root = tmp_path_factory.mktemp("pair")
    dataset = root / "aware.jsonl"
    assert main(["aware", "build", "--source", "task:home_search", "--manipulation",
                 "slot_removal", "--seed", "0", "--out", str(dataset)]) == 0  # fmt: skip
    runs = []
    for model in ("random", "oracle"):
        out = root / model
        code = main(["aware", "run", str(dataset), "--model", model, "--mode",
                     "explicit,implicit", "--limit", "16", "--out", str(out)])  # fmt: skip
        assert code == 0
        runs.append(out)
    return runs[0], runs[1]


def _json_difference(cli: Cli, *args: str) -> dict[tuple[str, str, str], dict[str, dict]]:
    code, out, err = cli("report", *args, "--json")
    assert code == 0, err
    rows = json.loads(out)["difference"]
    return {(r["task"].removeprefix("aware-"), r["source"], r["manipulation"]): r for r in rows}


def test_paired_differences_in_every_export(
    cli: Cli, two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rnd, oracle = two_runs
    diff = _json_difference(cli, str(rnd), str(oracle))
    assert ("explicit-0shot", "all", "all") in diff and ("implicit", "all", "all") in diff
    page, table, md = tmp_path / "r.html", tmp_path / "r.csv", tmp_path / "r.md"
    code, out, err = cli("report", str(rnd), str(oracle), "--csv", str(table),
                         "--markdown", str(md), "--html", str(page))  # fmt: skip
    assert code == 0, err
    assert "paired difference: oracle (oracle) - random (random)" in out  # the terminal too
    exported = [r for r in csv.DictReader(io.StringIO(table.read_text()))
                if r["table"].startswith("paired difference")]  # fmt: skip
    seen = set()
    for row in exported:
        mode, source, group = row["row"].split(" / ")
        if row["column"] == "n paired":
            assert int(row["value"]) == diff[(mode, source, group)]["accuracy"]["n"]
            continue
        metric = row["column"].removeprefix("Δ ")
        want = diff[(mode, source, group)][metric]
        if math.isnan(want["mean"]):
            assert row["value"] == "-" and row["mean"] == ""
            continue
        got = (float(row["mean"]), float(row["low"]), float(row["high"]), int(row["n"]))
        assert got == (want["mean"], want["low"], want["high"], want["n"])
        assert row["significant"] == str(want["low"] > 0 or want["high"] < 0).lower()
        seen.add((mode, source, group, metric))
    # every defined number of the JSON is exported, and nothing else
    assert seen == {(*key, m) for key, r in diff.items() for m in METRICS
                    if not math.isnan(r[m]["mean"])}  # fmt: skip
    # Markdown and HTML show the same text as the CSV's value column
    acc = diff[("explicit-0shot", "all", "all")]["accuracy"]
    shown = f"{acc['mean']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}]"
    assert acc["low"] > 0  # the oracle is significantly more accurate than random
    text = md.read_text()
    assert "### paired difference: oracle (oracle) - random (random)" in text
    assert f"| explicit-0shot | all | all | {acc['n']} | {shown} * |" in text
    page_text = re.sub(r">\s+<", "><", page.read_text())
    assert "paired difference: oracle (oracle) - random (random)" in html.unescape(page_text)
    cell = re.search(r"<td>explicit-0shot</td><td>all</td><td>all</td><td>(\d+)</td>"
                     r"<td class=\"num sig\"[^>]*>([^<]*)</td>", page_text)  # fmt: skip
    assert cell is not None and cell.groups() == (str(acc["n"]), f"{shown} *")


def test_the_reference_decides_the_sign(
    cli: Cli, two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rnd, oracle = two_runs
    diff = _json_difference(cli, str(rnd), str(oracle), "--reference", str(oracle))
    table = tmp_path / "r.csv"
    code, _, err = cli("report", str(rnd), str(oracle), "--reference", str(oracle),
                       "--csv", str(table))  # fmt: skip
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(table.read_text())))
    row = next(r for r in rows if r["table"].startswith("paired difference: random (random) - "
               "oracle (oracle)") and r["row"] == "explicit-0shot / all / all"
               and r["column"] == "Δ accuracy")  # fmt: skip
    want = diff[("explicit-0shot", "all", "all")]["accuracy"]
    assert float(row["mean"]) == want["mean"] < 0


def test_one_aware_run_or_a_task_run_beside_it_has_no_pair(
    cli: Cli, two_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rnd, _ = two_runs
    table = tmp_path / "r.csv"
    assert cli("report", str(rnd), "--csv", str(table))[0] == 0
    assert "paired difference" not in table.read_text()
