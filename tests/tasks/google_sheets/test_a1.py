"""A1 notation: examples, gspread parity, and properties over arbitrary input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.tasks.google_sheets.emulator import (
    GridRange,
    IncorrectCellLabel,
    a1_to_rowcol,
    parse_range,
    rowcol_to_a1,
)
from toolbench.tasks.google_sheets.emulator.a1 import MAX_COLS, MAX_ROWS, format_range
from toolbench.tasks.google_sheets.emulator.refs import (
    KEEP,
    rewrite,
    scan,
    shift,
    shift_formula,
    template,
    translate_formula,
)

ROWS = st.integers(1, MAX_ROWS)
COLS = st.integers(1, MAX_COLS)
SHEETS = st.one_of(
    st.none(),
    st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=12),
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B7", GridRange(None, 7, 2, 7, 2, is_cell=True)),
        ("$B$7", GridRange(None, 7, 2, 7, 2, (True, True, True, True), is_cell=True)),
        ("A1:C3", GridRange(None, 1, 1, 3, 3)),
        ("C3:A1", GridRange(None, 1, 1, 3, 3)),
        ("A:A", GridRange(None, None, 1, None, 1)),
        ("B:D", GridRange(None, None, 2, None, 4)),
        ("2:2", GridRange(None, 2, None, 2, None)),
        ("3:5", GridRange(None, 3, None, 5, None)),
        ("A2:A", GridRange(None, 2, 1, None, 1)),
        ("A2:C", GridRange(None, 2, 1, None, 3)),
        ("A2:5", GridRange(None, 2, 1, 5, None)),
        ("'Sheet 2'!A1:B2", GridRange("Sheet 2", 1, 1, 2, 2)),
        ("Sheet1!A1", GridRange("Sheet1", 1, 1, 1, 1, is_cell=True)),
        ("'It''s'!Z9", GridRange("It's", 9, 26, 9, 26, is_cell=True)),
        ("Sheet1", GridRange("Sheet1", None, None, None, None)),
        ("'My data'", GridRange("My data", None, None, None, None)),
        ("aa10", GridRange(None, 10, 27, 10, 27, is_cell=True)),
    ],
)
def test_parse_examples(text: str, expected: GridRange) -> None:
    assert parse_range(text) == expected


@pytest.mark.parametrize(
    "text", ["", "A0", "1A", "A1:", ":B2", "A1:B2:C3", "ABCD1!", "A1!B", "'x'!"]
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(IncorrectCellLabel):
        parse_range(text, allow_sheet_only=False)


def test_rowcol_examples_match_gspread() -> None:
    utils = pytest.importorskip("gspread.utils")
    for row, col in [(1, 1), (7, 2), (1, 26), (1, 27), (12, 52), (3, 703), (9, 18278)]:
        assert rowcol_to_a1(row, col) == utils.rowcol_to_a1(row, col)
        assert a1_to_rowcol(rowcol_to_a1(row, col)) == utils.a1_to_rowcol(rowcol_to_a1(row, col))
    with pytest.raises(IncorrectCellLabel, match=r"\(0, 1\)"):
        rowcol_to_a1(0, 1)
    assert a1_to_rowcol("$c$4") == (4, 3)


@given(ROWS, COLS)
def test_rowcol_round_trip(row: int, col: int) -> None:
    assert a1_to_rowcol(rowcol_to_a1(row, col)) == (row, col)


@st.composite
def grid_ranges(draw: st.DrawFn) -> GridRange:
    kind = draw(st.sampled_from(["cell", "box", "cols", "rows", "open_down", "open_right"]))
    sheet = draw(SHEETS)
    r1, r2 = sorted((draw(ROWS), draw(ROWS)))
    c1, c2 = sorted((draw(COLS), draw(COLS)))
    absolute = tuple(draw(st.booleans()) for _ in range(4))
    if kind == "cell":
        a, b = absolute[0], absolute[1]
        return GridRange(sheet, r1, c1, r1, c1, (a, b, a, b), is_cell=True)
    if kind == "box":
        return GridRange(sheet, r1, c1, r2, c2, absolute)  # type: ignore[arg-type]
    if kind == "cols":
        return GridRange(sheet, None, c1, None, c2, (absolute[0], False, absolute[2], False))
    if kind == "rows":
        return GridRange(sheet, r1, None, r2, None, (False, absolute[1], False, absolute[3]))
    if kind == "open_down":
        return GridRange(sheet, r1, c1, None, c2, (absolute[0], absolute[1], absolute[2], False))
    return GridRange(sheet, r1, c1, r2, None, (absolute[0], absolute[1], False, absolute[3]))


@given(grid_ranges())
def test_format_parse_round_trip(rng: GridRange) -> None:
    assert parse_range(format_range(rng)) == rng


@given(st.text(max_size=30))
def test_arbitrary_text_parses_or_raises_our_error(text: str) -> None:
    try:
        rng = parse_range(text)
    except IncorrectCellLabel:
        return
    assert isinstance(rng, GridRange)


@given(st.text(max_size=12))
def test_a1_to_rowcol_on_arbitrary_text(text: str) -> None:
    try:
        row, col = a1_to_rowcol(text)
    except IncorrectCellLabel:
        return
    assert row >= 1 and col >= 1


@given(st.text(max_size=40))
def test_formula_scanning_never_raises(text: str) -> None:
    formula = "=" + text
    assert rewrite(formula, lambda rng: KEEP) == formula
    template(formula)
    for start, end, rng in scan(formula):
        assert 0 < start < end <= len(formula)
        assert isinstance(rng, GridRange)


def test_scan_finds_references_not_functions_or_strings() -> None:
    text = "=LOG10(A1)+SUM('Sheet 2'!B2:B9)+\"C3\"&Sheet1!$D$4+ATAN2(1,2)+COUNT(E:E)+SUM(2:3)"
    found = [text[s:e] for s, e, _ in scan(text)]
    assert found == ["A1", "'Sheet 2'!B2:B9", "Sheet1!$D$4", "E:E", "2:3"]


@given(grid_ranges(), st.sampled_from(["row", "column"]), st.integers(1, 50), st.integers(1, 5))
def test_insert_then_delete_restores(rng: GridRange, axis: str, at: int, n: int) -> None:
    inserted = shift(rng, axis, at, n)
    assert inserted is not None
    assert shift(inserted, axis, at, -n) == rng


def test_shift_examples() -> None:
    box = parse_range("A2:A6")
    assert shift(box, "row", 3, -1) == parse_range("A2:A5")  # a row inside: shrinks
    assert shift(box, "row", 2, -1) == parse_range("A2:A5")  # its first row: shrinks
    assert shift(box, "row", 2, -5) is None  # all of it: #REF!
    assert shift(box, "row", 1, 2) == parse_range("A4:A8")  # above: moves
    assert shift(box, "row", 7, 2) == box  # below: unchanged
    assert shift(parse_range("B:B"), "row", 1, -3) == parse_range("B:B")
    assert shift(parse_range("C5"), "column", 2, 1) == parse_range("D5")


def test_translate_keeps_absolute_parts() -> None:
    assert translate_formula("=B2*$C$2+C$1+$A3", 3, 0) == "=B5*$C$2+C$1+$A6"
    assert translate_formula("=A1", -1, 0) == "=#REF!"


FORMULA_PIECES = st.sampled_from(
    ["A1", "$B$2", "C:C", "3:4", "'S 2'!A1:B2", "Sheet1!Z9", "SUM(", ")", "+", ",", '"x"',
     "LOG10(", "A", "1", ":", "!", "'", " ", "ZZZ1", "AAAA1"]
)  # fmt: skip


@given(st.lists(FORMULA_PIECES, max_size=12), st.integers(1, 9), st.integers(1, 4))
def test_formula_rows_inserted_then_deleted_restore_references(
    pieces: list[str], at: int, n: int
) -> None:
    text = "=" + "".join(pieces)
    moved = shift_formula(text, "Sheet1", "sheet1", "row", at, n)
    back = shift_formula(moved, "Sheet1", "Sheet1", "row", at, -n)
    assert [rng for _, _, rng in scan(back)] == [rng for _, _, rng in scan(text)]
