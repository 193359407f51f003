"""`Worksheet`: gspread 6's Worksheet over an in-memory grid.

Presentation-only calls (auto-resize, filters, tab colours, gridlines) succeed and change nothing
a scorer compares, so a program that tidies its sheet is not failed for it.
"""

from __future__ import annotations

from typing import Any

from toolbench.tasks.google_sheets.emulator.structure import StructureMixin


class Worksheet(StructureMixin):
    def _noop(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self._book._check_alive(self)
        return {"spreadsheetId": self._book.id, "replies": [{}]}

    columns_auto_resize = _noop
    rows_auto_resize = _noop
    set_basic_filter = _noop
    clear_basic_filter = _noop
    update_tab_color = _noop
    clear_tab_color = _noop
    hide_gridlines = _noop
    show_gridlines = _noop
    hide_columns = _noop
    hide_rows = _noop
    unhide_columns = _noop
    unhide_rows = _noop

    @property
    def isSheetHidden(self) -> bool:
        return False

    @property
    def tab_color(self) -> str | None:
        return None

    def __copy__(self) -> Worksheet:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Worksheet:
        """Copying a worksheet copies its spreadsheet (a worksheet is a view of it)."""
        twin = self._book.__deepcopy__(memo).get_worksheet_by_id(self._id)
        assert isinstance(twin, Worksheet)  # a Spreadsheet holds Worksheets only
        return twin
