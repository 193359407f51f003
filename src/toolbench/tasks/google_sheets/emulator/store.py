"""Writing primitives behind values.update/append/clear: check a body like the API and gspread's
JSON encoding would, write it at an anchor or within a range, and tell the recalculation engine
what changed (a plain value: incremental; a formula: full pass)."""

from __future__ import annotations

from typing import Any

from toolbench.tasks.google_sheets.emulator.a1 import GridRange, column_to_letters, format_range
from toolbench.tasks.google_sheets.emulator.base import (
    COLUMNS,
    ROWS,
    Box,
    WorksheetBase,
    json_text,
)
from toolbench.tasks.google_sheets.emulator.errors import bad_request
from toolbench.tasks.google_sheets.emulator.values import (
    RAW,
    USER_ENTERED,
    Formula,
    check_json,
    lenient,
    stored_from_input,
)


class StoreMixin(WorksheetBase):
    """values.update/append/clear as primitives; public methods are in WritingMixin."""

    def _input_option(self, option: Any) -> str:
        return self._option(option, (RAW, USER_ENTERED), "value_input_option", RAW)

    def _matrix(self, values: Any, major: Any = None) -> list[list[Any]]:
        """Check a body like the API (a list of lists of scalars) and JSON encoding would."""
        if not self._book.strict_types:
            values = _lenient_matrix(values)
        check_json(values)
        if not isinstance(values, (list, tuple)):
            raise bad_request(
                "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue), "
                + json_text(values)
            )
        for i, row in enumerate(values):
            if not isinstance(row, (list, tuple)):
                raise bad_request(
                    f"Invalid value at 'data.values[{i}]' "
                    f"(type.googleapis.com/google.protobuf.ListValue), {json_text(row)}"
                )
            for j, item in enumerate(row):
                if isinstance(item, (list, tuple, dict)):
                    raise bad_request(
                        f"Invalid values[{i}][{j}]: list_value {{\n  values {json_text(item)}\n}}"
                    )
        major = self._option(major, (ROWS, COLUMNS), "major_dimension", ROWS)
        rows = [list(row) for row in values]
        if major == COLUMNS:
            height = max((len(col) for col in rows), default=0)
            rows = [[col[i] if i < len(col) else None for col in rows] for i in range(height)]
        return rows

    def _write(self, rng: GridRange, rows: list[list[Any]], option: str) -> dict[str, Any]:
        """values.update of an already checked matrix; a single cell is an anchor."""
        r1, c1 = rng.r1 or 1, rng.c1 or 1
        height = len(rows)
        width = max((len(row) for row in rows), default=0)
        if not rng.is_cell and height and width:
            last_r, last_c = r1 + height - 1, c1 + width - 1
            where = f"[{self._qualified(format_range(rng, with_sheet=False))}]"
            if rng.r2 is not None and last_r > rng.r2:
                raise bad_request(
                    f"Requested writing within range {where}, but tried writing to row [{last_r}]"
                )
            if rng.c2 is not None and last_c > rng.c2:
                raise bad_request(
                    f"Requested writing within range {where}, but tried writing to column "
                    f"[{column_to_letters(last_c)}]"
                )
        bottom, right = r1 + max(height, 1) - 1, c1 + max(width, 1) - 1
        if bottom > self._grid.rows or right > self._grid.cols:
            raise self._beyond_grid(
                rng if rng.is_cell or not height else GridRange(None, r1, c1, bottom, right)
            )
        for i, row in enumerate(rows):
            for j, value in enumerate(row):
                if value is not None:
                    self._store(r1 + i, c1 + j, value, option)
        box = (r1, c1, bottom, right)
        return {
            "spreadsheetId": self._book.id,
            "updatedRange": self._label(box),
            "updatedRows": height,
            "updatedColumns": width,
            "updatedCells": sum(len(row) for row in rows),
        }

    def _store(self, r: int, c: int, value: Any, option: str) -> None:
        stored, number_format = stored_from_input(value, option)
        old = self._grid.put(r, c, stored)
        if number_format is not None:
            fmt = dict(self._grid.formats.get((r, c), {}))
            fmt["numberFormat"] = number_format
            self._grid.formats[(r, c)] = fmt
        self._changed(r, c, old, stored)

    def _changed(self, r: int, c: int, old: Any, new: Any) -> None:
        engine = self._book._engine
        if isinstance(old, Formula) or isinstance(new, Formula):
            engine.invalidate()
        elif type(old) is not type(new) or old != new:
            engine.value_changed(self._id, r, c)

    def _clear_box(self, box: Box) -> None:
        r1, c1, r2, c2 = box
        for r, c in [k for k in self._grid.cells if r1 <= k[0] <= r2 and c1 <= k[1] <= c2]:
            self._changed(r, c, self._grid.put(r, c, None), None)


def _lenient_matrix(values: Any) -> Any:
    values = lenient(values)
    if not isinstance(values, (list, tuple)):
        return values
    rows = []
    for row in values:
        row = lenient(row)
        rows.append([lenient(v) for v in row] if isinstance(row, (list, tuple)) else row)
    return rows
