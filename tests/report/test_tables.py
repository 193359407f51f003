"""``toolbench report`` tables: intervals independent of the other tasks in a run, ``-`` for
metrics a task does not have, one side-by-side table for 3+ runs with paired differences
against ``--reference``, and the CSV/Markdown exports of every table."""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from tests.report.runs import make_run, record, replay_file
from toolbench.report.summary import LoadedRun, summarize
from toolbench.tables.grid import CSV_HEADER

Cli = Callable[..., CliResult]


def test_interval_of_a_task_does_not_depend_on_the_other_tasks_in_its_run(
    cli: Cli, tmp_path: Path
) -> None:
    """The same home_search predictions in a home_search run and a home_search,booking run
    give the same interval (the bootstrap was seeded by position before)."""
    oracle = tmp_path / "oracle"
    assert cli("run", "home_search,booking", "--model", "oracle", "--limit", "12",
               "--out", str(oracle))[0] == 0  # fmt: skip
    golds = {(r["task"], str(r["id"])): r["prediction"] for r in read_run(oracle)[1]}
    # Every third answer sets a criterion the request did not ask for: a wrong state.
    extra = "API.set_num_beds(9)\nAPI.search()"
    predictions = {
        k: v.replace("API.search()", extra) if int(k[1]) % 3 == 0 else v for k, v in golds.items()
    }
    replay = replay_file(tmp_path / "p.jsonl", predictions)
    alone, mixed = tmp_path / "alone", tmp_path / "mixed"
    for tasks, out in (("home_search", alone), ("booking,home_search", mixed)):
        code, _, err = cli("run", tasks, "--model", f"replay:{replay}", "--limit", "12",
                           "--out", str(out), "--allow-missing")  # fmt: skip
        assert code == 0, err
    code, out, _ = cli("report", str(alone), str(mixed), "--json")
    assert code == 0
    runs = json.loads(out)["runs"]
    a, b = runs[str(alone)]["home_search"], runs[str(mixed)]["home_search"]
    assert a["success_rate"]["mean"] == pytest.approx(8 / 12)
    assert a["success_rate"]["low"] < a["success_rate"]["high"]
    assert {m: a[m] for m in ("success_rate", "f1")} == {m: b[m] for m in ("success_rate", "f1")}


def test_interval_does_not_depend_on_the_order_records_were_written(tmp_path: Path) -> None:
    records = [record("t", str(i), i % 3 == 0) for i in range(40)]
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    a = summarize(LoadedRun(make_run(tmp_path / "a", records)))
    b = summarize(LoadedRun(make_run(tmp_path / "b", shuffled)))
    assert a["t"]["success_rate"] == b["t"]["success_rate"]


def test_crashes_of_a_task_without_precision_show_a_dash(cli: Cli, tmp_path: Path) -> None:
    """A task whose records hold no precision/recall/F1 (all crashed, metrics {}) beside one
    that has them: its cells are ``-``, never ``0.000 [0.000, 0.000]``."""
    crashed = [record("sheets_like", str(i), False, status="model_error", message="boom")
               for i in range(5)]  # fmt: skip
    scored = [record("other", str(i), True, metrics={"f1": 1.0, "precision": 1.0})
              for i in range(5)]  # fmt: skip
    run = make_run(tmp_path / "r", crashed + scored)
    code, out, _ = cli("report", str(run))
    assert code == 0
    row = next(line for line in out.splitlines() if "sheets_like" in line)
    assert "1.000 [1.000, 1.000]" in row  # the crash rate
    assert row.count("0.000 [0.000, 0.000]") == 1  # the success rate only
    assert row.count(" - ") >= 2
    summary = summarize(LoadedRun(run))["sheets_like"]
    assert "precision" not in summary and "f1" not in summary


def _three_runs(tmp_path: Path) -> list[Path]:
    def run(name: str, rate: int, tasks: tuple[str, ...] = ("alpha", "beta")) -> Path:
        records = [record(t, str(i), i % rate == 0, metrics={"f1": float(i % rate == 0)})
                   for t in tasks for i in range(30)]  # fmt: skip
        return make_run(tmp_path / name, records, model=f"model-{name}")

    return [run("a", 1), run("b", 2), run("c", 3), run("lonely", 2, ("gamma",))]


def test_three_runs_side_by_side_with_differences_against_a_reference(
    cli: Cli, tmp_path: Path
) -> None:
    a, b, c, lonely = _three_runs(tmp_path)
    code, out, _ = cli("report", str(a), str(b), str(c), str(lonely), "--reference", str(b))
    assert code == 0
    assert out.count("all runs side by side") == 1 and "paired difference against b" in out
    for name in ("model-a", "model-b", "model-c", "model-lonely"):
        assert name in out
    assert "lonely shares no task with any other run" in out
    assert "lonely shares no task with the reference b" in out
    # b succeeds on every second sample, a on all: a - b = +0.5, an interval above 0 (marked).
    code, out, _ = cli("report", str(a), str(b), str(c), "--reference", str(b), "--json")
    diff = json.loads(out)["differences"][str(a)]["alpha"]["success_rate"]
    assert diff["mean"] == pytest.approx(0.5) and diff["low"] > 0


def test_csv_and_markdown_hold_every_table(cli: Cli, tmp_path: Path) -> None:
    a, b, c, _ = _three_runs(tmp_path)
    out_csv, out_md = tmp_path / "t.csv", tmp_path / "t.md"
    code, _, err = cli("report", str(a), str(b), str(c), "--csv", str(out_csv),
                       "--markdown", str(out_md))  # fmt: skip
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert tuple(rows[0]) == CSV_HEADER
    tables = {r["table"] for r in rows}
    assert any(t.startswith("all runs side by side") for t in tables)
    assert any(t.startswith("paired difference against a") for t in tables)
    _, js, _ = cli("report", str(a), str(b), str(c), "--json")
    expected = json.loads(js)["runs"][str(c)]["beta"]["success_rate"]
    cell = next(r for r in rows if r["row"] == "beta / success_rate" and "model-c" in r["column"])
    assert float(cell["mean"]) == pytest.approx(expected["mean"])
    assert float(cell["low"]) == pytest.approx(expected["low"]) and int(cell["n"]) == 30
    significant = [r for r in rows if r["significant"] == "true"]
    assert significant and all(r["value"].endswith(" *") for r in significant)
    markdown = out_md.read_text()
    assert "### all runs side by side" in markdown and "| task | metric |" in markdown
    assert markdown.count("\n|---|") >= 2


def test_bad_report_flags_are_one_line_exit_2(cli: Cli, tmp_path: Path) -> None:
    a, b, c, _ = _three_runs(tmp_path)
    code, _, err = cli("report", str(a), str(b), "--reference", str(c))
    assert code == 2 and "--reference" in err and "not one of the runs" in err
    assert len(err.strip().splitlines()) == 1
    code, _, err = cli("report", str(a), str(b), "--reference", str(tmp_path / "zzz"))
    assert code == 2 and "--reference" in err and "no such folder" in err
    code, _, err = cli("report", str(a), "--html", str(tmp_path))
    assert code == 2 and "--html" in err and "is a folder" in err
    code, _, err = cli("report", str(a), "--csv", str(tmp_path / "nope" / "t.csv"))
    assert code == 2 and "--csv" in err and "does not exist" in err
