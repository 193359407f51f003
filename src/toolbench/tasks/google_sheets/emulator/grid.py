"""One worksheet's storage: sparse cells, formulas' computed values, formats, merges, grid size.

Dicts keyed by (row, col), 1-based. Stored values and format dicts are never mutated in place (a
write replaces them), so `copy()` is a handful of shallow dict copies: cloning a question sheet for
each program run costs microseconds per hundred cells.
"""

from __future__ import annotations

from typing import Any

from toolbench.tasks.google_sheets.emulator.values import Formula, Stored

Key = tuple[int, int]


class Grid:
    __slots__ = (
        "cells",
        "cols",
        "computed",
        "formats",
        "frozen_cols",
        "frozen_rows",
        "merges",
        "rows",
    )

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.cells: dict[Key, Stored] = {}
        self.computed: dict[Key, Any] = {}  # formula cells' current results
        self.formats: dict[Key, dict[str, Any]] = {}  # userEnteredFormat per cell
        self.merges: list[tuple[int, int, int, int]] = []  # (r1, c1, r2, c2), inclusive
        self.frozen_rows = self.frozen_cols = 0

    def copy(self) -> Grid:
        new = Grid(self.rows, self.cols)
        new.cells, new.computed = self.cells.copy(), self.computed.copy()
        new.formats, new.merges = self.formats.copy(), list(self.merges)
        new.frozen_rows, new.frozen_cols = self.frozen_rows, self.frozen_cols
        return new

    def value(self, row: int, col: int) -> Any:
        """The evaluated value (None when empty)."""
        stored = self.cells.get((row, col))
        if isinstance(stored, Formula):
            return self.computed.get((row, col))
        return stored

    def put(self, row: int, col: int, stored: Stored | None) -> Stored | None:
        """Store (None clears); returns the previous stored value."""
        old = self.cells.pop((row, col), None)
        self.computed.pop((row, col), None)
        if stored is not None:
            self.cells[(row, col)] = stored
        return old

    def extent(self) -> tuple[int, int]:
        """(last row, last column) holding a non-empty value; (0, 0) for an empty sheet."""
        rows = cols = 0
        for (r, c), stored in self.cells.items():
            if isinstance(stored, Formula):
                value = self.computed.get((r, c))
                if value is None or value == "":
                    continue
            rows, cols = max(rows, r), max(cols, c)
        return rows, cols

    # ---- structure ---------------------------------------------------------------------------

    def shift(self, axis: str, at: int, n: int) -> None:
        """Insert n>0 rows/columns before `at`, or delete -n of them starting at `at`."""
        idx = 0 if axis == "row" else 1

        def moved(key: Key) -> Key | None:
            pos = key[idx]
            if pos < at:
                return key
            if n < 0 and pos < at - n:
                return None
            new = list(key)
            new[idx] = pos + n
            return (new[0], new[1])

        for name in ("cells", "computed", "formats"):
            old: dict[Key, Any] = getattr(self, name)
            fresh: dict[Key, Any] = {}
            for key, value in old.items():
                target = moved(key)
                if target is not None:
                    fresh[target] = value
            setattr(self, name, fresh)
        merges = []
        for r1, c1, r2, c2 in self.merges:
            lo, hi = (r1, r2) if axis == "row" else (c1, c2)
            lo2, hi2 = _band(lo, hi, at, n)
            if lo2 is None or hi2 is None:
                continue
            rect = (lo2, c1, hi2, c2) if axis == "row" else (r1, lo2, r2, hi2)
            if (rect[2] - rect[0] + 1) * (rect[3] - rect[1] + 1) > 1:
                merges.append(rect)
        self.merges = merges
        if axis == "row":
            self.rows += n
        else:
            self.cols += n

    def truncate(self, rows: int, cols: int) -> None:
        """Shrink or grow the grid; cells beyond the new edge are dropped (as Sheets does)."""
        self.rows, self.cols = rows, cols
        for name in ("cells", "computed", "formats"):
            old: dict[Key, Any] = getattr(self, name)
            if any(r > rows or c > cols for r, c in old):
                setattr(self, name, {k: v for k, v in old.items() if k[0] <= rows and k[1] <= cols})
        self.merges = [m for m in self.merges if m[2] <= rows and m[3] <= cols]


def _band(lo: int, hi: int, at: int, n: int) -> tuple[int | None, int | None]:
    if n > 0:
        return (lo + n if lo >= at else lo, hi + n if hi >= at else hi)
    last = at - n - 1
    new_lo = lo if lo < at else (at if lo <= last else lo + n)
    new_hi = hi if hi < at else (at - 1 if hi <= last else hi + n)
    if new_hi < new_lo:
        return None, None
    return new_lo, new_hi
