"""`Spreadsheet`: gspread 6's Spreadsheet over in-memory worksheets, plus what a task needs around
it: `clone()` (a fresh copy of a question sheet per program, cheap), `snapshot()` (plain JSON a
scorer compares) and `to_dict()`/`from_dict()` (lossless storage, formulas included)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from toolbench.tasks.google_sheets.emulator import rest, storage
from toolbench.tasks.google_sheets.emulator.base import WorksheetBase
from toolbench.tasks.google_sheets.emulator.engine import Engine
from toolbench.tasks.google_sheets.emulator.errors import WorksheetNotFound, bad_request
from toolbench.tasks.google_sheets.emulator.grid import Grid
from toolbench.tasks.google_sheets.emulator.refs import rename_sheet_in_formula, shift_formula
from toolbench.tasks.google_sheets.emulator.values import Formula
from toolbench.tasks.google_sheets.emulator.worksheet import Worksheet

DEFAULT_ID = "1EmUlAtEdSpReAdShEeTiD0000000000000000000000"


class Spreadsheet:
    """A spreadsheet of worksheets. `strict_types=False` accepts numpy/pandas scalars in writes
    (real gspread fails to JSON-encode them)."""

    def __init__(
        self,
        title: str = "Untitled spreadsheet",
        id: str = DEFAULT_ID,
        *,
        sheet_title: str | None = "Sheet1",
        rows: int = 1000,
        cols: int = 26,
        strict_types: bool = True,
    ) -> None:
        self._id, self._title, self.strict_types = id, title, strict_types
        self._worksheets: list[Worksheet] = []
        self._engine = Engine()
        self._sheet_counter = 0
        if sheet_title is not None:
            self._worksheets.append(Worksheet(self, 0, sheet_title, Grid(rows, cols)))

    # ---- gspread's Spreadsheet --------------------------------------------------------------

    @property
    def id(self) -> str:
        return self._id

    @property
    def title(self) -> str:
        return self._title

    @property
    def url(self) -> str:
        return f"https://docs.google.com/spreadsheets/d/{self._id}"

    @property
    def locale(self) -> str:
        return "en_US"

    @property
    def timezone(self) -> str:
        return "Etc/GMT"

    @property
    def sheet1(self) -> Worksheet:
        return self.get_worksheet(0)

    def __iter__(self) -> Iterator[Worksheet]:
        return iter(list(self._worksheets))

    def __repr__(self) -> str:
        return f"<Spreadsheet {self._title!r} id:{self._id}>"

    def worksheets(self, exclude_hidden: bool = False) -> list[Worksheet]:
        return list(self._worksheets)

    def worksheet(self, title: str) -> Worksheet:
        for ws in self._worksheets:
            if ws.title == title:
                return ws
        raise WorksheetNotFound(title)

    def get_worksheet(self, index: int) -> Worksheet:
        try:
            return self._worksheets[index]
        except IndexError:
            raise WorksheetNotFound(f"index {index} not found") from None

    def get_worksheet_by_id(self, id: int | str) -> Worksheet:
        try:
            wanted = int(id)
        except ValueError as ex:
            raise ValueError("id should be int") from ex
        for ws in self._worksheets:
            if ws.id == wanted:
                return ws
        raise WorksheetNotFound(f"id {wanted} not found")

    def add_worksheet(
        self, title: str, rows: int, cols: int, index: int | None = None
    ) -> Worksheet:
        self._check_title(str(title), "addSheet")
        if not isinstance(rows, int) or not isinstance(cols, int) or rows < 1 or cols < 1:
            raise bad_request(
                "Invalid requests[0].addSheet: Invalid grid size: rows and columns must be "
                f"positive (got {rows!r} x {cols!r})"
            )
        ws = Worksheet(self, self._new_sheet_id(), str(title), Grid(rows, cols))
        self._worksheets.insert(len(self._worksheets) if index is None else index, ws)
        self._engine.invalidate()
        return ws

    def duplicate_sheet(
        self,
        source_sheet_id: int,
        insert_sheet_index: int | None = None,
        new_sheet_id: int | None = None,
        new_sheet_name: str | None = None,
    ) -> Worksheet:
        source = self.get_worksheet_by_id(source_sheet_id)
        name = new_sheet_name or f"Copy of {source.title}"
        self._check_title(name, "duplicateSheet")
        ws = Worksheet(self, new_sheet_id or self._new_sheet_id(), name, source._grid.copy())
        self._worksheets.insert(
            len(self._worksheets) if insert_sheet_index is None else insert_sheet_index, ws
        )
        self._engine.invalidate()
        return ws

    def del_worksheet(self, worksheet: Worksheet) -> dict[str, Any]:
        if worksheet not in self._worksheets:
            raise bad_request(f"Invalid requests[0].deleteSheet: No sheet with id: {worksheet.id}")
        if len(self._worksheets) == 1:
            raise bad_request(
                "Invalid requests[0].deleteSheet: You can't remove all the sheets in a document."
            )
        self._worksheets.remove(worksheet)
        self._rewrite_formulas(
            lambda text, own: rename_sheet_in_formula(text, worksheet.title, None)
        )
        return {"spreadsheetId": self._id, "replies": [{}]}

    def del_worksheet_by_id(self, worksheet_id: int | str) -> dict[str, Any]:
        return self.del_worksheet(self.get_worksheet_by_id(worksheet_id))

    def reorder_worksheets(self, worksheets_in_desired_order: list[Worksheet]) -> dict[str, Any]:
        wanted = [ws for ws in worksheets_in_desired_order if ws in self._worksheets]
        self._worksheets = wanted + [ws for ws in self._worksheets if ws not in wanted]
        return {"spreadsheetId": self._id, "replies": [{}]}

    def update_title(self, title: str) -> dict[str, Any]:
        self._title = str(title)
        return {"spreadsheetId": self._id, "replies": [{}]}

    def fetch_sheet_metadata(self, params: Any = None) -> dict[str, Any]:
        return rest.metadata(self)

    def values_get(self, range: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return rest.values_get(self, range, params or {})

    def values_batch_get(self, ranges: list[str], params: dict[str, Any] | None = None) -> Any:
        return {
            "spreadsheetId": self._id,
            "valueRanges": [rest.values_get(self, r, params or {}) for r in ranges],
        }

    def values_update(
        self, range: str, params: dict[str, Any] | None = None, body: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        return rest.values_update(self, range, params or {}, body or {})

    def values_append(self, range: str, params: dict[str, Any], body: dict[str, Any]) -> Any:
        return rest.values_append(self, range, params or {}, body or {})

    def values_clear(self, range: str) -> dict[str, Any]:
        return rest.values_clear(self, range)

    def values_batch_clear(self, params: Any = None, body: dict[str, Any] | None = None) -> Any:
        return {
            "spreadsheetId": self._id,
            "clearedRanges": [
                rest.values_clear(self, r)["clearedRange"] for r in (body or {}).get("ranges", [])
            ],
        }

    def batch_update(self, body: dict[str, Any]) -> dict[str, Any]:
        return rest.batch_update(self, body)

    # ---- task helpers -----------------------------------------------------------------------

    def clone(self) -> Spreadsheet:
        """An independent copy: shallow dict copies per sheet, the recalculation plan shared."""
        twin = Spreadsheet.__new__(Spreadsheet)
        twin._id, twin._title, twin.strict_types = self._id, self._title, self.strict_types
        twin._engine, twin._sheet_counter = self._engine.clone(), self._sheet_counter
        twin._worksheets = [
            Worksheet(twin, ws._id, ws._title, ws._grid.copy()) for ws in self._worksheets
        ]
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> Spreadsheet:
        twin = self.clone()
        memo[id(self)] = twin
        return twin

    def snapshot(self, value_render_option: str = "UNFORMATTED_VALUE") -> dict[str, Any]:
        """Every sheet's evaluated values (trailing empty rows/columns trimmed), its cells'
        formats and merges: plain JSON, equal for programs that reach the same sheet."""
        self._recalc()
        return storage.snapshot(self, value_render_option)

    def to_dict(self) -> dict[str, Any]:
        """Lossless: typed values, formulas as '=...' text, text starting with = or ' escaped."""
        return storage.to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], strict_types: bool = True) -> Spreadsheet:
        book = cls(
            data.get("title", "Untitled spreadsheet"),
            data.get("id", DEFAULT_ID),
            sheet_title=None,
            strict_types=strict_types,
        )
        for i, sheet in enumerate(data["sheets"]):
            sid = sheet.get("id", 0 if i == 0 else book._new_sheet_id())
            book._worksheets.append(Worksheet(book, sid, sheet["title"], storage.load_grid(sheet)))
        return book

    # ---- internals used by Worksheet ---------------------------------------------------------

    def _new_sheet_id(self) -> int:
        while True:
            self._sheet_counter += 1
            digest = hashlib.sha256(f"{self._id}:{self._sheet_counter}".encode()).digest()
            sid = int.from_bytes(digest[:4], "big") & 0x7FFFFFFF
            if all(ws.id != sid for ws in self._worksheets):
                return sid

    def _check_title(self, title: str, request: str, ignore: WorksheetBase | None = None) -> None:
        if not title:
            raise bad_request(f"Invalid requests[0].{request}: Sheet name cannot be empty.")
        for ws in self._worksheets:
            if ws is not ignore and ws.title.casefold() == title.casefold():
                raise bad_request(
                    f'Invalid requests[0].{request}: A sheet with the name "{title}" already '
                    "exists. Please enter another name."
                )

    def _check_alive(self, ws: WorksheetBase) -> None:
        if not any(ws is mine for mine in self._worksheets):
            raise bad_request(f"Unable to parse range: {ws._qualified('A1')}")

    def _index_of(self, ws: WorksheetBase) -> int:
        return next(i for i, mine in enumerate(self._worksheets) if mine is ws)

    def _recalc(self, sheet_id: int | None = None) -> None:
        """Bring formulas up to date before a read: of one sheet, or of all when None."""
        if self._engine.dirty:
            sheets = {ws._id: (ws._title, ws._grid) for ws in self._worksheets}
            self._engine.recalc(sheets, sheet_id)

    def _rewrite_formulas(self, func: Any) -> None:
        for ws in self._worksheets:
            cells = ws._grid.cells
            for key, stored in list(cells.items()):
                if isinstance(stored, Formula):
                    text = func(stored.text, ws._title)
                    if text != stored.text:
                        cells[key] = Formula(text)
        self._engine.invalidate()

    def _shift(self, ws: WorksheetBase, axis: str, at: int, n: int) -> None:
        """Insert (n>0) or delete rows/columns of `ws`; every formula's references follow."""
        ws._grid.shift(axis, at, n)
        title = ws._title
        self._rewrite_formulas(lambda text, own: shift_formula(text, own, title, axis, at, n))

    def _rename(self, ws: WorksheetBase, title: str) -> None:
        self._check_alive(ws)
        self._check_title(str(title), "updateSheetProperties", ignore=ws)
        old = ws._title
        ws._title = str(title)
        self._rewrite_formulas(lambda text, own: rename_sheet_in_formula(text, old, str(title)))

    def _move(self, ws: WorksheetBase, index: int) -> None:
        self._check_alive(ws)
        self._worksheets.insert(index, self._worksheets.pop(self._index_of(ws)))
