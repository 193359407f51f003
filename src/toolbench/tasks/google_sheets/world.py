"""The google_sheets sandbox world: a fresh copy of the workbook with the question's sheet open.

A program sees what the original ToolBench evaluator gave it: ``worksheet`` (the question's
sheet), ``sheet`` (its spreadsheet), gspread-dataframe's ``get_as_dataframe`` and
``set_with_dataframe``, ``pd`` and ``np``. Unlike the original, the worksheet is the question
sheet itself, formulas and formats included, inside its whole workbook (so cross-sheet formulas
work), not a values-only copy.

The state a scorer compares is the question sheet read the way the original read it:
``get_as_dataframe(worksheet, evaluate_formulas=True)`` with all-empty rows and columns dropped,
as JSON (column labels, row labels, dtypes, values). When a sample checks formats, the sheet's
presentation counts too: every cell format, merge, and which cells hold formulas (and which
formulas), so a typed-in literal does not pass for the formula that computes it.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

import numpy as np
import pandas as pd

from toolbench.sandbox import files as sandbox_files_module
from toolbench.sandbox.world import World
from toolbench.tasks.google_sheets.disarm import disarm
from toolbench.tasks.google_sheets.emulator import (
    Cell,
    Spreadsheet,
    Worksheet,
    get_as_dataframe,
    set_with_dataframe,
    warm_up,
)
from toolbench.tasks.google_sheets.emulator.a1 import rowcol_to_a1
from toolbench.tasks.google_sheets.emulator.values import Formula

ALLOWED_MODULES = frozenset({"pandas", "numpy"})

_books: dict[tuple[str, str], Spreadsheet] = {}  # (path, content digest) -> parsed workbook


def load_workbook(path: str, digest: str) -> Spreadsheet:
    """The workbook stored at ``path`` (``Spreadsheet.to_dict`` JSON), parsed once per process.

    ``digest`` is the caller's hash of the file: part of the cache key here and, through the
    factory's arguments, of the execution memo's key, so an edited workbook is never mixed up
    with the one results were computed on."""
    key = (path, digest)
    book = _books.get(key)
    if book is None:
        data = json.loads(sandbox_files_module.read_text(path))
        book = _books[key] = Spreadsheet.from_dict(data)
    return book


@functools.cache
def writable_types() -> frozenset[type]:
    """DataFrame, Series, their indexers, ndarray and Cell (computed once per process)."""
    frame = pd.DataFrame({"a": [1]})
    series = frame["a"]
    holders: list[Any] = [frame, series, np.zeros(1), Cell(1, 1)]
    for obj in (frame, series):
        holders += [obj.loc, obj.iloc, obj.at, obj.iat]
    return frozenset(type(h) for h in holders)


def sandbox_files(workbook_path: str, *args: Any, **kwargs: Any) -> list[str]:
    """The workbook is the one file a world reads; the sandbox hands it to its workers."""
    return [workbook_path]


def prime_sandbox_worker(workbook_path: str, digest: str, *args: Any, **kwargs: Any) -> None:
    """Warm-up in the worker's template, paid once per workbook instead of per program.

    Parses the workbook, then evaluates every sheet of a copy, so that the formula caches
    (compiled formulas, reference templates, the formula library's lazy state) live in the
    template; a forked program process inherits them instead of compiling every formula again.
    """
    book = load_workbook(workbook_path, digest)
    warm = book.clone()
    for worksheet in warm.worksheets():
        sheet_state(worksheet, check_format=False)


def make_world(
    workbook_path: str, digest: str, sheet_title: str, check_format: bool = False
) -> World:
    book = load_workbook(workbook_path, digest).clone()
    worksheet = book.worksheet(sheet_title)
    return World(
        namespace={
            "worksheet": worksheet,
            "sheet": book,
            "get_as_dataframe": get_as_dataframe,
            "set_with_dataframe": set_with_dataframe,
            "pd": pd,
            "np": np,
        },
        snapshot=lambda: sheet_state(worksheet, check_format),
        allowed_modules=ALLOWED_MODULES,
        writable_types=writable_types(),
    )


def _plain(value: Any) -> Any:
    """A dataframe value as exact JSON: numpy scalars unwrapped, NaN as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def frame_state(frame: Any) -> dict[str, Any]:
    """A sheet's dataframe as the original compared it (all-empty rows and columns dropped,
    row labels and dtypes kept, as DataFrame.equals does), in exact JSON."""
    frame = frame.dropna(how="all", axis=0).dropna(how="all", axis=1)
    return {
        "columns": [_plain(label) for label in frame.columns],
        "index": [_plain(label) for label in frame.index],
        "dtypes": [str(dtype) for dtype in frame.dtypes],
        "rows": [[_plain(value) for value in row] for row in frame.itertuples(index=False)],
    }


def sheet_state(worksheet: Worksheet, check_format: bool) -> dict[str, Any]:
    """What scoring compares: the sheet as the original evaluator's dataframe (+ formats)."""
    state = frame_state(get_as_dataframe(worksheet, evaluate_formulas=True))
    if check_format:
        state["formats"] = {a1: canonical_format(f) for a1, f in worksheet.formats.items()}
        state["merges"] = worksheet.merged_ranges
        state["formulas"] = {
            rowcol_to_a1(row, col): canonical_formula(stored.text)
            for (row, col), stored in sorted(worksheet._grid.cells.items())
            if isinstance(stored, Formula)
        }
    return state


_CHANNELS = ("red", "green", "blue")


def canonical_format(value: Any) -> Any:
    """A cell format as Sheets reads it back: colours with every channel (a missing channel is
    0, so {"red": 1} is {"red": 1, "green": 0, "blue": 0}) and an opaque alpha dropped."""
    if not isinstance(value, dict):
        return value
    if value and set(value) <= {*_CHANNELS, "alpha"}:
        colour = {channel: float(value.get(channel, 0)) for channel in _CHANNELS}
        if float(value.get("alpha", 1)) != 1:
            colour["alpha"] = float(value["alpha"])
        return colour
    return {key: canonical_format(item) for key, item in value.items()}


_QUOTED = re.compile(r"(\"[^\"]*\"|'[^']*')")


def canonical_formula(text: str) -> str:
    """A formula as Sheets stores it: function names and references upper-cased (Sheets turns
    '=sum(b2:b5)' into '=SUM(B2:B5)'), text in quotes and quoted sheet names kept as typed."""
    parts = _QUOTED.split(text)
    return "".join(part if i % 2 else part.upper() for i, part in enumerate(parts))


def prepare_sandbox_worker() -> None:
    """Run once per worker before any program: compile the formula engine, exercise the
    dataframe round trip so pandas' lazy imports happen now, then disarm library I/O."""
    warm_up()
    book = Spreadsheet()
    ws = book.sheet1
    ws.update([["name", "n"], ["a", 1], ["b", "=B2*2"]], "A1", raw=False)
    frame = get_as_dataframe(ws, evaluate_formulas=True).dropna(how="all")
    frame.sort_values("n").to_string()
    frame.describe()
    frame.groupby("name").sum()
    set_with_dataframe(ws, frame, include_index=False, include_column_header=True)
    sheet_state(ws, True)
    # numpy caches helpers its C code imports on first use (dtype and array printing)
    str(np.arange(3.0)), repr(np.dtype("float64")), str(frame), repr(frame["n"])
    disarm()
