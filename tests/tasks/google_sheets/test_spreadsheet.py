"""The Spreadsheet: worksheets by title/index/id, adding and deleting them, REST-shaped calls."""

from __future__ import annotations

import copy

import pytest

from toolbench.tasks.google_sheets.emulator import (
    APIError,
    Spreadsheet,
    WorksheetNotFound,
    exceptions,
)


def test_worksheet_lookup(book: Spreadsheet) -> None:
    assert book.sheet1 is book.worksheet("Sheet1") is book.get_worksheet(0)
    with pytest.raises(WorksheetNotFound) as info:
        book.worksheet("Sheet2")
    assert str(info.value) == "Sheet2"
    with pytest.raises(WorksheetNotFound, match="index 3 not found"):
        book.get_worksheet(3)
    with pytest.raises(WorksheetNotFound, match="id 7 not found"):
        book.get_worksheet_by_id(7)
    assert exceptions.WorksheetNotFound is WorksheetNotFound
    assert issubclass(WorksheetNotFound, exceptions.GSpreadException)


def test_add_and_delete_worksheets(book: Spreadsheet) -> None:
    second = book.add_worksheet(title="Summary", rows=100, cols=10)
    assert [ws.title for ws in book.worksheets()] == ["Sheet1", "Summary"]
    assert (second.row_count, second.col_count, second.index) == (100, 10, 1)
    assert second.id != 0 and book.get_worksheet_by_id(second.id) is second
    assert book.get_worksheet(-1) is second
    with pytest.raises(APIError, match='A sheet with the name "summary" already exists'):
        book.add_worksheet("summary", 10, 10)
    first = book.add_worksheet("First", 5, 5, index=0)
    assert book.sheet1 is first
    book.del_worksheet(second)
    with pytest.raises(APIError):
        second.update([["x"]], "A1")  # a deleted worksheet is gone
    book.del_worksheet(first)
    with pytest.raises(APIError, match="You can't remove all the sheets"):
        book.del_worksheet(book.sheet1)
    copy_ws = book.duplicate_sheet(0, new_sheet_name="Backup")
    assert copy_ws.get_all_values() == book.sheet1.get_all_values()
    copy_ws.update_cell(1, 1, "changed")
    assert book.sheet1.acell("A1").value == "Product"


def test_rest_calls(book: Spreadsheet) -> None:
    data = book.values_get("'Sheet1'!A1:B2", params={"valueRenderOption": "UNFORMATTED_VALUE"})
    assert data == {
        "range": "Sheet1!A1:B2",
        "majorDimension": "ROWS",
        "values": [["Product", "Qty"], ["apple", 10]],
    }
    book.values_update(
        "Sheet1!F1", params={"valueInputOption": "USER_ENTERED"}, body={"values": [["=B2*2"]]}
    )
    assert book.sheet1.acell("F1").value == "20"
    with pytest.raises(APIError, match="valueInputOption"):
        book.values_update("Sheet1!F1", body={"values": [[1]]})
    book.values_append("Sheet1", {"valueInputOption": "RAW"}, {"values": [["fig"]]})
    assert book.sheet1.acell("A7").value == "fig"
    book.batch_update(
        {
            "requests": [
                {"addSheet": {"properties": {"title": "Raw", "gridProperties": {"rowCount": 3}}}},
                {
                    "repeatCell": {
                        "range": {"sheetId": 0, "startRowIndex": 0, "endRowIndex": 1},
                        "cell": {"userEnteredFormat": {"textFormat": {"bold": True}}},
                        "fields": "userEnteredFormat(textFormat)",
                    }
                },
            ]
        }
    )
    assert book.worksheet("Raw").row_count == 3
    assert book.sheet1.get_format("Z1") == {"textFormat": {"bold": True}}
    with pytest.raises(APIError, match='Unknown name "explode"'):
        book.batch_update({"requests": [{"explode": {}}]})
    meta = book.fetch_sheet_metadata()
    assert [s["properties"]["title"] for s in meta["sheets"]] == ["Sheet1", "Raw"]


def test_clone_and_deepcopy_are_independent(book: Spreadsheet) -> None:
    twin = book.clone()
    deep = copy.deepcopy(book)
    twin.sheet1.update_cell(2, 1, "changed")
    deep.sheet1.delete_rows(2)
    deep.add_worksheet("extra", 5, 5)
    assert book.sheet1.acell("A2").value == "apple"
    assert twin.sheet1.acell("A2").value == "changed"
    assert deep.sheet1.acell("A2").value == "banana"
    assert [ws.title for ws in book.worksheets()] == ["Sheet1"]
    assert twin.sheet1.spreadsheet is twin


def test_to_dict_round_trip(book: Spreadsheet) -> None:
    ws = book.sheet1
    ws.update([["=SUM(B2:B6)", "'=not a formula", "'quoted", "3"]], "F1", raw=False)
    ws.update([["=raw text", "'raw quote"]], "F2")
    ws.format("A1", {"textFormat": {"bold": True}})
    ws.merge_cells("H5:I5")
    data = book.to_dict()
    again = Spreadsheet.from_dict(data)
    assert again.to_dict() == data
    assert again.snapshot() == book.snapshot()
    assert again.sheet1.get("F1:I2", value_render_option="FORMULA") == [
        ["=SUM(B2:B6)", "=not a formula", "quoted", 3],
        ["=raw text", "'raw quote"],
    ]
