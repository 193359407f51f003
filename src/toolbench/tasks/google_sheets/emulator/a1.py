"""A1 notation: cells, ranges, whole and open-ended columns/rows, sheet-qualified names.

One grammar serves three readers: the Worksheet API (range arguments), the formula engine
(references inside formulas, where `$` marks absolute parts) and the scorer (labels of formats).
Everything that is not A1 raises `IncorrectCellLabel`, which callers turn into the API's wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from toolbench.tasks.google_sheets.emulator.errors import IncorrectCellLabel

MAX_ROWS = 10_000_000  # Sheets' cell limit bounds any row number
MAX_COLS = 18_278  # ZZZ

_COL = r"\$?[A-Za-z]{1,3}"
_ROW = r"\$?[0-9]{1,8}"
# The part after an optional `sheet!`: cell[:cell|:col|:row], col:col, row:row.
REF_BODY = (
    rf"(?P<c1>{_COL})(?P<r1>{_ROW})(?::(?:(?P<c2>{_COL})(?P<r2>{_ROW})?|(?P<rend>{_ROW})))?"
    rf"|(?P<cc1>{_COL}):(?P<cc2>{_COL})"
    rf"|(?P<rr1>{_ROW}):(?P<rr2>{_ROW})"
)
SHEET_PREFIX = r"(?:'(?P<qsheet>(?:[^']|'')+)'|(?P<sheet>[A-Za-z0-9_.]+))!"
_RANGE_RE = re.compile(rf"(?:{SHEET_PREFIX})?(?:{REF_BODY})")
_SHEET_ONLY_RE = re.compile(r"'(?P<qsheet>(?:[^']|'')+)'|(?P<sheet>[A-Za-z0-9_.]+)")
_PLAIN_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CELL_LIKE_RE = re.compile(r"[A-Za-z]{1,3}[0-9]+|[Rr][0-9]*[Cc][0-9]*")


@dataclass(frozen=True)
class GridRange:
    """A rectangle of a sheet, 1-based and inclusive; None on a side means unbounded.

    `absolute` keeps the `$` marks (col1, row1, col2, row2) so a formula's text can be rebuilt;
    `is_cell` remembers that it was written as one cell ("B7", not "B7:B7").
    """

    sheet: str | None
    r1: int | None
    c1: int | None
    r2: int | None
    c2: int | None
    absolute: tuple[bool, bool, bool, bool] = (False, False, False, False)
    is_cell: bool = False

    def bounded(self, rows: int, cols: int) -> tuple[int, int, int, int]:
        """(r1, c1, r2, c2) with open sides closed at the grid's edge."""
        return (
            self.r1 or 1,
            self.c1 or 1,
            rows if self.r2 is None else self.r2,
            cols if self.c2 is None else self.c2,
        )

    def contains(self, row: int, col: int) -> bool:
        return (
            (self.r1 is None or self.r1 <= row)
            and (self.r2 is None or row <= self.r2)
            and (self.c1 is None or self.c1 <= col)
            and (self.c2 is None or col <= self.c2)
        )

    def with_sheet(self, sheet: str | None) -> GridRange:
        return replace(self, sheet=sheet)

    def a1(self, with_sheet: bool = True) -> str:
        return format_range(self, with_sheet=with_sheet)


def column_to_letters(col: int) -> str:
    if col < 1:
        raise IncorrectCellLabel(str(col))
    letters = ""
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def letters_to_column(letters: str) -> int:
    col = 0
    for ch in letters.upper():
        col = col * 26 + ord(ch) - 64
    return col


def rowcol_to_a1(row: int, col: int) -> str:
    """(7, 2) -> 'B7', like gspread.utils.rowcol_to_a1 (same error for non-positive numbers)."""
    if row < 1 or col < 1:
        raise IncorrectCellLabel(f"({row}, {col})")
    return f"{column_to_letters(col)}{row}"


def a1_to_rowcol(label: str) -> tuple[int, int]:
    """'B7' or '$B$7' -> (7, 2), like gspread.utils.a1_to_rowcol."""
    rng = parse_range(label, allow_sheet_only=False) if isinstance(label, str) else None
    if rng is None or not rng.is_cell or rng.sheet is not None:
        raise IncorrectCellLabel(label)
    assert rng.r1 is not None and rng.c1 is not None
    return rng.r1, rng.c1


def _col(text: str) -> tuple[int, bool]:
    col = letters_to_column(text.lstrip("$"))
    if col > MAX_COLS:
        raise IncorrectCellLabel(text)
    return col, text.startswith("$")


def _row(text: str) -> tuple[int, bool]:
    row = int(text.lstrip("$"))
    if not 1 <= row <= MAX_ROWS:
        raise IncorrectCellLabel(text)
    return row, text.startswith("$")


def range_from_match(m: re.Match[str]) -> GridRange:
    """Build a GridRange from a match of REF_BODY (optionally with SHEET_PREFIX)."""
    groups = m.groupdict()
    sheet = groups.get("sheet")
    if groups.get("qsheet") is not None:
        sheet = groups["qsheet"].replace("''", "'")
    if groups["c1"] is not None:
        c1, ac1 = _col(groups["c1"])
        r1, ar1 = _row(groups["r1"])
        if groups["rend"] is not None:  # "A2:5": open towards the right
            r2, ar2 = _row(groups["rend"])
            return GridRange(sheet, min(r1, r2), c1, max(r1, r2), None, (ac1, ar1, False, ar2))
        if groups["c2"] is None:
            return GridRange(sheet, r1, c1, r1, c1, (ac1, ar1, ac1, ar1), is_cell=True)
        c2, ac2 = _col(groups["c2"])
        if groups["r2"] is None:  # "A2:C": open towards the bottom
            lo, hi = sorted((c1, c2))
            return GridRange(sheet, r1, lo, None, hi, (ac1, ar1, ac2, False))
        r2, ar2 = _row(groups["r2"])
        return GridRange(
            sheet, min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2), (ac1, ar1, ac2, ar2)
        )
    if groups["cc1"] is not None:
        (c1, ac1), (c2, ac2) = _col(groups["cc1"]), _col(groups["cc2"])
        return GridRange(sheet, None, min(c1, c2), None, max(c1, c2), (ac1, False, ac2, False))
    (r1, ar1), (r2, ar2) = _row(groups["rr1"]), _row(groups["rr2"])
    return GridRange(sheet, min(r1, r2), None, max(r1, r2), None, (False, ar1, False, ar2))


def parse_range(text: str, allow_sheet_only: bool = True) -> GridRange:
    """Any A1 range the Sheets API accepts; a bare or quoted sheet name means the whole sheet."""
    if not isinstance(text, str):
        raise IncorrectCellLabel(repr(text))
    body = text.strip()
    m = _RANGE_RE.fullmatch(body)
    if m is not None:
        return range_from_match(m)
    if allow_sheet_only:
        s = _SHEET_ONLY_RE.fullmatch(body)
        if s is not None:
            name = s["sheet"] if s["sheet"] is not None else s["qsheet"].replace("''", "'")
            return GridRange(name, None, None, None, None)
    raise IncorrectCellLabel(text)


def quote_sheet(name: str) -> str:
    """The sheet name as the API writes it back: bare when unambiguous, else quoted."""
    if _PLAIN_NAME_RE.fullmatch(name) and not _CELL_LIKE_RE.fullmatch(name):
        return name
    return "'" + name.replace("'", "''") + "'"


def format_range(rng: GridRange, with_sheet: bool = True) -> str:
    ac1, ar1, ac2, ar2 = rng.absolute

    def col(c: int | None, a: bool) -> str:
        return "" if c is None else ("$" if a else "") + column_to_letters(c)

    def row(r: int | None, a: bool) -> str:
        return "" if r is None else ("$" if a else "") + str(r)

    start = col(rng.c1, ac1) + row(rng.r1, ar1)
    end = col(rng.c2, ac2) + row(rng.r2, ar2)
    if rng.is_cell:
        body = start
    elif rng.r1 is None and rng.c1 is None and rng.r2 is None and rng.c2 is None:
        body = ""
    elif rng.c1 is not None and rng.r1 is None:  # whole columns
        body = f"{col(rng.c1, ac1)}:{col(rng.c2, ac2)}"
    else:
        body = f"{start}:{end}"
    if with_sheet and rng.sheet is not None:
        return quote_sheet(rng.sheet) + ("!" + body if body else "")
    return body
