"""Cell formats and merges: what `format`/`batch_format` and `merge_cells` change, kept per cell
so a scorer can compare them (gspread itself cannot read formats back)."""

from __future__ import annotations

import builtins
import copy
from typing import Any

from toolbench.tasks.google_sheets.emulator.base import Box
from toolbench.tasks.google_sheets.emulator.errors import bad_request
from toolbench.tasks.google_sheets.emulator.writing import WritingMixin


def span(lo: int, hi: int) -> builtins.range:
    """lo..hi inclusive (`sort` shadows the builtin with its `range` argument)."""
    return builtins.range(lo, hi + 1)


class FormattingMixin(WritingMixin):
    def _format_box(self, name: str) -> Box:
        rng = self._parse(name)
        r1, c1, r2, c2 = rng.bounded(self._grid.rows, self._grid.cols)
        if r2 > self._grid.rows or c2 > self._grid.cols:
            raise self._beyond_grid(rng)
        return r1, c1, r2, c2

    def batch_format(self, formats: list[dict[str, Any]]) -> dict[str, Any]:
        """Each {'range', 'format'}: the format's top-level fields replace the cells' ones
        (gspread sends fields='userEnteredFormat(<those keys>)')."""
        planned = [
            (self._format_box(f["range"]), copy.deepcopy(f["format"]), list(f["format"].keys()))
            for f in formats
        ]  # copied: the caller may reuse and change its dict; the API saw this one
        for (r1, c1, r2, c2), fmt, _ in planned:
            for r in span(r1, r2):
                for c in span(c1, c2):
                    merged = {**self._grid.formats.get((r, c), {}), **fmt}
                    self._grid.formats[(r, c)] = {k: v for k, v in merged.items() if v is not None}
        return {"spreadsheetId": self._book.id, "replies": [{} for _ in planned]}

    def format(self, ranges: str | list[str], format: dict[str, Any]) -> dict[str, Any]:
        return self.batch_format(
            [
                {"range": r, "format": format}
                for r in (ranges if isinstance(ranges, list) else [ranges])
            ]
        )

    def merge_cells(self, name: str, merge_type: str = "MERGE_ALL") -> dict[str, Any]:
        """Merge a range; only the top-left value of each merged block survives."""
        r1, c1, r2, c2 = self._format_box(name)
        kind = getattr(merge_type, "value", merge_type)
        if kind == "MERGE_ALL":
            blocks = [(r1, c1, r2, c2)]
        elif kind == "MERGE_COLUMNS":
            blocks = [(r1, c, r2, c) for c in span(c1, c2)]
        elif kind == "MERGE_ROWS":
            blocks = [(r, c1, r, c2) for r in span(r1, r2)]
        else:
            raise bad_request(f"Invalid value at 'requests[0].merge_cells.merge_type', {kind!r}")
        for m in self._grid.merges:
            if not (m[2] < r1 or m[0] > r2 or m[3] < c1 or m[1] > c2):
                raise bad_request(
                    "Invalid requests[0].mergeCells: You can't merge cells that are already "
                    "partially merged."
                )
        for b in blocks:
            if (b[2] - b[0] + 1) * (b[3] - b[1] + 1) < 2:
                continue
            self._grid.merges.append(b)
            for r in span(b[0], b[2]):
                for c in span(b[1], b[3]):
                    if (r, c) != (b[0], b[1]) and (r, c) in self._grid.cells:
                        self._changed(r, c, self._grid.put(r, c, None), None)
        return {"spreadsheetId": self._book.id, "replies": [{}]}

    def unmerge_cells(self, name: str) -> dict[str, Any]:
        r1, c1, r2, c2 = self._format_box(name)
        self._grid.merges = [
            m for m in self._grid.merges if m[2] < r1 or m[0] > r2 or m[3] < c1 or m[1] > c2
        ]
        return {"spreadsheetId": self._book.id, "replies": [{}]}
