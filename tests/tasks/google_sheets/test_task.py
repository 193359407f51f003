"""google_sheets end to end through the CLI: equivalent programs pass, near misses fail.

The data folder is written here in the original layout (test.jsonl with prompt, completion,
question_sheet_name, check_format) plus our workbook.json, and predictions come from a replay
file, so every verdict below is the task's scorer running real programs in the sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from toolbench.tasks.google_sheets.emulator import Spreadsheet

ROUND_TRIP = (
    "df = get_as_dataframe(worksheet)\n"
    "{edit}\n"
    "set_with_dataframe(worksheet, df, include_index=False, include_column_header=True)"
)


def _workbook() -> dict[str, Any]:
    book = Spreadsheet("test book", sheet_title="Costs")
    book.sheet1.update(
        [
            ["Product", "Cost", "Price"],
            ["apple", 1.5, 2.25],
            ["chicken", 11, 15],
            ["rice", 3, "=B4*2"],
            ["beans", 2, 3.5],
        ],
        "A1",
        raw=False,
    )
    other = book.add_worksheet("Rates", rows=20, cols=5)
    other.update([["Tax"], [0.25]], "A1", raw=False)
    return book.to_dict()


# (id, question sheet, check_format, gold)
SAMPLES = [
    ("rename", "Costs", False, "worksheet.update_acell('A2', 'pear')"),
    ("total", "Costs", False, "worksheet.update_acell('B6', '=SUM(B2:B5)')"),
    ("total_fmt", "Costs", True, "worksheet.update_acell('B6', '=SUM(B2:B5)')"),
    ("delete", "Costs", False, "worksheet.delete_rows(3)"),
    ("bold", "Costs", True, "worksheet.format('A1:C1', {'textFormat': {'bold': True}})"),
    ("raise", "Costs", False, "worksheet.update_acell('B3', 13)"),
    ("red", "Costs", True, "worksheet.format('A1', {'backgroundColor': {'red': 1}})"),
    ("tax", "Costs", False, "worksheet.update_acell('D2', '=C2*Rates!A2')"),
]

# (sample id, prediction, should succeed)
PREDICTIONS = [
    ("rename", "worksheet.update('A2', 'pear')", True),
    ("rename", "worksheet.update([['pear']], 'A2')", True),
    ("rename", "worksheet.update_cell(2, 1, 'pear')", True),
    ("rename", ROUND_TRIP.format(edit="df.loc[0, 'Product'] = 'pear'"), True),
    ("rename", "worksheet.update_acell('A3', 'pear')", False),  # off by one row
    ("rename", "worksheet.update_acell('B2', 'pear')", False),  # wrong column
    ("total", "worksheet.update_acell('B6', 17.5)", True),  # the literal, judged by value
    ("total", "worksheet.update('B6', '=SUM(B2:B5)', raw=False)", True),
    ("total", "worksheet.update_acell('B6', '=SUM(B2:B4)')", False),  # wrong range
    ("total", "worksheet.update_acell('B7', '=SUM(B2:B5)')", False),  # one row too low
    ("total_fmt", "worksheet.update_acell('B6', 17.5)", False),  # format check: not a formula
    ("total_fmt", "worksheet.update('B6', [['=sum(b2:b5)']], raw=False)", True),  # as Sheets
    ("total_fmt", "worksheet.update('B6', [['=SUM(B2:B5)+0']], raw=False)", False),
    ("total_fmt", "worksheet.update('B6', [['=SUM(B2:B5)']], raw=False)", True),
    ("delete", "worksheet.delete_rows(3, 3)", True),
    ("delete", "worksheet.delete_rows(4)", False),
    ("bold", "worksheet.format('A1:C1', {'textFormat': {'bold': True}})", True),
    (
        "bold",
        "for c in 'ABC':\n    worksheet.format(c + '1', {'textFormat': {'bold': True}})",
        True,
    ),
    ("bold", "worksheet.format('A1:B1', {'textFormat': {'bold': True}})", False),
    ("bold", "worksheet.format('A1:C1', {'textFormat': {'italic': True}})", False),
    ("red", "worksheet.format('A1', {'backgroundColor': {'red': 1, 'green': 0, 'blue': 0}})", True),
    ("red", "worksheet.format('A1', {'backgroundColor': {'red': 1.0, 'alpha': 1}})", True),
    ("red", "worksheet.format('A1', {'backgroundColor': {'red': 1, 'green': 0.5}})", False),
    ("raise", ROUND_TRIP.format(edit="df.loc[df['Product'] == 'chicken', 'Cost'] += 2"), True),
    ("raise", "worksheet.update_acell('B3', '=11+2')", True),
    ("raise", "worksheet.update_acell('B3', 12)", False),
    ("tax", "worksheet.update('D2', '=C2*0.25', raw=False)", True),
    ("tax", "worksheet.update('D2', '=C2*Rates!A2')", False),  # raw: text, not a formula
]


def _write_folder(root: Path) -> Path:
    folder = root / "google_sheets" / "v0"
    folder.mkdir(parents=True)
    (folder / "workbook.json").write_text(json.dumps(_workbook()), encoding="utf-8")
    for sub, text in (("functions", "worksheet.update_acell(label, value)"), ("examples", "x")):
        (folder / sub).mkdir()
        (folder / sub / "0.txt").write_text(text + "\n", encoding="utf-8")
    with (folder / "test.jsonl").open("w", encoding="utf-8") as handle:
        for sid, sheet, check, gold in SAMPLES:
            record = {
                "id": sid,
                "prompt": f"request {sid}",
                "completion": [gold],
                "question_sheet_name": sheet,
                "check_format": check,
            }
            handle.write(json.dumps(record) + "\n")
    return folder


def _run_predictions(
    cli: Callable[..., CliResult], tmp_path: Path, predictions: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    """Score the predictions in one run: the k-th prediction for a sample is its epoch k.

    Returns the sample records in the order of ``predictions``."""
    _write_folder(tmp_path / "data")
    epochs: dict[str, int] = {}
    keys = []
    with (tmp_path / "replay.jsonl").open("w", encoding="utf-8") as handle:
        for sid, prediction in predictions:
            epoch = epochs[sid] = epochs.get(sid, -1) + 1
            keys.append((sid, epoch))
            handle.write(json.dumps({"id": sid, "epoch": epoch, "prediction": prediction}) + "\n")
    out = tmp_path / "run"
    code, _, err = cli(
        "run", "google_sheets", "--data-dir", str(tmp_path / "data"),
        "--model", f"replay:{tmp_path / 'replay.jsonl'}", "--out", str(out),
        "--epochs", str(max(epochs.values()) + 1), "--allow-missing",
    )  # fmt: skip
    assert code == 0, err
    by_key = {(r["id"], r["epoch"]): r for r in read_run(out)[1]}
    return [by_key[key] for key in keys]


def test_equivalent_programs_pass_and_near_misses_fail(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    records = _run_predictions(cli, tmp_path, [(sid, p) for sid, p, _ in PREDICTIONS])
    for position, (sid, prediction, expected) in enumerate(PREDICTIONS):
        record = records[position]
        assert record["status"] == "scored", (prediction, record)
        assert record["success"] is expected, (sid, prediction, record)


@pytest.mark.parametrize(
    ("prediction", "message"),
    [
        ("import pandas as pd\npd.read_csv('/etc/passwd')", "pandas.read_csv is not available"),
        ("df = get_as_dataframe(worksheet)\ndf.to_csv('/tmp/out.csv')", "not allowed"),
        ("import os", "import of 'os' is not allowed"),
        ("worksheet.update_acell('ZZ0', 1)", "IncorrectCellLabel"),
        ("sheet.del_worksheet(worksheet)", "world state could not be read"),
    ],
)
def test_crashes_are_model_errors(
    cli: Callable[..., CliResult], tmp_path: Path, prediction: str, message: str
) -> None:
    record = _run_predictions(cli, tmp_path, [("rename", prediction)])[0]
    assert record["status"] == "model_error"
    assert message in record["message"]
