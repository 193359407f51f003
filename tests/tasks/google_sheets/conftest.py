"""A small product sheet (the shape ToolBench's google_sheets questions use) and helpers."""

from __future__ import annotations

import pytest

from toolbench.tasks.google_sheets.emulator import Spreadsheet, Worksheet, warm_up

ROWS = [
    ["Product", "Qty", "Price", "Category"],
    ["apple", 10, 1.5, "fruit"],
    ["banana", 3, 0.25, "fruit"],
    ["cherry", 7, 4, "berry"],
    ["date", 0, 2, "fruit"],
    ["elder", 12, 1, "berry"],
]


@pytest.fixture(scope="session", autouse=True)
def _formulas_loaded() -> None:
    warm_up()  # the library's function tables load once, not inside a timed test


@pytest.fixture
def book() -> Spreadsheet:
    sh = Spreadsheet("Shop")
    sh.sheet1.update(ROWS, "A1")
    return sh


@pytest.fixture
def ws(book: Spreadsheet) -> Worksheet:
    return book.sheet1


def formula_value(ws: Worksheet, formula: str, cell: str = "H1") -> object:
    """Write a formula (USER_ENTERED) and read its value back unformatted."""
    ws.update([[formula]], cell, raw=False)
    return ws.acell(cell, value_render_option="UNFORMATTED_VALUE").value
