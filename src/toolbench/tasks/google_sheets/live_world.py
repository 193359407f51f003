"""Worker side of ``--live``: each program gets a fresh copy of its question sheet in a real
Google spreadsheet (the run's scratch spreadsheet, see ``live.py``), drives it through the real
``gspread`` and ``gspread_dataframe``, and the copy is read back and deleted afterwards.

The copy is made with the Sheets API's duplicateSheet, so values, formulas and formats come
along, and cross-sheet formulas resolve against the workbook's other sheets uploaded beside it.
"""

from __future__ import annotations

import importlib
import itertools
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from toolbench.sandbox.world import World
from toolbench.tasks.google_sheets import world as offline

DETERMINISTIC = False  # a live service: the execution memo must never remember these runs
SANDBOX_NETWORK = True  # programs drive the real API: their workers keep the host's network
COPY_PREFIX = "tb-copy-"

_clients: dict[tuple[str, str], Any] = {}
_counter = itertools.count()


def load_client_factory(ref: str) -> Callable[[str], Any]:
    """'module:function' -> the function that builds a gspread Client from a credentials path."""
    module, _, name = ref.partition(":")
    factory: Callable[[str], Any] = getattr(importlib.import_module(module), name)
    return factory


def _client(client_ref: str, credentials: str) -> Any:
    key = (client_ref, credentials)
    if key not in _clients:
        _clients[key] = load_client_factory(client_ref)(credentials)
    return _clients[key]


def _sweep(book: Any, mine: str) -> None:
    """Delete copies this worker left behind when an earlier program failed."""
    for ws in book.worksheets():
        if ws.title.startswith(mine):
            book.del_worksheet(ws)


def make_live_world(
    client_ref: str, credentials: str, scratch_key: str, sheet_title: str, check_format: bool
) -> World:
    # deferred: the optional extra toolbench[sheets] (--live)
    from gspread_dataframe import get_as_dataframe, set_with_dataframe

    book = _client(client_ref, credentials).open_by_key(scratch_key)
    mine = f"{COPY_PREFIX}{os.getpid()}-"
    _sweep(book, mine)
    source = book.worksheet(sheet_title)
    copy = book.duplicate_sheet(source.id, new_sheet_name=f"{mine}{next(_counter)}")

    def snapshot() -> dict[str, Any]:
        try:
            state = offline.frame_state(get_as_dataframe(copy, evaluate_formulas=True))
            if check_format:
                state.update(presentation(copy))
            return state
        finally:
            book.del_worksheet(copy)

    return World(
        namespace={
            "worksheet": copy,
            "sheet": book,
            "get_as_dataframe": get_as_dataframe,
            "set_with_dataframe": set_with_dataframe,
            "pd": pd,
            "np": np,
        },
        snapshot=snapshot,
        allowed_modules=offline.ALLOWED_MODULES,
        writable_types=offline.writable_types(),
        network=True,
    )


def presentation(worksheet: Any) -> dict[str, Any]:
    """Formats, merges and formulas of a live sheet, in the shape ``world.sheet_state`` uses."""
    # deferred: gspread is the optional extra toolbench[sheets] (--live)
    from gspread.utils import rowcol_to_a1

    quoted = "'" + worksheet.title.replace("'", "''") + "'"
    meta = worksheet.spreadsheet.fetch_sheet_metadata(
        params={
            "includeGridData": "true",
            "ranges": quoted,
            "fields": "sheets(data(rowData(values(userEnteredFormat,userEnteredValue))),merges)",
        }
    )
    sheet = meta["sheets"][0]
    formats: dict[str, Any] = {}
    formulas: dict[str, str] = {}
    for data in sheet.get("data", []):
        for r, row in enumerate(data.get("rowData", []), start=1):
            for c, cell in enumerate(row.get("values", []), start=1):
                if cell.get("userEnteredFormat"):
                    formats[rowcol_to_a1(r, c)] = offline.canonical_format(
                        cell["userEnteredFormat"]
                    )
                formula = cell.get("userEnteredValue", {}).get("formulaValue")
                if formula:
                    formulas[rowcol_to_a1(r, c)] = offline.canonical_formula(formula)
    merges = [
        f"{rowcol_to_a1(m['startRowIndex'] + 1, m['startColumnIndex'] + 1)}:"
        f"{rowcol_to_a1(m['endRowIndex'], m['endColumnIndex'])}"
        for m in sheet.get("merges", [])
    ]
    return {"formats": formats, "merges": merges, "formulas": formulas}


def prepare_sandbox_worker() -> None:
    import gspread_dataframe  # noqa: F401  (imported now, outside the programs' time limits)

    offline.prepare_sandbox_worker()
