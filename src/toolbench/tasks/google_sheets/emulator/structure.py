"""The Worksheet's structural methods: insert/delete rows and columns, resize, sort, format, merge,
freeze, rename. Each goes through the spreadsheet so formulas everywhere follow the change."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolbench.tasks.google_sheets.emulator.a1 import a1_to_rowcol, column_to_letters
from toolbench.tasks.google_sheets.emulator.errors import GSpreadException, bad_request
from toolbench.tasks.google_sheets.emulator.formatting import FormattingMixin, span
from toolbench.tasks.google_sheets.emulator.refs import translate_formula
from toolbench.tasks.google_sheets.emulator.values import RAW, ErrorValue, Formula

_AXIS = {"ROWS": "row", "COLUMNS": "column"}


class StructureMixin(FormattingMixin):
    # ---- insert / delete --------------------------------------------------------------------

    def insert_row(
        self,
        values: Sequence[Any],
        index: int = 1,
        value_input_option: Any = RAW,
        inherit_from_before: bool = False,
    ) -> dict[str, Any]:
        return self.insert_rows([values], index, value_input_option, inherit_from_before)

    def insert_rows(
        self,
        values: Sequence[Sequence[Any]],
        row: int = 1,
        value_input_option: Any = RAW,
        inherit_from_before: bool = False,
    ) -> dict[str, Any]:
        """Insert len(values) empty rows before `row`, then write the values there."""
        if ":" in self._title:
            raise GSpreadException(
                "can't insert row in worksheet with colon ':' in its name. See issue: "
                "https://issuetracker.google.com/issues/36761154"
            )
        if inherit_from_before and row == 1:
            raise GSpreadException(
                "inherit_from_before cannot be used when inserting row(s) at the top of a "
                "spreadsheet"
            )
        option = self._input_option(value_input_option)
        rows = self._matrix(values)
        self._insert_dimension("row", row, len(rows), inherit_from_before)
        return self._append_at(row, 1, rows, option, insert_rows=False)

    def insert_cols(
        self,
        values: Sequence[Sequence[Any]],
        col: int = 1,
        value_input_option: Any = RAW,
        inherit_from_before: bool = False,
    ) -> dict[str, Any]:
        """Insert len(values) empty columns before `col`; each inner list is one column."""
        if inherit_from_before and col == 1:
            raise GSpreadException(
                "inherit_from_before cannot be used when inserting column(s) at the left edge of "
                "a spreadsheet"
            )
        option = self._input_option(value_input_option)
        rows = self._matrix(values, "COLUMNS")
        self._insert_dimension("column", col, len(values), inherit_from_before)
        return self._append_at(1, col, rows, option, insert_rows=False)

    def _insert_dimension(self, axis: str, at: int, n: int, inherit_before: bool) -> None:
        self._book._check_alive(self)
        limit = self._grid.rows if axis == "row" else self._grid.cols
        if n < 1:
            raise bad_request(
                "Invalid requests[0].insertDimension: range.endIndex must be greater than "
                "range.startIndex"
            )
        if not 1 <= at <= limit + 1:
            raise bad_request(
                f"Invalid requests[0].insertDimension: range.startIndex ({at - 1}) must be less "
                f"than or equal to the number of {axis}s ({limit})"
            )
        self._book._shift(self, axis, at, n)
        source = at - 1 if inherit_before else at + n
        idx = 0 if axis == "row" else 1
        inherited = {k: v for k, v in self._grid.formats.items() if k[idx] == source}
        for key, fmt in inherited.items():
            for line in range(at, at + n):
                self._grid.formats[(line, key[1]) if idx == 0 else (key[0], line)] = fmt

    def delete_dimension(
        self, dimension: Any, start_index: int, end_index: int | None = None
    ) -> dict[str, Any]:
        axis = _AXIS.get(str(getattr(dimension, "value", dimension)))
        if axis is None:
            raise bad_request(
                f"Invalid value at 'requests[0].delete_dimension.range.dimension', {dimension!r}"
            )
        end = start_index if end_index is None else end_index
        limit = self._grid.rows if axis == "row" else self._grid.cols
        self._book._check_alive(self)
        if start_index < 1 or end < start_index:
            raise bad_request(
                "Invalid requests[0].deleteDimension: range.startIndex must be less than "
                "range.endIndex and not negative"
            )
        if end > limit:
            raise bad_request(
                f"Invalid requests[0].deleteDimension: Cannot delete a {axis} that doesn't exist. "
                f"Tried to delete {axis} index {end - 1} but there are only {limit} {axis}s."
            )
        if start_index == 1 and end == limit:
            raise bad_request(
                f"Invalid requests[0].deleteDimension: You can't delete all the {axis}s on the "
                "sheet."
            )
        self._book._shift(self, axis, start_index, -(end - start_index + 1))
        return {"spreadsheetId": self._book.id, "replies": [{}]}

    def delete_rows(self, start_index: int, end_index: int | None = None) -> dict[str, Any]:
        """Delete rows start_index..end_index (inclusive, 1-based); formulas follow."""
        return self.delete_dimension("ROWS", start_index, end_index)

    def delete_columns(self, start_index: int, end_index: int | None = None) -> dict[str, Any]:
        return self.delete_dimension("COLUMNS", start_index, end_index)

    # ---- size -------------------------------------------------------------------------------

    def resize(self, rows: int | None = None, cols: int | None = None) -> dict[str, Any]:
        """Shrinking deletes trailing rows/columns (formulas pointing there become #REF!)."""
        if rows is None and cols is None:
            raise TypeError("Either 'rows' or 'cols' should be specified.")
        self._book._check_alive(self)
        for axis, new in (("row", rows), ("column", cols)):
            if new is None:
                continue
            if not isinstance(new, int) or new < 1:
                raise bad_request(
                    f"Invalid requests[0].updateSheetProperties: Invalid {axis} count: {new}"
                )
            old = self._grid.rows if axis == "row" else self._grid.cols
            if new < old:
                self._book._shift(self, axis, new + 1, new - old)
            elif new > old:
                self._grid.truncate(
                    new if axis == "row" else self._grid.rows,
                    new if axis == "column" else self._grid.cols,
                )
                self._book._engine.invalidate()
        return {"spreadsheetId": self._book.id, "replies": [{}]}

    def add_rows(self, rows: int) -> None:
        self.resize(rows=self._grid.rows + rows)

    def add_cols(self, cols: int) -> None:
        self.resize(cols=self._grid.cols + cols)

    def freeze(self, rows: int | None = None, cols: int | None = None) -> dict[str, Any]:
        if rows is None and cols is None:
            raise TypeError("Either 'rows' or 'cols' should be specified.")
        if rows is not None:
            self._grid.frozen_rows = rows
        if cols is not None:
            self._grid.frozen_cols = cols
        return {"spreadsheetId": self._book.id, "replies": [{}]}

    # ---- sort -------------------------------------------------------------------------------

    def sort(self, *specs: tuple[int, str], range: str | None = None) -> dict[str, Any]:
        """Sort rows by (column, 'asc'|'des') keys; without `range`, every row below the frozen
        ones (a header row is sorted too unless frozen). Empty cells always go last."""
        if range:
            start, end = range.split(":")
            top, left = a1_to_rowcol(start)
            bottom, right = a1_to_rowcol(end)
        else:
            top, left = self._grid.frozen_rows + 1, 1
            bottom, right = self._grid.rows, self._grid.cols
        keys = []
        for col, order in specs:
            if order not in ("asc", "des"):
                raise ValueError("Either 'asc' or 'des' should be specified as sort order.")
            if not left <= col <= right:
                raise bad_request(
                    f"Invalid requests[0].sortRange: sort column {column_to_letters(col)} is "
                    "outside the range being sorted"
                )
            keys.append((col, order == "des"))
        self._book._recalc(self._id)
        order_rows = list(span(top, bottom))
        for col, descending in reversed(keys):  # stable passes, least significant key first
            column = {r: self._grid.value(r, col) for r in order_rows}
            filled = [r for r in order_rows if column[r] not in (None, "")]
            blank = [r for r in order_rows if column[r] in (None, "")]
            filled.sort(key=lambda r: _sort_key(column[r]), reverse=descending)
            order_rows = filled + blank
        self._move_rows(order_rows, top, left, right)
        return {"spreadsheetId": self._book.id, "replies": [{}]}

    def _move_rows(self, sources: list[int], top: int, left: int, right: int) -> None:
        grid = self._grid
        taken = {}
        for r in sources:
            for c in span(left, right):
                taken[(r, c)] = (grid.cells.pop((r, c), None), grid.formats.pop((r, c), None))
                grid.computed.pop((r, c), None)
        for i, src in enumerate(sources):
            for c in span(left, right):
                stored, fmt = taken[(src, c)]
                if isinstance(stored, Formula):
                    stored = Formula(translate_formula(stored.text, top + i - src, 0))
                if stored is not None:
                    grid.cells[(top + i, c)] = stored
                if fmt is not None:
                    grid.formats[(top + i, c)] = fmt
        self._book._engine.invalidate()

    # ---- properties -------------------------------------------------------------------------

    def update_title(self, title: str) -> dict[str, Any]:
        self._book._rename(self, title)
        return {"spreadsheetId": self._book.id, "replies": [{}]}

    def update_index(self, index: int) -> dict[str, Any]:
        self._book._move(self, index)
        return {"spreadsheetId": self._book.id, "replies": [{}]}


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers, then text (case-insensitive), then booleans, then errors."""
    if isinstance(value, ErrorValue):
        return 3, str(value)
    if isinstance(value, bool):
        return 2, value
    if isinstance(value, (int, float)):
        return 0, value
    return 1, str(value).casefold()
