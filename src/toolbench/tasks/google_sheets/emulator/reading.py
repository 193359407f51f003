"""The Worksheet's read methods, shaped like gspread 6's: strings by default (FORMATTED_VALUE),
ragged rows from `get`, padded rectangles from `get_values`/`get_all_values`, `None` from `find`
when nothing matches, numericised records from `get_all_records`."""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from toolbench.tasks.google_sheets.emulator.a1 import (
    GridRange,
    a1_to_rowcol,
    format_range,
    rowcol_to_a1,
)
from toolbench.tasks.google_sheets.emulator.base import COLUMNS
from toolbench.tasks.google_sheets.emulator.cell import Cell, ValueRange, fill_gaps, numericise
from toolbench.tasks.google_sheets.emulator.errors import GSpreadException
from toolbench.tasks.google_sheets.emulator.store import StoreMixin


class ReadingMixin(StoreMixin):
    def get(
        self,
        range_name: str | None = None,
        major_dimension: Any = None,
        value_render_option: Any = None,
        date_time_render_option: Any = None,
        combine_merged_cells: bool = False,
        maintain_size: bool = False,
        pad_values: bool = False,
        return_type: Any = "ValueRange",
    ) -> Any:
        """Values of a range (whole sheet when omitted); rows are ragged unless pad_values."""
        rng = self._parse(range_name)
        response = self._read(rng, value_render_option, major_dimension)
        values = response.get("values", [[]])
        if pad_values:
            values = fill_gaps(values)
        if combine_merged_cells:
            values = self._combine_merged(values, rng)
        if maintain_size and rng.r2 is not None and rng.c2 is not None and rng.r1 and rng.c1:
            values = fill_gaps(values, rng.r2 - rng.r1 + 1, rng.c2 - rng.c1 + 1)
        kind = getattr(return_type, "value", return_type)
        if kind == "ValueRange":
            return ValueRange.from_json({**response, "values": values})
        if kind == "ListOfLists":
            return values
        raise ValueError("return_type must be either ValueRange or ListOfLists")

    def get_values(
        self,
        range_name: str | None = None,
        major_dimension: Any = None,
        value_render_option: Any = None,
        date_time_render_option: Any = None,
        combine_merged_cells: bool = False,
        maintain_size: bool = False,
        pad_values: bool = True,
        return_type: Any = "ListOfLists",
    ) -> Any:
        return self.get(
            range_name,
            major_dimension,
            value_render_option,
            date_time_render_option,
            combine_merged_cells,
            maintain_size,
            pad_values,
            return_type,
        )

    get_all_values = get_values

    def batch_get(
        self,
        ranges: Iterable[str],
        major_dimension: Any = None,
        value_render_option: Any = None,
        date_time_render_option: Any = None,
    ) -> Any:
        return [
            ValueRange.from_json(self._read(self._parse(r), value_render_option, major_dimension))
            for r in ranges
            if r
        ]

    def _combine_merged(self, values: list[list[Any]], rng: GridRange) -> list[list[Any]]:
        if not values or not values[0]:
            return values
        top, left = rng.r1 or 1, rng.c1 or 1
        out = [list(row) for row in values]
        for r1, c1, r2, c2 in self._grid.merges:
            if r1 - top < 0 or c1 - left < 0 or r1 - top >= len(out) or c1 - left >= len(out[0]):
                continue
            first = values[r1 - top][c1 - left]
            for r in range(r1 - top, min(r2 - top + 1, len(out))):
                for c in range(c1 - left, min(c2 - left + 1, len(out[r]))):
                    out[r][c] = first
        return out

    def get_all_records(
        self,
        head: int = 1,
        expected_headers: list[str] | None = None,
        value_render_option: Any = None,
        default_blank: Any = "",
        numericise_ignore: Iterable[Any] = (),
        allow_underscores_in_numeric_literals: bool = False,
        empty2zero: bool = False,
    ) -> list[dict[str, Any]]:
        """One dict per row under the header row `head`, values numericised like gspread's."""
        sheet = self.get(value_render_option=value_render_option, pad_values=True)
        if sheet == [[]]:
            return []
        keys, rows = sheet[head - 1], sheet[head:]
        counts = Counter(expected_headers if expected_headers is not None else keys)
        dupes = [k for k in counts if counts[k] > 1]
        if expected_headers is None and dupes:
            raise GSpreadException(
                f"the header row in the worksheet contains duplicates: {dupes}"
                "To manually set the header row, use the `expected_headers` "
                "parameter of `get_all_records()`"
            )
        if expected_headers is not None:
            if dupes:
                raise GSpreadException(f"the given 'expected_headers' contains duplicates: {dupes}")
            if not all(h in keys for h in expected_headers):
                raise GSpreadException(
                    "the given 'expected_headers' contains unknown headers: "
                    f"{set(expected_headers) - set(keys)}"
                )
        ignore = list(numericise_ignore)
        if ignore != ["all"]:
            rows = [
                [
                    v
                    if j + 1 in ignore
                    else numericise(
                        v, empty2zero, default_blank, allow_underscores_in_numeric_literals
                    )
                    for j, v in enumerate(row)
                ]
                for row in rows
            ]
        return [dict(zip(keys, row, strict=False)) for row in rows]

    def acell(self, label: str, value_render_option: Any = "FORMATTED_VALUE") -> Cell:
        return self.cell(*a1_to_rowcol(label), value_render_option=value_render_option)

    def cell(self, row: int, col: int, value_render_option: Any = "FORMATTED_VALUE") -> Cell:
        data = self.get(rowcol_to_a1(row, col), value_render_option=value_render_option)
        return Cell(row, col, data.first())

    def range(self, *args: Any) -> list[Cell]:
        """Cells of a range ('A1:B7' or 1, 1, 7, 2), empty ones included, as strings."""
        if len(args) >= 4 and all(isinstance(a, int) for a in args[:4]):
            name = f"{rowcol_to_a1(args[0], args[1])}:{rowcol_to_a1(args[2], args[3])}"
        else:
            name = args[0] if args else ""
        rng = self._parse(name)
        r1, c1, r2, c2 = self._read_box(rng)
        values = self._read(rng).get("values", [])
        rect = (
            fill_gaps(values, r2 - r1 + 1, c2 - c1 + 1)
            if values
            else [[""] * (c2 - c1 + 1) for _ in range(r2 - r1 + 1)]
        )
        return [Cell(r1 + i, c1 + j, v) for i, row in enumerate(rect) for j, v in enumerate(row)]

    def get_all_cells(self) -> list[Cell]:
        return self.range()

    def row_values(
        self,
        row: int,
        major_dimension: Any = None,
        value_render_option: Any = None,
        date_time_render_option: Any = None,
    ) -> list[Any]:
        data = self.get(f"A{row}:{row}", major_dimension, value_render_option)
        return data[0] if data else []

    def col_values(self, col: int, value_render_option: Any = "FORMATTED_VALUE") -> list[Any]:
        letters = rowcol_to_a1(1, col)[:-1]
        data = self._read(self._parse(f"{letters}1:{letters}"), value_render_option, COLUMNS)
        return data["values"][0] if "values" in data else []

    # ---- search -----------------------------------------------------------------------------

    def _finder(
        self, query: Any, case_sensitive: bool, in_row: int | None, in_column: int | None
    ) -> list[Cell]:
        data = self._read(self._parse(None))
        values = fill_gaps(data["values"]) if "values" in data else []
        if in_row is not None and in_column is not None:
            raise TypeError("Either 'in_row' or 'in_column' should be specified.")
        if in_column is not None:
            cells = [
                Cell(i + 1, in_column, str(row[in_column - 1])) for i, row in enumerate(values)
            ]
        elif in_row is not None:
            cells = [Cell(in_row, j + 1, str(v)) for j, v in enumerate(values[in_row - 1])]
        else:
            cells = [
                Cell(i + 1, j + 1, str(v))
                for i, row in enumerate(values)
                for j, v in enumerate(row)
            ]
        if isinstance(query, str):
            if case_sensitive:
                return [c for c in cells if c.value == query]
            return [c for c in cells if c.value.casefold() == query.casefold()]
        if isinstance(query, re.Pattern):
            return [c for c in cells if query.search(c.value) is not None]
        raise TypeError("query must be of type: 'str' or 're.Pattern' (obtained from re.compile())")

    def find(
        self,
        query: Any,
        in_row: int | None = None,
        in_column: int | None = None,
        case_sensitive: bool = True,
    ) -> Cell | None:
        """The first matching cell (row by row), or None: gspread 6 no longer raises."""
        found = self._finder(query, case_sensitive, in_row, in_column)
        return found[0] if found else None

    def findall(
        self,
        query: Any,
        in_row: int | None = None,
        in_column: int | None = None,
        case_sensitive: bool = True,
    ) -> list[Cell]:
        return self._finder(query, case_sensitive, in_row, in_column)

    # ---- formats (for scoring; gspread itself has no reader) --------------------------------

    @property
    def formats(self) -> dict[str, dict[str, Any]]:
        """``userEnteredFormat`` of every formatted cell, keyed by A1 label, in row-major order."""
        return {
            rowcol_to_a1(r, c): copy.deepcopy(fmt)
            for (r, c), fmt in sorted(self._grid.formats.items())
        }

    def get_format(self, label: str) -> dict[str, Any]:
        row, col = a1_to_rowcol(label)
        return copy.deepcopy(self._grid.formats.get((row, col), {}))

    @property
    def merged_ranges(self) -> list[str]:
        return [
            format_range(GridRange(None, r1, c1, r2, c2))
            for r1, c1, r2, c2 in sorted(self._grid.merges)
        ]
