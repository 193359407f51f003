"""Context overflows and tokens wherever a run's numbers are printed: ``toolbench run``'s
summary, ``toolbench report`` in the terminal, its Markdown/CSV/JSON exports and its HTML.

Overflows are model errors (in the score) counted apart per task; tokens are the generated
(not cached) ones with their rate, and the cached ones apart. Old run.json files, written
before that split, and damaged ones are shown for what they hold, never a crash.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from tests.conftest import CliResult
from tests.report.runs import make_run, record
from toolbench.cli.run import print_summary
from toolbench.report.html import render
from toolbench.report.summary import LoadedRun
from toolbench.report.tables import counts_text, finished_run_grid, side_by_side, status_grid
from toolbench.report.tokens import TOKEN_COLUMNS, overflow_notes, tokens_line
from toolbench.runner.engine import SessionStats
from toolbench.runner.lifecycle import RunResult
from toolbench.tables.grid import render_rich, to_markdown

Cli = Callable[..., CliResult]

NOTE = "home_search: 3 context overflows (model errors, in the score)"
TOKENS = {"prompt": 12345, "completion": 678, "cached": {"prompt": 1000, "completion": 200}}
TOKENS_LINE = (
    "tokens: generated 12,345 prompt + 678 completion (45.6 generated tokens/s); "
    "cached 1,000 prompt + 200 completion"
)


def _overflow(sample_id: str) -> dict[str, Any]:
    return record(
        "home_search",
        sample_id,
        False,
        status="model_error",
        message="context overflow: 2605 prompt tokens + 256 max_tokens > 2048",
        error_kind="context_overflow",
    )


def _run(folder: Path, info: dict[str, Any] | None = None) -> Path:
    """home_search: 2 successes, 1 failure, 1 crash and 3 overflows (3 scored, 4 model
    errors); booking: one success."""
    records = [
        record("home_search", "1", True),
        record("home_search", "2", True),
        record("home_search", "3", False),
        record("home_search", "4", False, status="model_error", message="SyntaxError"),
        *(_overflow(str(i)) for i in range(5, 8)),
        record("booking", "1", True),
    ]
    default = {"tokens": TOKENS, "timing": {"elapsed_s": 10.0, "generated_tokens_per_s": 45.6}}
    return make_run(folder, records, info=default if info is None else info)


def test_tokens_line_splits_generated_and_cached() -> None:
    info = {"tokens": TOKENS, "timing": {"generated_tokens_per_s": 45.64}}
    assert tokens_line(info) == TOKENS_LINE
    resumed = {"tokens": TOKENS, "timing": {"sessions": 2, "generated_tokens_per_s": 45.6}}
    assert "(45.6 generated tokens/s in the last session);" in str(tokens_line(resumed))
    no_rate = tokens_line({"tokens": TOKENS, "timing": {"elapsed_s": 3.0}})
    assert no_rate == TOKENS_LINE.replace(" (45.6 generated tokens/s)", "")


def test_tokens_line_of_an_old_run_says_its_totals_include_cached_calls() -> None:
    old = {"tokens": {"prompt": 50, "completion": 7}, "timing": {"elapsed_s": 2.0}}
    predates = "(cached calls included: the run predates the split)"
    assert tokens_line(old) == f"tokens: 50 prompt + 7 completion {predates}"
    assert tokens_line({}) is None
    assert tokens_line({"tokens": {}}) is None
    # A model that reports no tokens (oracle, baseline, agents): no line of zeros.
    zeros = {"prompt": 0, "completion": 0, "cached": {"prompt": 0, "completion": 0}}
    assert tokens_line({"tokens": zeros, "timing": {"generated_tokens_per_s": 0.0}}) is None
    assert tokens_line({"tokens": {"prompt": 0, "completion": 0}}) is None


def test_tokens_line_leaves_out_what_is_malformed() -> None:
    info: dict[str, Any] = {
        "tokens": {"prompt": -1, "completion": True, "cached": "lots"},
        "timing": {"generated_tokens_per_s": float("nan")},
    }
    assert tokens_line(info) == "tokens: generated not recorded; cached not recorded"
    info = {"tokens": {"prompt": 3, "cached": {"completion": 2}}, "timing": "soon"}
    assert tokens_line(info) == "tokens: generated 3 prompt; cached 2 completion"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=12,
)
fields = st.sampled_from(["prompt", "completion", "cached", "generated_tokens_per_s", "x"])


@given(
    tokens=st.dictionaries(fields, json_values) | json_values,
    timing=st.dictionaries(fields, json_values) | json_values,
)
def test_tokens_line_never_raises_on_any_run_json(tokens: Any, timing: Any) -> None:
    line = tokens_line({"tokens": tokens, "timing": timing})
    assert line is None or (line.startswith("tokens: ") and "\n" not in line)


def test_counts_cell_and_notes_name_the_overflows_only_when_there_are_some() -> None:
    counts = {"scored": 3, "model_error": 4, "infra_error": 0, "context_overflow": 3}
    assert counts_text(counts) == "7 (3/4/0), 3 context overflows"
    assert counts_text({**counts, "context_overflow": 1}) == "7 (3/4/0), 1 context overflow"
    assert counts_text({**counts, "context_overflow": 0}) == "7 (3/4/0)"
    old = {"scored": 3, "model_error": 4, "infra_error": 0}  # run.json before the key
    assert counts_text(old) == "7 (3/4/0)"
    assert overflow_notes({"home_search": counts, "booking": old, "x": None}) == [NOTE]


def _summary_text(info: dict[str, Any], tmp_path: Path) -> str:
    console = Console(file=io.StringIO(), width=100)
    stats = SessionStats(done=8, model_calls=8, cached_calls=2, elapsed_s=2.0)
    print_summary(RunResult(tmp_path, info, stats), console)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_run_summary_shows_overflows_per_task_and_tokens(tmp_path: Path) -> None:
    counts = {"scored": 3, "model_error": 4, "infra_error": 0, "context_overflow": 3}
    info: dict[str, Any] = {
        "kind": "tasks",
        "status": "complete",
        "config": {"model": "m"},
        "metric_names": {"home_search": ["success_rate"], "booking": ["success_rate"]},
        "metrics": {"home_search": {"success_rate": 2 / 7}, "booking": {"success_rate": 1.0}},
        "counts": {
            "home_search": counts,
            "booking": {"scored": 1, "model_error": 0, "infra_error": 0, "context_overflow": 0},
        },
        "tokens": TOKENS,
        "timing": {"generated_tokens_per_s": 45.6},
    }
    text = _summary_text(info, tmp_path)
    assert NOTE in text and TOKENS_LINE in text
    assert "booking:" not in text  # no overflow, no note
    # A run.json of before the split: its tokens, said to include cached calls; no note.
    old = {**info, "tokens": {"prompt": 5, "completion": 1}, "timing": {}}
    old["counts"] = {task: {**c, "context_overflow": 0} for task, c in info["counts"].items()}
    text = _summary_text(old, tmp_path)
    assert "tokens: 5 prompt + 1 completion (cached calls included" in text
    assert "context overflow" not in text


def test_finished_grid_tolerates_counts_without_the_overflow_key() -> None:
    info = {
        "metrics": {"home_search": {}},
        "counts": {"home_search": {"scored": 1, "model_error": 0, "infra_error": 0}},
    }
    grid = finished_run_grid("t", info)
    assert grid.notes == [] and grid.rows == [["home_search", "1", "0", "0"]]


def test_report_tables_and_exports_count_the_overflows(tmp_path: Path) -> None:
    run = LoadedRun(_run(tmp_path / "a"))
    other = LoadedRun(_run(tmp_path / "b", info={}))  # no tokens recorded at all
    grids = [status_grid([run, other]), side_by_side([run, other, run])]
    markdown = to_markdown(grids)
    assert "7 (3/4/0), 3 context overflows" in markdown
    assert f"a (m): {NOTE}" in markdown and f"b (m): {NOTE}" in markdown
    # The exports' token columns are numbers (a script reads them), blank where unknown.
    first = dict(zip(grids[0].columns, grids[0].rows[0], strict=True))
    assert [first[c] for c in TOKEN_COLUMNS] == ["12345", "678", "45.6", "1000", "200"]
    assert grids[0].rows[1][-len(TOKEN_COLUMNS) :] == [""] * len(TOKEN_COLUMNS)
    console = Console(file=io.StringIO(), width=200)
    render_rich(grids[1], console)
    assert isinstance(console.file, io.StringIO) and NOTE in console.file.getvalue()


def test_html_report_shows_overflows_and_tokens(tmp_path: Path) -> None:
    run = LoadedRun(_run(tmp_path / "a"))
    page = render([run], run)
    assert "7 (3/4/0), 3 context overflows" in page
    assert f'<p class="warn overflow">{NOTE}</p>' in page
    assert TOKENS_LINE.removeprefix("tokens: ") in page
    old = LoadedRun(_run(tmp_path / "old", info={"tokens": {"prompt": 9, "completion": 2}}))
    assert "9 prompt + 2 completion (cached calls included" in render([old], old)


def test_toolbench_report_counts_context_overflows_of_a_run_folder(
    cli: Cli, tmp_path: Path
) -> None:
    folder = _run(tmp_path / "run")
    code, out, err = cli("report", str(folder))
    assert code == 0, err
    assert NOTE in out and TOKENS_LINE in out
    assert "booking:" not in out
    code, out, err = cli("report", str(folder), "--json")
    assert code == 0, err
    counts = json.loads(out)["runs"][str(folder)]["home_search"]["counts"]
    assert counts == {"scored": 3, "model_error": 4, "infra_error": 0, "context_overflow": 3}
    exported = tmp_path / "t.csv"
    code, _, err = cli("report", str(folder), "--csv", str(exported))
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(exported.read_text())))
    # The run's table keys its rows by task and counts: the count is in every row's key.
    assert "home_search / 7 (3/4/0), 3 context overflows" in {r["row"] for r in rows}
    status = {r["column"]: r["value"] for r in rows if r["table"] == "run status"}
    assert status["prompt tokens"] == "12345" and status["generated tokens/s"] == "45.6"
