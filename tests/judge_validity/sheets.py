"""Rewrites and perturbations of google_sheets gold programs (gspread and pandas).

Rewrites take another route to the same sheet: ``update_acell`` / ``update_cell`` /
``update`` of one cell, ``delete_rows(n)`` / ``delete_rows(n, n)``, a list of ranges for
``format``, explicit ``set_with_dataframe`` defaults, keyword arguments, plus the generic edits.
Perturbations move a cell by a row or a column, bump a number or an index, change a text or a
formula, or drop a statement.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from tests.judge_validity import pyedit
from tests.judge_validity.cases import Case, perturbations, rewrites
from toolbench.tasks.google_sheets.emulator import Worksheet
from toolbench.tasks.google_sheets.emulator.a1 import a1_to_rowcol, rowcol_to_a1

CELL = re.compile(r"^([A-Z]{1,2})(\d+)(?::([A-Z]{1,2})(\d+))?$")
INDEX_CALLS = ("delete_rows", "delete_columns", "insert_row", "insert_cols", "update_cell")
# keyword-able worksheet methods (``update`` only when its values come first)
SIGNATURES = {
    name: [p for p in inspect.signature(getattr(Worksheet, name)).parameters if p != "self"]
    for name in ("update_acell", "update_cell", "delete_rows", "delete_columns", "insert_row",
                 "insert_cols", "append_row", "format", "merge_cells")
}  # fmt: skip


def _single_call(gold: str, method: str) -> ast.Call | None:
    """The call when the whole program is one ``worksheet.method(...)`` statement."""
    body = pyedit.statements(gold)
    if len(body) == 1 and pyedit.statement_call(body[0]) == method:
        call = body[0].value  # type: ignore[attr-defined]
        return call if isinstance(call, ast.Call) else None
    return None


def cell_routes(gold: str) -> str | None:
    """``update_acell('B3', v)`` as ``update_cell(3, 2, v)`` and the other way round."""
    call = _single_call(gold, "update_acell")
    if call and len(call.args) == 2 and isinstance(call.args[0], ast.Constant):
        row, col = a1_to_rowcol(str(call.args[0].value))
        return f"worksheet.update_cell({row}, {col}, {ast.unparse(call.args[1])})"
    call = _single_call(gold, "update_cell")
    if call and len(call.args) == 3 and all(isinstance(a, ast.Constant) for a in call.args[:2]):
        label = rowcol_to_a1(call.args[0].value, call.args[1].value)  # type: ignore[attr-defined]
        return f"worksheet.update_acell({label!r}, {ast.unparse(call.args[2])})"
    return None


def update_of_one_cell(gold: str) -> str | None:
    """``update_acell(label, v)`` as ``update([[v]], label, raw=False)`` (both USER_ENTERED)."""
    call = _single_call(gold, "update_acell")
    if call and len(call.args) == 2:
        label, value = (ast.unparse(a) for a in call.args)
        return f"worksheet.update([[{value}]], {label}, raw=False)"
    return None


def range_end_explicit(gold: str) -> str | None:
    """``delete_rows(n)`` as ``delete_rows(n, n)`` (likewise for columns)."""
    for method in ("delete_rows", "delete_columns"):
        call = _single_call(gold, method)
        if call and len(call.args) == 1:
            first = ast.unparse(call.args[0])
            return f"worksheet.{method}({first}, {first})"
    return None


def format_range_list(gold: str) -> str | None:
    """``format('A1:B2', f)`` as ``format(['A1:B2'], f)``."""
    call = _single_call(gold, "format")
    if call and call.args and isinstance(call.args[0], ast.Constant):
        call.args[0] = ast.List([call.args[0]], ast.Load())
        return pyedit.render([ast.Expr(call)])
    return None


def dataframe_defaults(gold: str) -> str | None:
    """``set_with_dataframe`` with its default position ``row=1, col=1`` spelled out."""
    if "set_with_dataframe(worksheet, df" not in gold:
        return None
    return gold.replace(
        "set_with_dataframe(worksheet, df", "set_with_dataframe(worksheet, df, row=1, col=1", 1
    )


def keyword_update(gold: str) -> str | None:
    """``update(values, range, ...)`` with both passed by keyword, range first."""
    call = _single_call(gold, "update")
    if call and len(call.args) == 2 and isinstance(call.args[0], ast.List):
        values, label = (ast.unparse(a) for a in call.args)
        rest = "".join(f", {ast.unparse(k)}" for k in call.keywords)
        return f"worksheet.update(range_name={label}, values={values}{rest})"
    return None


def repeated_single_deletes(gold: str) -> str | None:
    """``delete_rows(a, b)`` as ``b - a + 1`` calls of ``delete_rows(a)`` (rows move up)."""
    for method in ("delete_rows", "delete_columns"):
        call = _single_call(gold, method)
        if call and len(call.args) == 2 and all(isinstance(a, ast.Constant) for a in call.args):
            first, last = (int(a.value) for a in call.args)  # type: ignore[attr-defined]
            return "\n".join([f"worksheet.{method}({first})"] * (last - first + 1))
    return None


def batch_as_updates(gold: str) -> str | None:
    """``batch_update([{'range': r, 'values': v}, ...])`` as one ``update(v, r)`` per item."""
    call = _single_call(gold, "batch_update")
    if not call or len(call.args) != 1 or call.keywords:
        return None
    try:
        items = ast.literal_eval(call.args[0])
    except ValueError:
        return None
    return "\n".join(f"worksheet.update({i['values']!r}, {i['range']!r})" for i in items)


def cells_one_by_one(gold: str) -> str | None:
    """A raw ``update`` of numbers as one ``update_cell`` per value (numbers parse the same)."""
    call = _single_call(gold, "update")
    if not call or len(call.args) != 2 or call.keywords:
        return None
    try:
        rows, label = ast.literal_eval(call.args[0]), ast.literal_eval(call.args[1])
    except ValueError:
        return None
    if not isinstance(label, str) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for row in rows for v in row
    ):
        return None
    top, left = a1_to_rowcol(label.split(":")[0])
    return "\n".join(
        f"worksheet.update_cell({top + r}, {left + c}, {value!r})"
        for r, row in enumerate(rows)
        for c, value in enumerate(row)
    )


def format_cell_by_cell(gold: str) -> str | None:
    """``format('A1:C2', f)`` as a loop formatting each cell of the range with ``f``."""
    call = _single_call(gold, "format")
    if not call or len(call.args) != 2 or not isinstance(call.args[0], ast.Constant):
        return None
    match = CELL.match(str(call.args[0].value))
    if not match or not match.group(3):
        return None
    top, left = a1_to_rowcol(f"{match.group(1)}{match.group(2)}")
    bottom, right = a1_to_rowcol(f"{match.group(3)}{match.group(4)}")
    labels = [
        rowcol_to_a1(row, col) for row in range(top, bottom + 1) for col in range(left, right + 1)
    ]
    return (
        f"style = {ast.unparse(call.args[1])}\n"
        f"for label in {labels!r}:\n"
        "    worksheet.format(label, style)"
    )


def loc_as_at_loop(gold: str) -> str | None:
    """``df.loc[mask, col] (op)= literal`` as a loop of ``df.at[i, col] (op)= literal`` over the
    rows the mask selects (pandas' label-based scalar route)."""
    body = pyedit.statements(gold)
    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.AugAssign):
            target: ast.expr = stmt.target
            operator = pyedit.augmented_operator(stmt)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, operator = stmt.targets[0], "="
        else:
            continue
        if not (_is_loc_pair(target) and isinstance(stmt.value, ast.Constant)):
            continue
        mask, column = target.slice.elts  # type: ignore[attr-defined]
        loop = (
            f"rows = {ast.unparse(mask)}\n"
            f"for i in df.index[rows]:\n"
            f"    df.at[i, {ast.unparse(column)}] {operator} {stmt.value.value!r}"
        )
        body[index : index + 1] = pyedit.statements(loop)
        return pyedit.render(body)
    return None


def _is_loc_pair(node: ast.AST | None) -> bool:
    """``df.loc[<row mask>, <column literal>]``."""
    return (
        isinstance(node, ast.Subscript)
        and ast.unparse(node.value) == "df.loc"
        and isinstance(node.slice, ast.Tuple)
        and len(node.slice.elts) == 2
        and isinstance(node.slice.elts[1], ast.Constant)
    )


def rewrite_edits() -> dict[str, Callable[[str], str | None]]:
    edits = dict(pyedit.GENERIC_REWRITES)
    edits.update(
        {
            "keyword_arguments": partial(pyedit.keyword_arguments, signatures=SIGNATURES),
            "update_acell_vs_update_cell": cell_routes,
            "update_of_one_cell": update_of_one_cell,
            "explicit_range_end": range_end_explicit,
            "format_range_list": format_range_list,
            "explicit_dataframe_defaults": dataframe_defaults,
            "update_keywords": keyword_update,
            "repeated_single_deletes": repeated_single_deletes,
            "batch_as_updates": batch_as_updates,
            "cells_one_by_one": cells_one_by_one,
            "format_cell_by_cell": format_cell_by_cell,
            "loc_as_at_loop": loc_as_at_loop,
        }
    )
    return edits


def sheet_rewrites(gold: str) -> list[Case]:
    return rewrites(gold, rewrite_edits())


# -- perturbations -----------------------------------------------------------------------------


def sheet_perturbations(gold: str, seed: int) -> list[Case]:
    options: dict[str, list[tuple[int, Any]]] = {}
    for site, value, call, _ in pyedit.literal_sites(gold):
        for kind, new in _wrong_literals(value, call):
            options.setdefault(kind, []).append((site, new))
    found: list[tuple[str, str | None]] = [
        (kind, pyedit.replace_literal(gold, *choices[seed % len(choices)]))
        for kind, choices in options.items()
    ]
    body = pyedit.statements(gold)
    if len(body) > 1:
        found.append(("dropped_statement", pyedit.without_statement(gold, seed % len(body))))
    return perturbations(found, gold)


def _wrong_literals(value: Any, call: str | None) -> list[tuple[str, Any]]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        kind = "off_by_one_index" if call in INDEX_CALLS or call == "sort" else "wrong_number"
        return [(kind, value + 1)]
    if not isinstance(value, str):
        return []
    match = CELL.match(value)
    if match:
        return [("off_by_one_cell", _shift(match, 1, 0)), ("swapped_column", _shift(match, 0, 1))]
    if value.startswith("="):
        return [("wrong_formula", _bump_last_number(value))]
    if value in ("asc", "des"):
        return [("wrong_sort_order", "des" if value == "asc" else "asc")]
    return [("wrong_text", value + " X")]


def _shift(match: re.Match[str], rows: int, cols: int) -> str:
    first_col, first_row, last_col, last_row = match.groups()
    parts = [_cell(first_col, first_row, rows, cols)]
    if last_col:
        parts.append(_cell(last_col, last_row, rows, cols))
    return ":".join(parts)


def _cell(col: str, row: str, rows: int, cols: int) -> str:
    number, column = a1_to_rowcol(f"{col}{row}")
    return rowcol_to_a1(number + rows, column + cols)


def _bump_last_number(formula: str) -> str:
    numbers = list(re.finditer(r"\d+", formula))
    if not numbers:
        return formula + "+1"
    last = numbers[-1]
    return formula[: last.start()] + str(int(last.group()) + 1) + formula[last.end() :]
