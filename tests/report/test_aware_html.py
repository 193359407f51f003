"""Awareness runs in the HTML report and the exports: confusion matrices per source x
manipulation, yes-ratio, agreement of explicit and implicit answers, feedback scenarios, with
the same numbers ``report --json`` gives; a task run beside it is shown, not compared."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult

Cli = Callable[..., CliResult]


def test_awareness_tables_in_html_and_csv(cli: Cli, tmp_path: Path) -> None:
    dataset = tmp_path / "aware.jsonl"
    code, _, err = cli("aware", "build", "--source", "task:home_search", "--manipulation",
                       "slot_removal", "--seed", "0", "--out", str(dataset))  # fmt: skip
    assert code == 0, err
    run = tmp_path / "run"
    modes = ("--mode", "explicit,implicit,feedback")
    code, _, err = cli("aware", "run", str(dataset), "--model", "random", *modes,
                       "--limit", "12", "--out", str(run))  # fmt: skip
    assert code == 0, err
    tasks = tmp_path / "tasks"
    assert (
        cli("run", "home_search", "--model", "oracle", "--limit", "3", "--out", str(tasks))[0] == 0
    )
    page, table = tmp_path / "r.html", tmp_path / "r.csv"
    code, out, err = cli("report", str(run), str(tasks), "--html", str(page), "--csv", str(table))
    assert code == 0, err
    assert "no paired difference" in out and "runs of different kinds" in out
    _, js, err = cli("report", str(run), str(tasks), "--json", "--markdown", str(tmp_path / "m"))
    assert "runs of different kinds" in err and "wrote" in err  # stdout is the JSON alone
    rows = json.loads(js)["runs"][str(run)]["rows"]
    explicit = next(r for r in rows if r["task"] == "aware-explicit-0shot"
                    and r["source"] == "all" and r["manipulation"] == "all")  # fmt: skip
    text = page.read_text()
    assert 'id="awareness"' in text and "confusion matrices" in text
    assert "agreement with explicit-0shot" in text and "feedback accuracy per scenario" in text
    confusion = explicit["confusion"]
    cells = [str(confusion[label][answer]) for label in ("complete", "incomplete")
             for answer in ("yes", "no", "unparseable")]  # fmt: skip
    expected = "<td>explicit-0shot</td><td>all</td><td>all</td>" + "".join(
        f"<td>{c}</td>" for c in cells
    )
    assert expected in re.sub(r">\s+<", "><", text)
    exported = list(csv.DictReader(io.StringIO(table.read_text())))
    ratio = next(r for r in exported if r["row"] == "explicit-0shot / all / all"
                 and r["column"] == "yes_ratio")  # fmt: skip
    assert float(ratio["mean"]) == explicit["yes_ratio"]["mean"]
    assert any(r["table"].startswith("tasks ") and "(oracle)" in r["table"] for r in exported)
