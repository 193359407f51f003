"""Formulas evaluated for real: values computed by hand, recalculation after edits, references that
follow inserted/deleted rows and columns, cross-sheet references, cycles, render options."""

from __future__ import annotations

import time

import pytest

from tests.tasks.google_sheets.conftest import formula_value
from toolbench.tasks.google_sheets.emulator import Spreadsheet, Worksheet
from toolbench.tasks.google_sheets.emulator import formula as formula_module

# Data (conftest): Product | Qty | Price | Category
#   apple 10 1.5 fruit / banana 3 0.25 fruit / cherry 7 4 berry / date 0 2 fruit / elder 12 1 berry
HAND_COMPUTED = [
    ("=SUM(B2:B6)", 32),
    ("=AVERAGE(B2:B6)", 6.4),
    ("=MIN(B2:B6)", 0),
    ("=MAX(C2:C6)", 4),
    ("=COUNT(B1:B6)", 5),
    ("=COUNTA(A1:A6)", 6),
    ('=COUNTIF(B2:B6,">5")', 3),
    ('=COUNTIF(D2:D6,"fruit")', 3),
    ('=COUNTIF(A2:A6,"<>apple")', 4),
    ('=SUMIF(D2:D6,"berry",B2:B6)', 19),
    ('=SUMIF(B2:B6,">=7")', 29),
    ('=AVERAGEIF(D2:D6,"fruit",B2:B6)', 13 / 3),
    ('=IF(B2>5,"many","few")', "many"),
    ('=IF(B5=0,"none",B5)', "none"),
    ('=IF(D4="fruit","yes","no")', "no"),
    ('=IF(AND(B2>5,C2<2),"ok","no")', "ok"),
    ('=VLOOKUP("cherry",A2:C6,3,FALSE)', 4),
    ('=VLOOKUP("fig",A2:C6,3,FALSE)', "#N/A"),
    ("=ROUND(C3*B3,1)", 0.8),
    ("=ROUND(2/3,2)", 0.67),
    ('=CONCATENATE(A2," x",B2)', "apple x10"),
    ('=CONCATENATE("p=",C2)', "p=1.5"),
    ('=A2&"-"&D2', "apple-fruit"),
    ("=B2*C2", 15),
    ("=(B2+B3)/2", 6.5),
    ("=B2-B3*2", 4),
    ("=2^3+1", 9),
    ("=B2>B3", True),
    ('=A2="APPLE"', True),
    ("=B2/B5", "#DIV/0!"),
    ('=IFERROR(B2/B5,"n/a")', "n/a"),
    ("=SUMPRODUCT(B2:B6,C2:C6)", 55.75),
    ("=LEN(A3)", 6),
    ("=UPPER(A4)", "CHERRY"),
    ("=ABS(B3-B2)", 7),
    ("=SUM(B:B)", 32),
    ("=MAX(B2:B6)-MIN(B2:B6)", 12),
    ("=INDEX(A2:A6,3)", "cherry"),
    ('=MATCH("date",A2:A6,0)', 4),
    ("=ROW(A5)+COLUMN(C1)", 8),
    ("=ROW()", 1),
    ("=G1", None),  # a reference to an empty cell reads as empty
    ("=NOSUCHFUNCTION(1)", "#NAME?"),
    ("=Total*2", "#NAME?"),  # an undefined name
    ("=SUM(1,", "#ERROR!"),
]


@pytest.mark.parametrize(("formula", "expected"), HAND_COMPUTED)
def test_hand_computed(ws: Worksheet, formula: str, expected: object) -> None:
    got = formula_value(ws, formula)
    if isinstance(expected, float):
        assert got == pytest.approx(expected)
    else:
        assert got == expected
        assert type(got) is type(expected)


def test_render_options(ws: Worksheet) -> None:
    ws.update([["=C2*B2", "=B3/B2", "=B2>1"]], "E2", raw=False)
    assert ws.get("E2:G2") == [["15", "0.3", "TRUE"]]
    assert ws.get("E2:G2", value_render_option="UNFORMATTED_VALUE") == [[15, 0.3, True]]
    assert ws.get("E2:G2", value_render_option="FORMULA") == [["=C2*B2", "=B3/B2", "=B2>1"]]
    ws.update_acell("E3", "=1/3")
    assert ws.acell("E3").value == "0.3333333333"


def test_raw_keeps_formula_text_as_text(ws: Worksheet) -> None:
    ws.update([["=SUM(B2:B6)", "3"]], "E1")  # raw=True is gspread's default
    assert ws.get("E1:F1", value_render_option="UNFORMATTED_VALUE") == [["=SUM(B2:B6)", "3"]]
    ws.update([["=SUM(B2:B6)", "3", "3.5", "TRUE", "12/31/2024"]], "E1", raw=False)
    assert ws.get("E1:I1", value_render_option="UNFORMATTED_VALUE") == [
        [32, 3, 3.5, True, "12/31/2024"]
    ]


def test_recalculates_after_edits(ws: Worksheet) -> None:
    ws.update([["=SUM(B2:B6)"], ["=E1*2"], ["=E2+B2"]], "E1", raw=False)
    assert ws.col_values(5) == ["32", "64", "74"]
    ws.update_cell(2, 2, "20")  # USER_ENTERED: the number 20
    assert ws.col_values(5) == ["42", "84", "104"]
    ws.update([[1]], "B6")
    assert ws.col_values(5) == ["31", "62", "82"]
    ws.batch_clear(["B2:B3"])
    assert ws.col_values(5) == ["8", "16", "16"]
    ws.update_acell("B2", "=B4*2")  # a value replaced by a formula
    assert ws.col_values(5) == ["22", "44", "58"]


def test_deleted_rows_shift_and_break_references(ws: Worksheet) -> None:
    ws.update([["=SUM(B2:B6)", "=B3*2", "=B4"]], "F1", raw=False)
    ws.delete_rows(3)  # banana
    assert ws.get("F1:H1", value_render_option="FORMULA") == [["=SUM(B2:B5)", "=#REF!*2", "=B3"]]
    assert ws.get("F1:H1", value_render_option="UNFORMATTED_VALUE") == [[29, "#REF!", 7]]
    ws.delete_rows(2, 5)  # every summed row
    assert ws.acell("F1", value_render_option="FORMULA").value == "=SUM(#REF!)"
    assert ws.acell("F1").value == "#REF!"


def test_inserted_rows_and_columns_shift_references(ws: Worksheet) -> None:
    ws.update([["=B2*C2"]], "E2", raw=False)
    ws.update([["=SUM(B2:B6)"]], "E7", raw=False)
    ws.insert_row(["fig", 5, 3, "fruit"], index=2)
    assert ws.acell("E3", value_render_option="FORMULA").value == "=B3*C3"
    assert ws.acell("E8", value_render_option="FORMULA").value == "=SUM(B3:B7)"
    assert ws.acell("E8").value == "32"  # inserted above the range: not included
    ws.insert_row(["grape", 1, 1, "berry"], index=5)
    assert ws.acell("E9", value_render_option="FORMULA").value == "=SUM(B3:B8)"
    assert ws.acell("E9").value == "33"  # inserted inside the range: included
    ws.insert_cols([["New"]], col=1)
    assert ws.acell("F3", value_render_option="FORMULA").value == "=C3*D3"
    assert ws.acell("F3").value == "15"
    ws.delete_columns(1)
    assert ws.acell("E3", value_render_option="FORMULA").value == "=B3*C3"


def test_cross_sheet_references(book: Spreadsheet, ws: Worksheet) -> None:
    other = book.add_worksheet("Sheet 2", 20, 5)
    other.update([["x", 21]], "A3")
    ws.update([["='Sheet 2'!B3*2", "=SUM('Sheet 2'!B:B)+Sheet1!B2"]], "F1", raw=False)
    assert ws.get("F1:G1", value_render_option="UNFORMATTED_VALUE") == [[42, 31]]
    other.update_cell(3, 2, 5)
    assert ws.acell("F1").value == "10"
    other.insert_row(["top"], index=1)
    assert ws.acell("F1", value_render_option="FORMULA").value == "='Sheet 2'!B4*2"
    other.update_title("Prices")
    assert ws.acell("F1", value_render_option="FORMULA").value == "=Prices!B4*2"
    assert ws.acell("F1").value == "10"
    book.del_worksheet(other)
    assert ws.acell("F1", value_render_option="FORMULA").value == "=#REF!*2"
    assert ws.acell("F1").value == "#REF!"


def test_unknown_sheet_is_a_ref_error(ws: Worksheet) -> None:
    assert formula_value(ws, "=Nowhere!A1+1") == "#REF!"


def test_cycles_show_ref_error_and_recover(ws: Worksheet) -> None:
    ws.update([["=F1+1", "=E1+1", "=E1*2", "=H1"]], "E1", raw=False)
    assert ws.get("E1:H1", value_render_option="UNFORMATTED_VALUE") == [
        ["#REF!", "#REF!", "#REF!", "#REF!"]
    ]
    ws.update_acell("F1", "4")  # breaks the E1<->F1 cycle; H1 still reads itself
    assert ws.get("E1:H1", value_render_option="UNFORMATTED_VALUE") == [[5, 4, 10, "#REF!"]]


def test_sort_moves_formulas_with_their_rows(ws: Worksheet) -> None:
    ws.update([[f"=B{r}*C{r}"] for r in range(2, 7)], "E2", raw=False)
    ws.sort((2, "des"), range="A2:E6")
    assert ws.col_values(1) == ["Product", "elder", "apple", "cherry", "banana", "date"]
    assert ws.col_values(5) == ["", "12", "15", "28", "0.75", "0"]
    assert ws.acell("E2", value_render_option="FORMULA").value == "=B2*C2"


def test_one_compilation_per_template_and_fast_recalc() -> None:
    book = Spreadsheet("Big")
    ws = book.sheet1
    rows = [[f"item{i}", i, i % 7 + 0.5, f"=B{i + 1}*C{i + 1}"] for i in range(1, 301)]
    ws.update(rows, "A2", raw=False)
    ws.update([["=SUM(D2:D301)", "=AVERAGE(B:B)", '=COUNTIF(C2:C301,">3")']], "F1", raw=False)
    before = len(formula_module._compiled)
    started = time.perf_counter()
    assert ws.acell("F1", value_render_option="UNFORMATTED_VALUE").value == sum(
        i * (i % 7 + 0.5) for i in range(1, 301)
    )
    assert len(formula_module._compiled) - before <= 4  # 300 row formulas share one template
    for i in range(20):  # value edits then reads: incremental recalculation
        ws.update_cell(2 + i, 2, i)
        ws.acell("F1")
    assert time.perf_counter() - started < 3.0
    twin = book.clone()
    twin.sheet1.update_cell(2, 2, 1000)
    assert twin.sheet1.acell("D2").value != ws.acell("D2").value
