"""`Workbook`: the spreadsheet as the calls it hands its work to see it (`rest`'s REST-shaped
calls and `storage`'s JSON forms): its identity and its worksheets.

A protocol rather than an import: spreadsheet.py imports those modules to delegate to them, so
they must not import spreadsheet.py back (no import cycle); `Spreadsheet` is the one
implementation, checked where it passes itself in.
"""

from __future__ import annotations

from typing import Any, Protocol

from toolbench.tasks.google_sheets.emulator.worksheet import Worksheet


class Workbook(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def url(self) -> str: ...

    def worksheets(self, exclude_hidden: bool = False) -> list[Worksheet]: ...

    def get_worksheet(self, index: int) -> Worksheet: ...

    def get_worksheet_by_id(self, id: int | str) -> Worksheet: ...

    def add_worksheet(
        self, title: str, rows: int, cols: int, index: int | None = None
    ) -> Worksheet: ...

    def del_worksheet_by_id(self, worksheet_id: int | str) -> dict[str, Any]: ...
