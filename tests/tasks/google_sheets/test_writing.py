"""Worksheet writes: update in both argument orders, cells, batches, appends, inserts, deletes,
clears, and the API's errors for wrong calls."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from tests.tasks.google_sheets.conftest import ROWS
from toolbench.tasks.google_sheets.emulator import (
    APIError,
    GSpreadException,
    InvalidJSONError,
    Spreadsheet,
    Worksheet,
)


def unformatted(ws: Worksheet, rng: str | None = None) -> list[list[object]]:
    return ws.get_values(rng, value_render_option="UNFORMATTED_VALUE")


def test_update_argument_orders(ws: Worksheet) -> None:
    ws.update([["a", "b"]], "F1")  # gspread 6
    with pytest.warns(DeprecationWarning):
        ws.update("F2", [["c", "d"]])  # gspread 5 order, as gspread 6 still accepts it
    ws.update("F3", "e")  # gspread 5: one scalar
    ws.update("F4", 13, raw=False)  # ToolBench's own label style
    ws.update(values=[["g"]], range_name="F5")
    ws.update(range_name="F6", values=[["h"]], value_input_option="USER_ENTERED")
    assert unformatted(ws, "F1:G6") == [
        ["a", "b"],
        ["c", "d"],
        ["e", ""],
        [13, ""],
        ["g", ""],
        ["h", ""],
    ]
    ws.update([["top-left"]])  # no range: A1
    assert ws.acell("A1").value == "top-left"


def test_update_anchor_and_range_sizes(ws: Worksheet) -> None:
    response = ws.update([[1, 2], [3, 4]], "F2")  # one cell anchors a bigger block
    assert response["updatedRange"] == "Sheet1!F2:G3" and response["updatedCells"] == 4
    ws.update([[5]], "H1:I3")  # a bigger range than the data: the rest is untouched
    assert unformatted(ws, "H1:I3") == [[5]]
    ws.update([[7], [8], [9]], "J2:J")  # open range
    assert ws.col_values(10) == ["", "7", "8", "9"]
    with pytest.raises(APIError, match=r"tried writing to row \[3\]"):
        ws.update([[1], [2], [3]], "K1:K2")
    with pytest.raises(APIError, match=r"tried writing to column \[M\]"):
        ws.update([[1, 2, 3]], "K1:L1")
    ws.update([[1, 2, 3]], "K1", major_dimension="COLUMNS")
    assert ws.col_values(11) == ["1", "2", "3"]


def test_update_none_skips_and_empty_string_clears(ws: Worksheet) -> None:
    ws.update([[None, ""]], "A2")
    assert ws.row_values(2) == ["apple", "", "1.5", "fruit"]


def _write(values: object, where: str, **kwargs: object) -> Callable[[Worksheet], object]:
    return lambda ws: ws.update(values, where, **kwargs)


GRID = r"Range \(Sheet1!A1001\) exceeds grid limits. Max rows: 1000, max columns: 26"


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (_write([["x"]], "nonsense!!"), APIError, "Unable to parse range: 'Sheet1'!nonsense!!"),
        (_write([["x"]], "Sheet2!A1"), APIError, "Unable to parse range: 'Sheet1'!Sheet2!A1"),
        (_write([["x"]], "A1001"), APIError, GRID),
        (_write([["x"] * 30], "A1"), APIError, "exceeds grid limits"),
        (_write(["a", "b"], "A1"), APIError, r"Invalid value at 'data.values\[0\]'"),
        (_write([[np.int64(3)]], "A1"), TypeError, "Object of type int64 is not JSON serializable"),
        (_write([[math.nan]], "A1"), InvalidJSONError, "Out of range float values"),
        (lambda ws: ws.update_cell(0, 1, "x"), GSpreadException, r"\(0, 1\)"),
        (_write([["x"]], "A1", value_input_option="TYPED"), APIError, "at 'value_input_option'"),
    ],
)
def test_update_errors(
    ws: Worksheet, call: Callable[[Worksheet], object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call(ws)


def test_api_error_renders_like_gspread(ws: Worksheet) -> None:
    with pytest.raises(APIError) as info:
        ws.update([["x"]], "A0")
    assert str(info.value) == "APIError: [400]: Unable to parse range: 'Sheet1'!A0"
    assert info.value.code == 400 and info.value.error["status"] == "INVALID_ARGUMENT"
    assert type(info.value).__name__ == "APIError"


def test_lenient_types_when_not_strict() -> None:
    book = Spreadsheet(strict_types=False)
    book.sheet1.update([[np.int64(3), np.float64(2.5), np.bool_(True)]], "A1")
    assert unformatted(book.sheet1) == [[3, 2.5, True]]


def test_update_cell_is_user_entered(ws: Worksheet) -> None:
    ws.update_cell(2, 2, "42")
    ws.update_acell("C2", "=B2*2")
    ws.update_cell(3, 2, "'42")
    assert unformatted(ws, "B2:C3") == [[42, 84], ["42", 0.25]]


def test_user_entered_parsing_and_auto_formats(ws: Worksheet) -> None:
    ws.update([["1,000", "$5", "50%", "007", "true", " 12 ", "1e3", "abc"]], "A8", raw=False)
    assert ws.row_values(8) == ["1,000", "$5.00", "50%", "7", "TRUE", "12", "1000", "abc"]
    assert unformatted(ws, "A8:H8") == [[1000, 5, 0.5, 7, True, 12, 1000, "abc"]]
    assert ws.get_format("B8") == {"numberFormat": {"type": "CURRENCY", "pattern": '"$"#,##0.00'}}


def test_batch_update_is_all_or_nothing(ws: Worksheet) -> None:
    ws.batch_update(
        [{"range": "F1", "values": [["x"]]}, {"range": "G1:H1", "values": [["=1+1", 2]]}], raw=False
    )
    assert unformatted(ws, "F1:H1") == [["x", 2, 2]]
    with pytest.raises(APIError):
        ws.batch_update(
            [{"range": "F2", "values": [["y"]]}, {"range": "bad range", "values": [[1]]}]
        )
    assert ws.acell("F2").value is None


def test_update_cells_with_cell_objects(ws: Worksheet) -> None:
    cells = ws.range("B2:B3")
    for cell in cells:
        cell.value = "99"
    ws.update_cells(cells)
    assert unformatted(ws, "B2:B3") == [["99"], ["99"]]  # RAW by default


def test_append_rows(ws: Worksheet) -> None:
    ws.append_row(["fig", 5, 3, "fruit"])
    assert ws.row_values(7) == ["fig", "5", "3", "fruit"]
    ws.update([["note"]], "F20")  # the table ends at the last row holding anything
    ws.append_rows([["grape", "2"], ["kiwi", "=1+1"]], value_input_option="USER_ENTERED")
    assert unformatted(ws, "A21:B22") == [["grape", 2], ["kiwi", 2]]
    ws.append_row(["wide"] + [""] * 29)  # grows the grid to fit
    assert ws.col_count == 30
    tiny = ws.spreadsheet.add_worksheet("tiny", 2, 2)
    tiny.append_rows([["a"], ["b"], ["c"]])
    assert tiny.row_count == 3 and tiny.col_values(1) == ["a", "b", "c"]


def test_insert_rows_and_cols(ws: Worksheet) -> None:
    ws.format("A1:D1", {"textFormat": {"bold": True}})
    ws.insert_row(["first"], index=2)
    assert ws.col_values(1)[:3] == ["Product", "first", "apple"]
    assert ws.get_format("A2") == {}  # inherits from the row after (not bold)
    ws.insert_rows([["x1"], ["x2"]], row=2, inherit_from_before=True)
    assert ws.get_format("A2") == {"textFormat": {"bold": True}}
    assert ws.row_count == 1003
    ws.insert_cols([["c1", "c2"], ["d1"]], col=2)
    assert ws.row_values(1)[:4] == ["Product", "c1", "d1", "Qty"]
    assert ws.col_count == 28
    with pytest.raises(GSpreadException, match="inherit_from_before cannot be used"):
        ws.insert_row(["x"], index=1, inherit_from_before=True)
    with pytest.raises(APIError, match="insertDimension"):
        ws.insert_row(["x"], index=5000)
    ws.update_title("a:b")
    with pytest.raises(GSpreadException, match="colon"):
        ws.insert_row(["x"], index=2)


def test_delete_rows_and_columns(ws: Worksheet) -> None:
    ws.delete_rows(2, 3)
    assert ws.col_values(1) == ["Product", "cherry", "date", "elder"]
    assert ws.row_count == 998
    ws.delete_columns(2)
    assert ws.row_values(1) == ["Product", "Price", "Category"]
    ws.delete_columns(1, 2)
    assert ws.row_values(1) == ["Category"]
    with pytest.raises(APIError, match="Tried to delete row index 998"):
        ws.delete_rows(999)
    with pytest.raises(APIError, match="You can't delete all the rows"):
        ws.delete_rows(1, 998)


def test_clear_keeps_formats(ws: Worksheet) -> None:
    ws.format("A1", {"textFormat": {"bold": True}})
    ws.batch_clear(["A1:A2", "D:D"])
    assert ws.row_values(1) == ["", "Qty", "Price"]
    ws.clear()
    assert ws.get_all_values() == [[]]
    assert ws.formats == {"A1": {"textFormat": {"bold": True}}}


def test_resize(ws: Worksheet) -> None:
    ws.update([["=SUM(B2:B6)", "=B6"]], "F1", raw=False)
    ws.resize(rows=5)
    assert ws.row_count == 5
    assert unformatted(ws, "F1:G1") == [[20, "#REF!"]]
    ws.add_rows(10)
    ws.add_cols(4)
    assert (ws.row_count, ws.col_count) == (15, 30)
    with pytest.raises(TypeError, match=r"Either 'rows' or 'cols' should be specified\."):
        ws.resize()


def test_rows_fixture_is_what_conftest_wrote(ws: Worksheet) -> None:
    assert unformatted(ws) == ROWS
