"""A stand-in for Google's servers in --live tests: gspread-shaped clients over the emulator.

``$TOOLBENCH_SHEETS_CLIENT`` points the live plumbing at ``client``. Spreadsheets persist as JSON
files in the folder named by the "credentials" file, because the harness (which creates and
uploads the scratch spreadsheet) and the sandbox workers (which open it) are different processes,
as they are against the real service. Each call that changes a spreadsheet in the harness saves
it; workers only read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolbench.tasks.google_sheets.emulator import Spreadsheet, Worksheet
from toolbench.tasks.google_sheets.emulator.a1 import rowcol_to_a1


class GridSpreadsheet(Spreadsheet):
    """The emulator plus the one read the live state needs: includeGridData metadata."""

    def fetch_sheet_metadata(self, params: Any = None) -> dict[str, Any]:
        meta = super().fetch_sheet_metadata(params)
        if not params or not params.get("includeGridData"):
            return meta
        title = params["ranges"].strip("'").replace("''", "'")
        ws = self.worksheet(title)
        stored = self.to_dict()["sheets"][self.worksheets().index(ws)]
        rows = []
        for r, row in enumerate(stored["cells"], start=1):
            values = []
            for c, value in enumerate(row, start=1):
                cell: dict[str, Any] = {}
                fmt = stored["formats"].get(rowcol_to_a1(r, c))
                if fmt:
                    cell["userEnteredFormat"] = fmt
                if isinstance(value, str) and value.startswith("="):
                    cell["userEnteredValue"] = {"formulaValue": value}
                values.append(cell)
            rows.append({"values": values})
        sheet = next(s for s in meta["sheets"] if s["properties"]["title"] == title)
        return {"sheets": [{"data": [{"rowData": rows}], "merges": sheet.get("merges", [])}]}


class _Saving:
    """Proxy saving the whole spreadsheet after every call made through it (harness side)."""

    def __init__(self, target: Any, client: FakeClient, book: Spreadsheet) -> None:
        self._target, self._client, self._book = target, client, book

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if isinstance(value, Worksheet):
            return _Saving(value, self._client, self._book)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple(a._target if isinstance(a, _Saving) else a for a in args)
            result = value(*args, **kwargs)
            self._client.save(self._book)
            if isinstance(result, Worksheet):
                return _Saving(result, self._client, self._book)
            return result

        return call


class FakeClient:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def save(self, book: Spreadsheet) -> None:
        self._path(book.id).write_text(json.dumps(book.to_dict()), encoding="utf-8")

    def create(self, title: str) -> Any:
        key = f"fake{len(list(self.folder.glob('*.json')))}"
        book = GridSpreadsheet(title, key)
        self.save(book)
        return _Saving(book, self, book)

    def open_by_key(self, key: str) -> Spreadsheet:
        data = json.loads(self._path(key).read_text(encoding="utf-8"))
        return GridSpreadsheet.from_dict(data)

    def del_spreadsheet(self, key: str) -> None:
        self._path(key).unlink()


def client(credentials: str) -> FakeClient:
    """The client factory: the 'credentials' file names the folder standing in for Drive."""
    return FakeClient(Path(json.loads(Path(credentials).read_text())["fake_drive"]))
