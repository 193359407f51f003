"""The Worksheet's value-writing methods (values.update/append/clear in the API).

`update` takes gspread 6's order, `update(values, range_name)`, and also the gspread 5 order
`update(range_name, values)` that most published snippets (and ToolBench's own labels, e.g.
`worksheet.update('C4', 13, raw=False)`) use, scalar values included: those programs ran against
gspread 5 and must keep running.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

from toolbench.tasks.google_sheets.emulator.a1 import (
    GridRange,
    a1_to_rowcol,
    parse_range,
    rowcol_to_a1,
)
from toolbench.tasks.google_sheets.emulator.errors import IncorrectCellLabel, bad_request
from toolbench.tasks.google_sheets.emulator.reading import ReadingMixin
from toolbench.tasks.google_sheets.emulator.values import RAW, USER_ENTERED


def _looks_like_range(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return parse_range(value, allow_sheet_only=False).sheet is None
    except IncorrectCellLabel:
        return False


def _is_matrix(value: Any) -> bool:
    return isinstance(value, (list, tuple)) or hasattr(value, "tolist")


class WritingMixin(ReadingMixin):
    def update(
        self,
        values: Any = None,
        range_name: Any = None,
        raw: bool = True,
        major_dimension: Any = None,
        value_input_option: Any = None,
        include_values_in_response: bool | None = None,
        response_value_render_option: Any = None,
        response_date_time_render_option: Any = None,
    ) -> dict[str, Any]:
        """Write a matrix at a range (a single cell is an anchor; no range means A1).

        A string first argument is a range in gspread 5's order (gspread 6 swaps it too when the
        second is a list); a scalar value is one cell, as gspread 5 allowed."""
        if isinstance(values, str) and (_looks_like_range(values) or _is_matrix(range_name)):
            if _is_matrix(range_name):
                warnings.warn(
                    "The order of arguments in worksheet.update() has changed. Please pass values "
                    "first and range_name secondor used named arguments (range_name=, values=)",
                    DeprecationWarning,
                    stacklevel=2,
                )
            values, range_name = range_name, values
        scalar = values is not None and not _is_matrix(values) and not isinstance(values, dict)
        if range_name is not None and scalar:
            values = [[values]]
        option = self._input_option(value_input_option or (RAW if raw is True else USER_ENTERED))
        rng = self._parse(range_name)
        if range_name is None or range_name == "":
            rng = GridRange(None, 1, 1, 1, 1, is_cell=True)
        return self._write(rng, self._matrix(values, major_dimension), option)

    def batch_update(
        self,
        data: Iterable[dict[str, Any]],
        raw: bool = True,
        value_input_option: Any = None,
        include_values_in_response: Any = None,
        response_value_render_option: Any = None,
        response_date_time_render_option: Any = None,
    ) -> dict[str, Any]:
        """Several {'range', 'values'} writes; all are checked before any is applied."""
        option = self._input_option(value_input_option or (RAW if raw is True else USER_ENTERED))
        planned = []
        for i, item in enumerate(data):
            if not isinstance(item, dict) or "range" not in item:
                raise bad_request(f"Invalid data[{i}]: each item needs 'range' and 'values'")
            rng = self._parse(item["range"])
            planned.append((rng, self._matrix(item.get("values", []), item.get("majorDimension"))))
        responses = [self._write(rng, rows, option) for rng, rows in planned]
        return {
            "spreadsheetId": self._book.id,
            "totalUpdatedRows": sum(r["updatedRows"] for r in responses),
            "totalUpdatedColumns": sum(r["updatedColumns"] for r in responses),
            "totalUpdatedCells": sum(r["updatedCells"] for r in responses),
            "totalUpdatedSheets": 1 if responses else 0,
            "responses": responses,
        }

    def update_cell(self, row: int, col: int, value: Any) -> dict[str, Any]:
        """One cell, always parsed as if typed (USER_ENTERED), like gspread."""
        label = rowcol_to_a1(row, col)
        return self._write(self._parse(label), self._matrix([[value]]), USER_ENTERED)

    def update_acell(self, label: str, value: Any) -> dict[str, Any]:
        return self.update_cell(*a1_to_rowcol(label), value=value)

    def update_cells(self, cell_list: Sequence[Any], value_input_option: Any = RAW) -> Any:
        """Write the values of gspread Cell objects (what gspread-dataframe calls)."""
        option = self._input_option(value_input_option)
        top = min(c.row for c in cell_list)
        left = min(c.col for c in cell_list)
        bottom = max(c.row for c in cell_list)
        right = max(c.col for c in cell_list)
        rows: list[list[Any]] = [[None] * (right - left + 1) for _ in range(bottom - top + 1)]
        for cell in cell_list:
            rows[cell.row - top][cell.col - left] = cell.value
        rng = self._parse(f"{rowcol_to_a1(top, left)}:{rowcol_to_a1(bottom, right)}")
        return self._write(rng, self._matrix(rows), option)

    # ---- append -----------------------------------------------------------------------------

    def append_row(
        self,
        values: Sequence[Any],
        value_input_option: Any = RAW,
        insert_data_option: Any = None,
        table_range: str | None = None,
        include_values_in_response: bool = False,
    ) -> dict[str, Any]:
        return self.append_rows(
            [values],
            value_input_option,
            insert_data_option,
            table_range,
            include_values_in_response,
        )

    def append_rows(
        self,
        values: Sequence[Sequence[Any]],
        value_input_option: Any = RAW,
        insert_data_option: Any = None,
        table_range: str | None = None,
        include_values_in_response: bool | None = None,
    ) -> dict[str, Any]:
        """Write after the last row of the table found in `table_range` (the whole sheet by
        default), starting at the table's first column; rows/columns are added as needed."""
        option = self._input_option(value_input_option)
        insert = self._option(
            insert_data_option, ("OVERWRITE", "INSERT_ROWS"), "insert_data_option", "OVERWRITE"
        )
        rng = self._parse(table_range)
        rows = self._matrix(values)
        self._book._recalc(self._id)
        r1, c1, _, _ = rng.bounded(self._grid.rows, self._grid.cols)
        used = [
            (r, c)
            for r, c in self._grid.cells
            if r >= r1 and c >= c1 and self._grid.value(r, c) not in (None, "")
        ]
        start_row = max((r for r, _ in used), default=r1 - 1) + 1
        start_col = min((c for _, c in used), default=c1)
        return self._append_at(start_row, start_col, rows, option, insert == "INSERT_ROWS")

    def _append_at(
        self, row: int, col: int, rows: list[list[Any]], option: str, insert_rows: bool
    ) -> dict[str, Any]:
        """Write rows at (row, col), inserting rows first or growing the grid to fit."""
        height = len(rows)
        width = max((len(r) for r in rows), default=0)
        table = self._label((1, col, max(row - 1, 1), col + max(width, 1) - 1))
        if insert_rows and height:
            self._book._shift(self, "row", min(row, self._grid.rows + 1), height)
        need_rows, need_cols = row + height - 1, col + width - 1
        if need_rows > self._grid.rows or need_cols > self._grid.cols:
            self._grid.truncate(max(need_rows, self._grid.rows), max(need_cols, self._grid.cols))
            self._book._engine.invalidate()
        anchor = GridRange(None, row, col, row, col, is_cell=True)
        updates = self._write(anchor, rows, option) if height else {}
        return {"spreadsheetId": self._book.id, "tableRange": table, "updates": updates}

    # ---- clearing ---------------------------------------------------------------------------

    def clear(self) -> dict[str, Any]:
        """Clear every value (formats stay, as with values.clear)."""
        self._book._check_alive(self)
        self._clear_box((1, 1, self._grid.rows, self._grid.cols))
        return {
            "spreadsheetId": self._book.id,
            "clearedRange": self._label((1, 1, self._grid.rows, self._grid.cols)),
        }

    def batch_clear(self, ranges: Sequence[str]) -> dict[str, Any]:
        boxes = [self._read_box(self._parse(r)) for r in ranges]
        for box in boxes:
            self._clear_box(box)
        return {
            "spreadsheetId": self._book.id,
            "clearedRanges": [self._label(box) for box in boxes],
        }
