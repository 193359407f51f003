"""References inside formula text: find them, rewrite them, shift them like Google Sheets does.

Inserting or deleting rows/columns, sorting (which moves formulas), renaming or deleting a sheet
all change formulas' text, exactly as Sheets changes what the user sees in the formula bar. The
same scanner produces a formula's *template* (references replaced by placeholders), so `=B2*C2` and
`=B3*C3` share one compiled function.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from toolbench.tasks.google_sheets.emulator.a1 import (
    REF_BODY,
    SHEET_PREFIX,
    GridRange,
    format_range,
    range_from_match,
)
from toolbench.tasks.google_sheets.emulator.errors import IncorrectCellLabel

_REF_RE = re.compile(
    rf"(?<![A-Za-z0-9_.$'!:])(?:{SHEET_PREFIX})?(?:{REF_BODY})(?![A-Za-z0-9_(!.:])"
)
_STRING_RE = re.compile(r'"(?:[^"]|"")*"?')
# Functions that need a reference's address, not only its values: never templated.
ADDRESS_FUNCTIONS = re.compile(
    r"(?<![A-Za-z0-9_.])(ROW|COLUMN|ROWS|COLUMNS|AREAS|ISFORMULA|OFFSET|INDIRECT|CELL|ADDRESS"
    r"|SINGLE)\s*\(",
    re.IGNORECASE,
)
REF_ERROR = "#REF!"
KEEP = object()  # a rewrite callback's "leave this reference as written"

Rewriter = Callable[[GridRange], "GridRange | object | None"]


def _code_segments(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_code) pieces of a formula: string literals are not code."""
    pieces, pos = [], 0
    for m in _STRING_RE.finditer(text):
        if m.start() > pos:
            pieces.append((pos, m.start(), True))
        pieces.append((m.start(), m.end(), False))
        pos = m.end()
    if pos < len(text):
        pieces.append((pos, len(text), True))
    return pieces


def scan(text: str) -> list[tuple[int, int, GridRange]]:
    """Every reference in a formula as (start, end, range); a malformed one is skipped."""
    found = []
    for start, end, is_code in _code_segments(text):
        if not is_code:
            continue
        for m in _REF_RE.finditer(text, start, end):
            try:
                found.append((m.start(), m.end(), range_from_match(m)))
            except IncorrectCellLabel:
                continue
    return found


def rewrite(text: str, func: Rewriter) -> str:
    """Replace each reference by func(ref): a new range, None for #REF!, or KEEP."""
    out, pos = [], 0
    for start, end, rng in scan(text):
        new = func(rng)
        if new is KEEP or new == rng:
            continue
        out.append(text[pos:start])
        out.append(REF_ERROR if new is None else format_range(new))  # type: ignore[arg-type]
        pos = end
    if pos == 0:
        return text
    out.append(text[pos:])
    return "".join(out)


def sheet_key(name: str | None) -> str | None:
    """Sheet names in references are case-insensitive."""
    return None if name is None else name.casefold()


@lru_cache(maxsize=65536)
def template(text: str) -> tuple[str, tuple[GridRange, ...], bool]:
    """(template text, distinct references in placeholder order, templatable?).

    Placeholder k is `ZZ{k+1}` for a cell and `ZY{k+1}:ZZ{k+1}` for an area; formulas that ask for
    an address (ROW, OFFSET, ...) are not templated and keep their own text.
    """
    refs: dict[tuple[object, ...], int] = {}
    ordered: list[GridRange] = []
    out, pos = [], 0
    for start, end, rng in scan(text):
        key = (sheet_key(rng.sheet), rng.r1, rng.c1, rng.r2, rng.c2, rng.is_cell)
        if key not in refs:
            refs[key] = len(ordered)
            ordered.append(rng)
        k = refs[key] + 1
        out.append(text[pos:start])
        out.append(f"ZZ{k}" if rng.is_cell else f"ZY{k}:ZZ{k}")
        pos = end
    out.append(text[pos:])
    code = "".join(text[s:e] for s, e, is_code in _code_segments(text) if is_code)
    templatable = ADDRESS_FUNCTIONS.search(code) is None
    return "".join(out), tuple(ordered), templatable


def placeholder(k: int, is_cell: bool) -> str:
    return f"ZZ{k + 1}" if is_cell else f"ZY{k + 1}:ZZ{k + 1}"


# ---- structural edits ------------------------------------------------------------------------


def _shift_band(lo: int | None, hi: int | None, at: int, n: int) -> tuple[int | None, int | None]:
    """Bounds after inserting n>0 lines before `at`, or deleting -n lines from `at` (raises
    LookupError when every line of the range is deleted)."""
    if n > 0:
        return (
            None if lo is None else lo + n if lo >= at else lo,
            None if hi is None else hi + n if hi >= at else hi,
        )
    count, last = -n, at - n - 1
    new_lo = lo if lo is None or lo < at else (at if lo <= last else lo - count)
    new_hi = hi if hi is None or hi < at else (at - 1 if hi <= last else hi - count)
    if new_lo is not None and new_hi is not None and new_hi < new_lo:
        raise LookupError("deleted")
    return new_lo, new_hi


def shift(rng: GridRange, axis: str, at: int, n: int) -> GridRange | None:
    """The range after a row (axis='row') or column insertion/deletion; None when deleted."""
    try:
        if axis == "row":
            if rng.r1 is None and rng.r2 is None:
                return rng
            r1, r2 = _shift_band(rng.r1, rng.r2, at, n)
            return replace(rng, r1=r1, r2=r2)
        if rng.c1 is None and rng.c2 is None:
            return rng
        c1, c2 = _shift_band(rng.c1, rng.c2, at, n)
        return replace(rng, c1=c1, c2=c2)
    except LookupError:
        return None


def shift_formula(text: str, own_sheet: str, target: str, axis: str, at: int, n: int) -> str:
    """Rewrite references into sheet `target` of a formula that lives in `own_sheet`."""
    target_key = sheet_key(target)

    def func(rng: GridRange) -> GridRange | object | None:
        if sheet_key(rng.sheet or own_sheet) != target_key:
            return KEEP
        return shift(rng, axis, at, n)

    return rewrite(text, func)


def translate_formula(text: str, drow: int, dcol: int) -> str:
    """Move a formula by (drow, dcol) as copy/sort does: relative parts follow, `$` parts stay."""
    if drow == 0 and dcol == 0:
        return text

    def func(rng: GridRange) -> GridRange | None:
        ac1, ar1, ac2, ar2 = rng.absolute
        r1 = rng.r1 if rng.r1 is None or ar1 else rng.r1 + drow
        r2 = rng.r2 if rng.r2 is None or ar2 else rng.r2 + drow
        c1 = rng.c1 if rng.c1 is None or ac1 else rng.c1 + dcol
        c2 = rng.c2 if rng.c2 is None or ac2 else rng.c2 + dcol
        if any(v is not None and v < 1 for v in (r1, r2, c1, c2)):
            return None
        return replace(rng, r1=r1, r2=r2, c1=c1, c2=c2)

    return rewrite(text, func)


def rename_sheet_in_formula(text: str, old: str, new: str | None) -> str:
    """Follow a sheet's new title (or its deletion, new=None -> #REF!)."""
    old_key = sheet_key(old)

    def func(rng: GridRange) -> GridRange | object | None:
        if rng.sheet is None or sheet_key(rng.sheet) != old_key:
            return KEEP
        return None if new is None else replace(rng, sheet=new)

    return rewrite(text, func)
