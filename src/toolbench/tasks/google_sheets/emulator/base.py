"""What every Worksheet method stands on: range arguments read as the API reads them, the grid's
limits, and the two primitives (read a rectangle, write a rectangle) behind values.get/update.

Errors are the API's: a range it cannot parse, a range beyond the grid, writing more than the
range holds, a body that is not a list of lists. Their wording follows the Sheets API so a model
reading the traceback learns what it would learn from the real service.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Protocol

from toolbench.tasks.google_sheets.emulator.a1 import (
    GridRange,
    format_range,
    parse_range,
    quote_sheet,
)
from toolbench.tasks.google_sheets.emulator.engine import Engine
from toolbench.tasks.google_sheets.emulator.errors import IncorrectCellLabel, bad_request
from toolbench.tasks.google_sheets.emulator.grid import Grid
from toolbench.tasks.google_sheets.emulator.values import (
    FORMATTED,
    FORMULA,
    RENDER_OPTIONS,
    Formula,
    render,
)

Box = tuple[int, int, int, int]  # r1, c1, r2, c2 inclusive
ROWS, COLUMNS = "ROWS", "COLUMNS"


def json_text(value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


class Book(Protocol):
    """The spreadsheet as its worksheets see it (``Spreadsheet`` is the one implementation).

    A protocol rather than an import: spreadsheet.py builds worksheets, so the modules a
    worksheet is made of must not import spreadsheet.py back (no import cycle).
    """

    strict_types: bool
    _engine: Engine

    @property
    def id(self) -> str: ...

    @property
    def url(self) -> str: ...

    def get_worksheet_by_id(self, id: int | str) -> WorksheetBase: ...

    def __deepcopy__(self, memo: dict[int, Any]) -> Book: ...

    def _check_alive(self, ws: WorksheetBase) -> None: ...

    def _index_of(self, ws: WorksheetBase) -> int: ...

    def _recalc(self, sheet_id: int | None = None) -> None: ...

    def _shift(self, ws: WorksheetBase, axis: str, at: int, n: int) -> None: ...

    def _rename(self, ws: WorksheetBase, title: str) -> None: ...

    def _move(self, ws: WorksheetBase, index: int) -> None: ...


class WorksheetBase:
    """A worksheet's identity and its view of the spreadsheet's grid; see Worksheet."""

    def __init__(self, book: Book, sheet_id: int, title: str, grid: Grid) -> None:
        self._book, self._id, self._title, self._grid = book, sheet_id, title, grid

    # ---- identity ---------------------------------------------------------------------------

    @property
    def id(self) -> int:
        return self._id

    @property
    def title(self) -> str:
        return self._title

    @property
    def spreadsheet(self) -> Book:
        return self._book

    @property
    def spreadsheet_id(self) -> str:
        return self._book.id

    @property
    def client(self) -> None:
        return None

    @property
    def index(self) -> int:
        return self._book._index_of(self)

    @property
    def row_count(self) -> int:
        return self._grid.rows

    @property
    def col_count(self) -> int:
        return self._grid.cols

    column_count = col_count

    @property
    def frozen_row_count(self) -> int:
        return self._grid.frozen_rows

    @property
    def frozen_col_count(self) -> int:
        return self._grid.frozen_cols

    @property
    def url(self) -> str:
        return f"{self._book.url}#gid={self._id}"

    def __repr__(self) -> str:
        return f"<Worksheet {self._title!r} id:{self._id}>"

    # ---- ranges -----------------------------------------------------------------------------

    def _qualified(self, name: str | None) -> str:
        """The range as gspread sends it: "'Sheet1'!A1" (its wording in 'Unable to parse')."""
        quoted = "'" + self._title.replace("'", "''") + "'"
        return f"{quoted}!{name}" if name else quoted

    def _parse(self, name: str | None) -> GridRange:
        self._book._check_alive(self)
        if name is None or name == "":
            return GridRange(None, None, None, None, None)
        if not isinstance(name, str):
            raise bad_request(f"Unable to parse range: {self._qualified(str(name))}")
        try:
            rng = parse_range(name, allow_sheet_only=False)
        except IncorrectCellLabel:
            rng = None
        if rng is None or rng.sheet is not None:
            raise bad_request(f"Unable to parse range: {self._qualified(name)}")
        return rng

    def _label(self, box: Box) -> str:
        r1, c1, r2, c2 = box
        rng = GridRange(self._title, r1, c1, r2, c2, is_cell=(r1, c1) == (r2, c2))
        return format_range(rng)

    def _beyond_grid(self, rng: GridRange) -> Exception:
        label = quote_sheet(self._title) + "!" + format_range(rng, with_sheet=False)
        return bad_request(
            f"Range ({label}) exceeds grid limits. "
            f"Max rows: {self._grid.rows}, max columns: {self._grid.cols}"
        )

    def _read_box(self, rng: GridRange) -> Box:
        """Reads are clipped to the grid, but must start inside it."""
        rows, cols = self._grid.rows, self._grid.cols
        r1, c1, r2, c2 = rng.bounded(rows, cols)
        if r1 > rows or c1 > cols:
            raise self._beyond_grid(rng)
        return r1, c1, min(r2, rows), min(c2, cols)

    # ---- reading ----------------------------------------------------------------------------

    def _option(self, option: Any, allowed: Iterable[str], field: str, default: str) -> str:
        if option is None:
            return default
        text = getattr(option, "value", option)
        if text not in allowed:
            raise bad_request(
                f"Invalid value at '{field}' (type.googleapis.com/google.apps.sheets.v4."
                f"{''.join(p.title() for p in field.split('_'))}), {json_text(text)}"
            )
        return str(text)

    def _render(self, r: int, c: int, option: str) -> Any:
        """The cell's value as `option` renders it; None when the cell reads as empty."""
        stored = self._grid.cells.get((r, c))
        if stored is None:
            return None
        if option == FORMULA and isinstance(stored, Formula):
            return stored.text
        value = self._grid.value(r, c)
        if value is None:
            return None
        fmt = (
            self._grid.formats.get((r, c), {}).get("numberFormat") if option == FORMATTED else None
        )
        return render(value, option, fmt)

    def _read(self, rng: GridRange, option: Any = None, major: Any = None) -> dict[str, Any]:
        """values.get: {'range', 'majorDimension', 'values'} with trailing empties trimmed."""
        option = self._option(option, RENDER_OPTIONS, "value_render_option", FORMATTED)
        major = self._option(major, (ROWS, COLUMNS), "major_dimension", ROWS)
        box = self._read_box(rng)
        self._book._recalc(self._id)
        r1, c1, r2, c2 = box
        found: dict[tuple[int, int], Any] = {}
        if (r2 - r1 + 1) * (c2 - c1 + 1) <= len(self._grid.cells):
            keys: Iterable[tuple[int, int]] = (
                (r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)
            )
            keys = [k for k in keys if k in self._grid.cells]
        else:
            keys = [(r, c) for r, c in self._grid.cells if r1 <= r <= r2 and c1 <= c <= c2]
        for r, c in keys:
            value = self._render(r, c, option)
            if value is not None:
                found[(r - r1, c - c1)] = value
        if major == COLUMNS:
            found = {(c, r): v for (r, c), v in found.items()}
        lines: dict[int, dict[int, Any]] = {}
        for (i, j), value in found.items():
            lines.setdefault(i, {})[j] = value
        values = [
            [lines.get(i, {}).get(j, "") for j in range(max(lines[i]) + 1)] if i in lines else []
            for i in range(max(lines) + 1 if lines else 0)
        ]
        result: dict[str, Any] = {"range": self._label(box), "majorDimension": major}
        if values:
            result["values"] = values
        return result
