"""gspread-dataframe's two functions, with its semantics, for our worksheets.

Reading asks for UNFORMATTED values (or FORMULA text when `evaluate_formulas=False`, the library's
default), pads to the grid, and lets pandas' TextParser infer types: numbers come back as numbers,
empty cells as NaN; all-empty rows and unnamed all-empty columns are dropped. Writing anchors the
frame at (row, col), grows the sheet as needed (or to exactly fit with `resize=True`) and sends
the cells as USER_ENTERED, NaN as an empty cell, text starting with a quote escaped.
Behaviour follows gspread-dataframe 4.0 (MIT licence), re-implemented without its gspread import.
"""

from __future__ import annotations

import re
from itertools import zip_longest
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
from pandas.io.parsers import TextParser

from toolbench.tasks.google_sheets.emulator.cell import Cell, fill_gaps

_UNNAMED = re.compile(r"^Unnamed:\s\d+(?:_level_\d+)?$")


def _all_values(worksheet: Any, evaluate_formulas: bool) -> list[list[Any]]:
    title = "'" + worksheet.title.replace("'", "''") + "'"
    render = "UNFORMATTED_VALUE" if evaluate_formulas else "FORMULA"
    data = worksheet.spreadsheet.values_get(
        title, params={"valueRenderOption": render, "dateTimeRenderOption": "FORMATTED_STRING"}
    )
    # padded to the whole grid, as the library does: numeric columns with empty rows below
    # therefore come back as floats (NaN before the empty rows are dropped)
    return fill_gaps(data.get("values", []), worksheet.row_count, worksheet.col_count)


def get_as_dataframe(
    worksheet: Any,
    evaluate_formulas: bool = False,
    drop_empty_rows: bool = True,
    drop_empty_columns: bool = True,
    **options: Any,
) -> Any:
    """The worksheet as a DataFrame; `options` go to pandas' TextParser (header, usecols, ...)."""
    values = _all_values(worksheet, evaluate_formulas)
    df = TextParser(values, **options).read(options.get("nrows"))
    if isinstance(df, pd.Series):
        if drop_empty_rows:
            df = df.dropna()
        if drop_empty_columns and df.empty and (not df.name or _UNNAMED.search(str(df.name))):
            df = pd.DataFrame()
        return df
    if drop_empty_rows:
        df = df.dropna(how="all", axis=0)
        _rebuild_multi_index(df, "index")
    if drop_empty_columns:
        empty = [
            label for label in df.columns.to_numpy() if _unnamed(label) and df[label].isna().all()
        ]
        if empty:
            df = df.drop(labels=empty, axis=1)
            _rebuild_multi_index(df, "columns")
    return df


def _rebuild_multi_index(df: Any, attr: str) -> None:
    index = getattr(df, attr)
    if isinstance(index, pd.MultiIndex):
        setattr(df, attr, pd.MultiIndex.from_tuples(index.to_numpy()))


def _unnamed(label: Any) -> bool:
    if isinstance(label, str):
        return _UNNAMED.search(label) is not None
    if isinstance(label, np.int64):
        return True
    if isinstance(label, tuple):
        return all(_unnamed(item) for item in label)
    return False


def _escaped(value: str, string_escaping: Any) -> str:
    if value == "":
        return ""
    if string_escaping == "default":
        return "'" + value if value.startswith("'") else value
    if string_escaping == "off":
        return value
    if string_escaping == "full":
        return "'" + value
    if callable(string_escaping):
        return "'" + value if string_escaping(value) else value
    raise ValueError(
        "string_escaping parameter must be one of: "
        "'default', 'off', 'full', any callable taking one parameter"
    )


def _cellrepr(value: Any, allow_formulas: bool, string_escaping: Any) -> Any:
    if pd.isnull(value) is True:
        return ""
    if isinstance(value, Real):
        return value.item() if hasattr(value, "item") else value
    value = value if isinstance(value, str) else str(value)
    if not allow_formulas and value.startswith("="):
        return "'" + value
    return _escaped(value, string_escaping)


def _levels(index: Any) -> int:
    return len(index.levshape) if hasattr(index, "levshape") else 1


def _index_names(index: Any) -> list[Any]:
    names: list[Any] = []
    if hasattr(index, "names"):
        names = ["" if n is None else n for n in index.names]
    elif index.name not in (None, ""):
        names = [index.name]
    return names if any(n not in (None, "") for n in names) else []


def _resize_to_minimum(worksheet: Any, rows: int, cols: int) -> None:
    worksheet.resize(max(rows, worksheet.row_count), max(cols, worksheet.col_count))


def set_with_dataframe(
    worksheet: Any,
    dataframe: Any,
    row: int = 1,
    col: int = 1,
    include_index: bool = False,
    include_column_header: bool = True,
    resize: bool = False,
    allow_formulas: bool = True,
    string_escaping: Any = "default",
) -> None:
    """Write the frame with its upper-left corner at (row, col); cells outside it are untouched."""
    y, x = dataframe.shape
    index_names = _index_names(dataframe.index)
    column_names = _index_names(dataframe.columns)
    index_cols = _levels(dataframe.index) if include_index else 0
    header_rows = _levels(dataframe.columns) if include_column_header else 0
    x += index_cols
    y += header_rows
    if header_rows > 1 and include_index and index_names:
        y += 1
    y, x = y + row - 1, x + col - 1
    if resize:
        worksheet.resize(y, x)
    else:
        _resize_to_minimum(worksheet, y, x)

    updates: list[tuple[int, int, Any]] = []

    def put(r: int, values: list[Any]) -> None:
        for i, value in enumerate(values):
            updates.append((r, col + i, _cellrepr(value, allow_formulas, string_escaping)))

    if include_column_header:
        labels = list(dataframe.columns)
        if header_rows > 1:
            if include_index:
                blank = tuple(column_names) if column_names else ("",) * header_rows
                labels = [blank] + [("",) * header_rows] * (index_cols - 1) + labels
            for level in range(header_rows):
                put(row, [label[level] for label in labels])
                row += 1
            if include_index and index_names:
                put(row, list(index_names) + [""] * len(dataframe.columns))
                row += 1
        else:
            if include_index:
                labels = (index_names or [""] * index_cols) + labels
            put(row, labels)
            row += 1
    for i, (values, index_value) in enumerate(
        zip_longest(dataframe.to_numpy("object"), dataframe.index.to_numpy("object"))
    ):
        line = list(values)
        if include_index:
            index_list = (
                list(index_value) if isinstance(index_value, (list, tuple)) else [index_value]
            )
            line = index_list + line
        put(row + i, line)
    if updates:
        cells = [Cell(r, c, v) for r, c, v in updates]
        worksheet.update_cells(cells, value_input_option="USER_ENTERED")
