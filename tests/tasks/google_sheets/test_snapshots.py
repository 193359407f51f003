"""Snapshots: programs that reach the same sheet compare equal; near misses do not."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from toolbench.tasks.google_sheets.emulator import (
    Spreadsheet,
    Worksheet,
    get_as_dataframe,
    set_with_dataframe,
)

Program = Callable[[Worksheet], object]


def run(book: Spreadsheet, program: Program) -> dict[str, object]:
    fresh = book.clone()
    program(fresh.sheet1)
    snap = fresh.snapshot()
    assert json.loads(json.dumps(snap)) == snap  # plain JSON
    return snap


def via_dataframe(ws: Worksheet) -> None:
    df = get_as_dataframe(ws)
    df.loc[0, "Product"] = "x"
    set_with_dataframe(ws, df)


def via_records(ws: Worksheet) -> None:
    row = ws.find("apple")
    assert row is not None
    ws.update_cell(row.row, row.col, "x")


SAME_AS_A2_X: list[Program] = [
    lambda ws: ws.update([["x"]], "A2"),
    lambda ws: ws.update("A2", "x"),
    lambda ws: ws.update_cell(2, 1, "x"),
    lambda ws: ws.update_acell("A2", "x"),
    lambda ws: ws.batch_update([{"range": "A2:A2", "values": [["x"]]}]),
    via_dataframe,
    via_records,
]
NEAR_MISSES: list[Program] = [
    lambda ws: ws.update([["x"]], "A3"),  # off by one row
    lambda ws: ws.update([["x"]], "B2"),  # wrong column
    lambda ws: ws.update([["X"]], "A2"),  # wrong case
    lambda ws: ws.update([["x "]], "A2"),  # stray space
    lambda ws: ws.insert_row(["x"], index=2),  # inserted instead of replaced
]


@pytest.mark.parametrize("program", SAME_AS_A2_X)
def test_equivalent_programs(book: Spreadsheet, program: Program) -> None:
    assert run(book, program) == run(book, SAME_AS_A2_X[0])


@pytest.mark.parametrize("program", NEAR_MISSES)
def test_near_misses_differ(book: Spreadsheet, program: Program) -> None:
    assert run(book, program) != run(book, SAME_AS_A2_X[0])


def test_formula_programs(book: Spreadsheet) -> None:
    total = run(book, lambda ws: ws.update([["=SUM(B2:B6)"]], "B7", raw=False))
    assert total["sheets"][0]["values"][6][1] == 32  # type: ignore[index]
    assert run(book, lambda ws: ws.update_acell("B7", "=SUM(B2:B6)")) == total
    assert run(book, lambda ws: ws.update_acell("B7", "32")) == total  # same value, no formula
    assert run(book, lambda ws: ws.update_acell("B7", "=SUM(B2:B5)")) != total  # wrong range
    assert run(book, lambda ws: ws.update_acell("B7", "=SUM(B3:B6)")) != total
    assert run(book, lambda ws: ws.update([["=SUM(B2:B6)"]], "B7")) != total  # RAW: text


def test_row_deletion_programs(book: Spreadsheet) -> None:
    deleted = run(book, lambda ws: ws.delete_rows(4))

    def by_frame(ws: Worksheet) -> None:
        df = get_as_dataframe(ws)
        ws.clear()
        set_with_dataframe(ws, df.drop([2]))

    def by_frame_without_clear(ws: Worksheet) -> None:
        df = get_as_dataframe(ws)
        set_with_dataframe(ws, df.drop([2]))  # leaves the old last row behind

    assert run(book, by_frame) == deleted
    assert run(book, by_frame_without_clear) != deleted
    assert run(book, lambda ws: ws.delete_rows(3)) != deleted


def test_formats_in_snapshots(book: Spreadsheet) -> None:
    bold = run(book, lambda ws: ws.format("A1:D1", {"textFormat": {"bold": True}}))
    assert bold["sheets"][0]["formats"]["D1"] == {"textFormat": {"bold": True}}  # type: ignore
    same = run(
        book,
        lambda ws: ws.batch_format(
            [{"range": f"{c}1", "format": {"textFormat": {"bold": True}}} for c in "ABCD"]
        ),
    )
    assert same == bold
    assert run(book, lambda ws: ws.format("A1:C1", {"textFormat": {"bold": True}})) != bold
    assert run(book, lambda ws: ws.format("1:1", {"textFormat": {"bold": True}})) != bold


def test_trailing_empty_cells_are_trimmed(book: Spreadsheet) -> None:
    plain = run(book, lambda ws: None)
    assert run(book, lambda ws: ws.update([["", ""]], "Y999")) == plain
    assert run(book, lambda ws: ws.resize(rows=50, cols=10)) == plain
    values = plain["sheets"][0]["values"]  # type: ignore[index]
    assert len(values) == 6 and {len(row) for row in values} == {4}


def test_formatted_snapshots_compare_what_a_user_sees(book: Spreadsheet) -> None:
    typed, as_text = book.clone(), book.clone()
    typed.sheet1.update_cell(2, 2, 20)
    as_text.sheet1.update([["20"]], "B2")  # RAW: the text "20"
    assert typed.snapshot() != as_text.snapshot()
    seen = typed.snapshot("FORMATTED_VALUE")
    assert seen == as_text.snapshot("FORMATTED_VALUE")
    assert seen["sheets"][0]["values"][1] == ["apple", "20", "1.5", "fruit"]  # type: ignore
