"""Worksheet reads shaped like gspread 6's: strings by default, ragged `get`, padded
`get_all_values`, numericised records, `find` returning None, formats kept for scoring."""

from __future__ import annotations

import re

import pytest

from toolbench.tasks.google_sheets.emulator import (
    APIError,
    Cell,
    GSpreadException,
    IncorrectCellLabel,
    Spreadsheet,
    ValueRange,
    Worksheet,
)


def test_get_all_values_and_get(ws: Worksheet) -> None:
    ws.update([["x"]], "F8")
    values = ws.get_all_values()
    assert len(values) == 8 and all(len(row) == 6 for row in values)  # padded rectangle
    assert values[1] == ["apple", "10", "1.5", "fruit", "", ""]
    ragged = ws.get("A7:F8")
    assert isinstance(ragged, ValueRange)
    assert ragged == [[], ["", "", "", "", "", "x"]]
    assert ragged.range == "Sheet1!A7:F8" and ragged.major_dimension == "ROWS"
    assert ws.get("B2:C3", major_dimension="COLUMNS") == [["10", "3"], ["1.5", "0.25"]]
    assert ws.get("A7:B8", maintain_size=True) == [["", ""], ["", ""]]
    assert ws.get("Z1:Z5") == [[]] and ws.get("Z1:Z5").first() is None
    assert ws.get("A1:ZZ2", return_type="ListOfLists")[0] == ["Product", "Qty", "Price", "Category"]
    with pytest.raises(APIError, match="exceeds grid limits"):
        ws.get("AA1")


def test_get_all_records(ws: Worksheet) -> None:
    records = ws.get_all_records()
    assert records[0] == {"Product": "apple", "Qty": 10, "Price": 1.5, "Category": "fruit"}
    assert len(records) == 5
    assert ws.get_all_records(numericise_ignore=["all"])[0]["Qty"] == "10"
    assert ws.get_all_records(head=2)[0] == {
        "apple": "banana",
        "10": 3,
        "1.5": 0.25,
        "fruit": "fruit",
    }
    ws.update([["Qty"]], "E1")
    with pytest.raises(GSpreadException, match="header row in the worksheet contains duplicates"):
        ws.get_all_records()
    assert Spreadsheet().sheet1.get_all_records() == []


def test_cells(ws: Worksheet) -> None:
    cell = ws.acell("B2")
    assert isinstance(cell, Cell) and (cell.row, cell.col, cell.value) == (2, 2, "10")
    assert cell.numeric_value == 10 and cell.address == "B2"
    assert ws.cell(3, 3).value == "0.25"
    assert ws.cell(3, 3, value_render_option="UNFORMATTED_VALUE").value == 0.25
    assert ws.acell("H9").value is None
    assert repr(ws.acell("A1")) == "<Cell R1C1 'Product'>"
    with pytest.raises(IncorrectCellLabel):
        ws.acell("not a cell")
    assert [c.value for c in ws.range("A1:B2")] == ["Product", "Qty", "apple", "10"]
    assert [c.address for c in ws.range(1, 1, 2, 1)] == ["A1", "A2"]


def test_row_and_col_values(ws: Worksheet) -> None:
    assert ws.row_values(1) == ["Product", "Qty", "Price", "Category"]
    assert ws.row_values(20) == []
    assert ws.col_values(2) == ["Qty", "10", "3", "7", "0", "12"]
    assert ws.col_values(2, value_render_option="UNFORMATTED_VALUE")[1:3] == [10, 3]


def test_find_and_findall(ws: Worksheet) -> None:
    found = ws.find("cherry")
    assert found is not None and (found.row, found.col) == (4, 1)
    assert ws.find("Cherry") is None
    assert ws.find("Cherry", case_sensitive=False) == Cell(4, 1, "cherry")
    assert ws.find("fruit", in_row=3) == Cell(3, 4, "fruit")
    assert [c.row for c in ws.findall("fruit")] == [2, 3, 5]
    assert [c.row for c in ws.findall("berry", in_column=4)] == [4, 6]
    assert [c.value for c in ws.findall(re.compile(r"^[a-c]"))] == [
        "apple",
        "banana",
        "cherry",
        "berry",
        "berry",
    ]
    assert ws.find("10").col == 2  # type: ignore[union-attr]  # values are compared as strings
    assert ws.findall("nothing") == []
    with pytest.raises(TypeError, match="query must be of type"):
        ws.find(10)
    with pytest.raises(TypeError, match="Either 'in_row' or 'in_column'"):
        ws.find("x", in_row=1, in_column=1)


def test_sort(ws: Worksheet) -> None:
    ws.sort((2, "asc"), range="A2:D6")
    assert ws.col_values(1) == ["Product", "date", "banana", "cherry", "apple", "elder"]
    ws.sort((4, "asc"), (3, "des"), range="A2:D6")
    assert ws.col_values(1) == ["Product", "cherry", "elder", "date", "apple", "banana"]
    ws.sort((1, "asc"))  # whole sheet: the header row is sorted too
    assert ws.col_values(1) == ["apple", "banana", "cherry", "date", "elder", "Product"]
    ws.freeze(rows=1)
    ws.sort((1, "des"))
    assert ws.col_values(1)[0] == "apple"
    with pytest.raises(ValueError, match="Either 'asc' or 'des'"):
        ws.sort((1, "descending"))


def test_sort_puts_numbers_text_booleans_then_blanks(book: Spreadsheet) -> None:
    ws = book.add_worksheet("mix", 10, 2)
    ws.update([["b"], [True], [2], [""], ["A"], [10]], "A1")
    ws.sort((1, "asc"), range="A1:A6")
    assert ws.col_values(1, value_render_option="UNFORMATTED_VALUE") == [2, 10, "A", "b", True]


def test_format_is_kept_per_cell(ws: Worksheet) -> None:
    ws.format("A1:B1", {"textFormat": {"bold": True}, "backgroundColor": {"red": 1.0}})
    ws.format(["B1", "C3"], {"textFormat": {"italic": True}})  # replaces textFormat as a whole
    assert ws.formats == {
        "A1": {"textFormat": {"bold": True}, "backgroundColor": {"red": 1.0}},
        "B1": {"textFormat": {"italic": True}, "backgroundColor": {"red": 1.0}},
        "C3": {"textFormat": {"italic": True}},
    }
    two_decimals = {"numberFormat": {"type": "NUMBER", "pattern": "0.00"}}
    ws.batch_format([{"range": "C2:C6", "format": two_decimals}])
    assert ws.col_values(3)[1:3] == ["1.50", "0.25"]
    ws.format("B2", {"numberFormat": {"type": "CURRENCY", "pattern": "$#,##0.00"}})
    ws.format("B3", {"numberFormat": {"type": "PERCENT", "pattern": "0.0%"}})
    assert ws.get("B2:B3") == [["$10.00"], ["300.0%"]]
    assert ws.acell("B2", value_render_option="UNFORMATTED_VALUE").value == 10
    with pytest.raises(AttributeError):
        ws.format("A1", "bold")  # type: ignore[arg-type]
    mine = {"textFormat": {"bold": True}}
    ws.format("D4", mine)
    mine["textFormat"]["bold"] = False  # the request was sent: changing the dict changes nothing
    ws.formats["D4"]["textFormat"]["italic"] = True  # nor does changing what was read
    assert ws.get_format("D4") == {"textFormat": {"bold": True}}


def test_merge_cells(ws: Worksheet) -> None:
    ws.merge_cells("A1:B1")
    assert ws.row_values(1) == ["Product", "", "Price", "Category"]
    assert ws.get("A1:B1", combine_merged_cells=True) == [["Product"]]  # trailing cells trimmed
    assert ws.get("A1:D1", combine_merged_cells=True) == [
        ["Product", "Product", "Price", "Category"]
    ]
    assert ws.merged_ranges == ["A1:B1"]
    with pytest.raises(APIError, match="already"):
        ws.merge_cells("B1:C1")
    ws.unmerge_cells("A1:B1")
    assert ws.merged_ranges == []


def test_properties(book: Spreadsheet, ws: Worksheet) -> None:
    assert (ws.title, ws.id, ws.index, ws.row_count, ws.col_count) == ("Sheet1", 0, 0, 1000, 26)
    assert ws.spreadsheet is book and repr(ws) == "<Worksheet 'Sheet1' id:0>"
    assert ws.url.endswith("#gid=0")
    ws.columns_auto_resize(0, 3)  # cosmetic calls succeed
    ws.set_basic_filter()
