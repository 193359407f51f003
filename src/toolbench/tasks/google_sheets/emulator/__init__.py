"""An in-memory Google Sheets that behaves like gspread 6's objects, with formulas evaluated.

Programs written for gspread/gspread-dataframe run against `Spreadsheet`/`Worksheet` unchanged;
`Spreadsheet.snapshot()` is what a scorer compares and `Spreadsheet.clone()` gives each program a
fresh copy of a question sheet. Importing this package is cheap; the `formulas` library loads on
the first formula (call `warm_up()` to pay that ~1 s up front).
"""

from toolbench.tasks.google_sheets.emulator import errors as exceptions
from toolbench.tasks.google_sheets.emulator.a1 import (
    GridRange,
    a1_to_rowcol,
    column_to_letters,
    parse_range,
    rowcol_to_a1,
)
from toolbench.tasks.google_sheets.emulator.cell import Cell, ValueRange, numericise
from toolbench.tasks.google_sheets.emulator.errors import (
    APIError,
    GSpreadException,
    IncorrectCellLabel,
    InvalidInputValue,
    InvalidJSONError,
    SpreadsheetNotFound,
    WorksheetNotFound,
)
from toolbench.tasks.google_sheets.emulator.formula import warm_up
from toolbench.tasks.google_sheets.emulator.frames import get_as_dataframe, set_with_dataframe
from toolbench.tasks.google_sheets.emulator.spreadsheet import Spreadsheet
from toolbench.tasks.google_sheets.emulator.worksheet import Worksheet

__all__ = [
    "APIError",
    "Cell",
    "GSpreadException",
    "GridRange",
    "IncorrectCellLabel",
    "InvalidInputValue",
    "InvalidJSONError",
    "Spreadsheet",
    "SpreadsheetNotFound",
    "ValueRange",
    "Worksheet",
    "WorksheetNotFound",
    "a1_to_rowcol",
    "column_to_letters",
    "exceptions",
    "get_as_dataframe",
    "numericise",
    "parse_range",
    "rowcol_to_a1",
    "set_with_dataframe",
    "warm_up",
]
