"""A spreadsheet as plain JSON: `snapshot` (evaluated values, what a scorer compares) and
`to_dict`/`load_grid` (stored values, lossless, for question sheets kept as data files)."""

from __future__ import annotations

import copy
from typing import Any

from toolbench.tasks.google_sheets.emulator.a1 import parse_range, rowcol_to_a1
from toolbench.tasks.google_sheets.emulator.book import Workbook
from toolbench.tasks.google_sheets.emulator.grid import Grid
from toolbench.tasks.google_sheets.emulator.values import UNFORMATTED, Formula, Stored


def snapshot(book: Workbook, value_render_option: str = UNFORMATTED) -> dict[str, Any]:
    """Values as `value_render_option` reads them (typed by default; FORMATTED_VALUE compares
    what a user sees, so '3' typed RAW equals the number 3), as a rectangle trimmed of trailing
    empty rows and columns ('' for empty cells); formats keyed by A1 label; merges as A1 ranges."""
    sheets = []
    for ws in book.worksheets():
        grid = ws._grid
        rows, cols = grid.extent()
        values = [
            [_or_blank(ws._render(r, c, value_render_option)) for c in range(1, cols + 1)]
            for r in range(1, rows + 1)
        ]
        formats = {
            rowcol_to_a1(r, c): copy.deepcopy(fmt)
            for (r, c), fmt in sorted(grid.formats.items())
            if fmt
        }
        sheets.append(
            {"title": ws.title, "values": values, "formats": formats, "merges": ws.merged_ranges}
        )
    return {"title": book.title, "sheets": sheets}


def to_dict(book: Workbook) -> dict[str, Any]:
    sheets = []
    for ws in book.worksheets():
        grid = ws._grid
        rows = max((r for r, _ in grid.cells), default=0)
        cols = max((c for _, c in grid.cells), default=0)
        cells = [
            [_dump(grid.cells.get((r, c))) for c in range(1, cols + 1)] for r in range(1, rows + 1)
        ]
        sheets.append(
            {
                "title": ws.title,
                "id": ws.id,
                "rows": grid.rows,
                "cols": grid.cols,
                "cells": cells,
                "formats": ws.formats,
                "merges": ws.merged_ranges,
                "frozen_rows": grid.frozen_rows,
                "frozen_cols": grid.frozen_cols,
            }
        )
    return {"title": book.title, "id": book.id, "sheets": sheets}


def load_grid(sheet: dict[str, Any]) -> Grid:
    """One sheet of `to_dict`'s output back into a grid."""
    grid = Grid(sheet.get("rows", 1000), sheet.get("cols", 26))
    for r, row in enumerate(sheet.get("cells", []), start=1):
        for c, value in enumerate(row, start=1):
            stored = _load(value)
            if stored is not None:
                grid.cells[(r, c)] = stored
    for label, fmt in sheet.get("formats", {}).items():
        rng = parse_range(label, allow_sheet_only=False)
        grid.formats[(rng.r1 or 1, rng.c1 or 1)] = dict(fmt)
    for label in sheet.get("merges", []):
        grid.merges.append(parse_range(label, allow_sheet_only=False).bounded(grid.rows, grid.cols))
    grid.frozen_rows = sheet.get("frozen_rows", 0)
    grid.frozen_cols = sheet.get("frozen_cols", 0)
    return grid


def _or_blank(value: Any) -> Any:
    return "" if value is None else value


def _dump(stored: Stored | None) -> Any:
    if stored is None:
        return ""
    if isinstance(stored, Formula):
        return stored.text
    if isinstance(stored, str) and stored.startswith(("=", "'")):
        return "'" + stored
    return stored


def _load(value: Any) -> Stored | None:
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.startswith("'"):
        return value[1:]
    if isinstance(value, str) and value.startswith("=") and len(value) > 1:
        return Formula(value)
    if isinstance(value, (str, bool, int, float)):
        return value
    raise TypeError(f"unsupported cell value {value!r}")
