"""On-demand recalculation: a read evaluates only the formulas it needs, and what it shows is
always what a full recalculation of the whole workbook would show."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.tasks.google_sheets.emulator import Spreadsheet
from toolbench.tasks.google_sheets.emulator import engine as engine_module


def _book() -> Spreadsheet:
    """Three sheets: plain data, formulas over it (cross-sheet), formulas over those."""
    book = Spreadsheet("Lazy")
    data = book.sheet1
    data.update_title("Data")
    data.update([["Item", "Qty", "Price"]] + [[f"i{r}", r, r + 0.5] for r in range(1, 9)], "A1")
    calc = book.add_worksheet("Calc", 20, 6)
    calc.update([[f"=Data!B{r}*Data!C{r}", f"=A{r - 1}+1"] for r in range(2, 10)], "A2", raw=False)
    calc.update([["=SUM(A2:A9)", "=MAX(Data!B:B)"]], "A1", raw=False)
    summary = book.add_worksheet("Summary", 10, 4)
    summary.update(
        [["=Calc!A1*2", "=COUNT(Calc!A:A)", '=IF(A1>100,"big","small")']], "A1", raw=False
    )
    book.add_worksheet("Empty", 5, 5).update([["x", 1]], "A1")
    return book


def _everything_recalculated(book: Spreadsheet) -> dict[str, Any]:
    twin = book.clone()
    twin._engine.invalidate()
    twin._recalc()
    return {ws.title: ws.get_all_values() for ws in twin.worksheets()}


def _count_evaluations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = engine_module.evaluate

    def counting(text: str, *args: Any) -> Any:
        seen.append(text)
        return real(text, *args)

    monkeypatch.setattr(engine_module, "evaluate", counting)
    return seen


def test_reading_a_sheet_without_formulas_evaluates_none(monkeypatch: pytest.MonkeyPatch) -> None:
    book = _book()
    book.worksheet("Empty").insert_cols([["new"]], 1)  # structural: every formula goes stale
    seen = _count_evaluations(monkeypatch)
    assert book.worksheet("Empty").get_all_values()[0] == ["new", "x", "1"]
    assert seen == []
    book.worksheet("Calc").get_all_values()  # Calc needs its own formulas, not Summary's
    assert seen and not any(text.startswith("=Calc!") for text in seen)
    assert len(seen) == 18
    book.worksheet("Summary").get_all_values()  # only Summary's three remain
    assert len(seen) == 21


def test_offset_makes_a_read_evaluate_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    book = _book()
    book.worksheet("Empty").update([["=OFFSET(A1,0,1)"]], "C1", raw=False)
    book.worksheet("Data").update_cell(2, 2, 40)
    book.worksheet("Empty").insert_rows([["top"]], 1)
    seen = _count_evaluations(monkeypatch)
    book.worksheet("Empty").get_all_values()
    assert len(seen) == 22  # everything stale, not only the OFFSET cell


def test_a_fresh_formula_never_reads_a_stale_one() -> None:
    book = _book()
    book.worksheet("Summary").get_all_values()  # everything evaluated
    book.worksheet("Data").update_cell(3, 2, 100)  # Calc!A3 and everything downstream go stale
    assert book.worksheet("Calc").acell("A3").value == "250"
    assert book.worksheet("Summary").get_all_values() == _everything_recalculated(book)["Summary"]


OPERATION = st.one_of(
    st.tuples(st.just("set"), st.integers(2, 9), st.integers(2, 3), st.integers(-50, 50)),
    st.tuples(st.just("insert_row"), st.sampled_from(["Data", "Calc", "Empty"]), st.integers(1, 6)),
    st.tuples(st.just("delete_row"), st.sampled_from(["Data", "Calc"]), st.integers(2, 6)),
    st.tuples(st.just("read"), st.sampled_from(["Data", "Calc", "Summary", "Empty"])),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(OPERATION, min_size=1, max_size=12))
def test_lazy_reads_equal_a_full_recalculation(operations: list[tuple[Any, ...]]) -> None:
    book = _book()
    for operation in operations:
        kind = operation[0]
        if kind == "set":
            book.worksheet("Data").update_cell(operation[1], operation[2], operation[3])
        elif kind == "insert_row":
            book.worksheet(operation[1]).insert_rows([["added", 1, 2]], operation[2])
        elif kind == "delete_row":
            book.worksheet(operation[1]).delete_rows(operation[2])
        else:
            title = operation[1]
            shown = book.worksheet(title).get_all_values()
            assert shown == _everything_recalculated(book)[title]
    final = {ws.title: ws.get_all_values() for ws in book.worksheets()}
    assert final == _everything_recalculated(book)
