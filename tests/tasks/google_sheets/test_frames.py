"""get_as_dataframe / set_with_dataframe: gspread-dataframe's semantics, checked against the real
library run on our worksheets (it only needs values_get, row/col counts, resize, update_cells)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from toolbench.tasks.google_sheets.emulator import (
    Spreadsheet,
    Worksheet,
    get_as_dataframe,
    set_with_dataframe,
)


def test_reads_typed_values(ws: Worksheet) -> None:
    ws.update([["=B2*C2"]], "E2", raw=False)
    ws.update([["Total"]], "E1")
    df = get_as_dataframe(ws)
    assert list(df.columns) == ["Product", "Qty", "Price", "Category", "Total"]
    assert df["Qty"].tolist() == [10, 3, 7, 0, 12]
    assert df["Qty"].dtype.kind == "f"  # the empty rows of the grid were NaN before dropping
    assert df["Price"].tolist() == [1.5, 0.25, 4.0, 2.0, 1.0]
    assert df.loc[0, "Total"] == "=B2*C2"  # evaluate_formulas=False is the library's default
    evaluated = get_as_dataframe(ws, evaluate_formulas=True)
    assert evaluated.loc[0, "Total"] == 15 and math.isnan(evaluated.loc[1, "Total"])
    assert len(df) == 5  # the 994 empty rows below are dropped


def test_empty_cells_and_options(ws: Worksheet) -> None:
    ws.update([[""]], "B3")
    df = get_as_dataframe(ws, usecols=[0, 1], nrows=3)
    assert list(df.columns) == ["Product", "Qty"] and len(df) == 3
    assert math.isnan(df.loc[1, "Qty"])
    assert get_as_dataframe(Spreadsheet().sheet1).empty


def test_writes_frames(book: Spreadsheet) -> None:
    ws = book.add_worksheet("out", 3, 2)
    df = pd.DataFrame(
        {"name": ["a", "b", None], "n": [1, 2.5, float("nan")], "f": ["=1+1", "x", "'q"]}
    )
    set_with_dataframe(ws, df, row=2, col=2)
    assert (ws.row_count, ws.col_count) == (5, 4)  # grown to fit, never shrunk
    assert ws.get_values(value_render_option="UNFORMATTED_VALUE") == [
        ["", "", "", ""],
        ["", "name", "n", "f"],
        ["", "a", 1, 2],
        ["", "b", 2.5, "x"],
        ["", "", "", "'q"],
    ]
    set_with_dataframe(ws, df.head(1), include_index=True, resize=True)
    assert (ws.row_count, ws.col_count) == (2, 4)
    assert ws.get_values()[0] == ["", "name", "n", "f"]
    set_with_dataframe(ws, df.head(1), include_column_header=False, allow_formulas=False)
    assert ws.acell("C1", value_render_option="UNFORMATTED_VALUE").value == "=1+1"


@pytest.mark.parametrize("evaluate_formulas", [False, True])
def test_reading_matches_gspread_dataframe(ws: Worksheet, evaluate_formulas: bool) -> None:
    real = pytest.importorskip("gspread_dataframe")
    ws.update([["=B2*C2", "", "note"], ["", "=1/0"]], "E2", raw=False)
    ws.update([[""]], "C4")
    ours = get_as_dataframe(ws, evaluate_formulas=evaluate_formulas)
    theirs = real.get_as_dataframe(ws, evaluate_formulas=evaluate_formulas)
    pd.testing.assert_frame_equal(ours, theirs)
    pd.testing.assert_frame_equal(
        get_as_dataframe(ws, header=None), real.get_as_dataframe(ws, header=None)
    )


def test_writing_matches_gspread_dataframe(book: Spreadsheet) -> None:
    real = pytest.importorskip("gspread_dataframe")
    df = pd.DataFrame(
        {"name": ["a", "b"], "n": [1, 2.5], "f": ["=1+1", "'x"]},
        index=pd.Index(["r1", "r2"], name="key"),
    )
    for kwargs in [
        {},
        {"row": 3, "col": 2},
        {"include_index": True},
        {"resize": True},
        {"include_column_header": False, "string_escaping": "full"},
    ]:
        ours, theirs = book.clone(), book.clone()
        set_with_dataframe(ours.sheet1, df, **kwargs)
        real.set_with_dataframe(theirs.sheet1, df, **kwargs)
        assert ours.snapshot() == theirs.snapshot(), kwargs
        assert ours.sheet1.row_count == theirs.sheet1.row_count
