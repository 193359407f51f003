"""What every request kind shares: reading the workbook's tables, phrasing a request with
exact slot substrings, and the shapes gold programs take (pandas round trip, gspread loop,
formula cell or column)."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolbench.kinds.pools import fill, render
from toolbench.tasks.google_sheets import workbook as wb
from toolbench.tasks.google_sheets.emulator import column_to_letters

Record = dict[str, Any]
READ = "df = get_as_dataframe(worksheet, evaluate_formulas=True)"
WRITE = "set_with_dataframe(worksheet, df, include_index=False, include_column_header=True)"
NO_FORMULAS = ("Products", "Employees")  # sheets where a pandas round trip loses nothing


def rows_of(sheet: str) -> list[list[Any]]:
    return wb.TABLES[sheet]


def last_row(sheet: str) -> int:
    """Sheet row number of the last data row."""
    return len(wb.TABLES[sheet])


def col_letter(sheet: str, header: str) -> str:
    return column_to_letters(wb.TABLES[sheet][0].index(header) + 1)


def last_letter(sheet: str) -> str:
    return column_to_letters(len(wb.TABLES[sheet][0]))


def pick_row(rng: random.Random, sheet: str) -> tuple[int, list[Any]]:
    row = rng.randrange(2, last_row(sheet) + 1)
    return row, wb.TABLES[sheet][row - 1]


def pandas_gold(*lines: str) -> str:
    return "\n".join([READ, *lines, WRITE])


def program(*lines: str) -> str:
    return "\n".join(lines)


def money(rng: random.Random, value: float) -> str:
    if value == int(value) and value >= 1000:
        return rng.choice((f"${int(value):,}", f"{int(value)}", f"${int(value)}"))
    text = f"{value:.2f}" if value != int(value) else f"{int(value)}"
    return rng.choice((f"${text}", f"${text}", text))


def make_record(
    rng: random.Random,
    sheet: str,
    templates: Sequence[str],
    values: dict[str, str],
    golds: list[str],
    check_format: bool = False,
    extra: dict[str, str] | None = None,
) -> Record:
    """Phrase the request with one of ``templates``; '{key}' marks a slot (every key of
    ``values`` must appear), ``extra`` fills non-essential words such as an old value."""
    template = rng.choice(templates)
    for key, text in (extra or {}).items():
        template = template.replace("{" + key + "}", text)
    keys = set(re.findall(r"\{(\w+)\}", template))
    if keys != set(values):
        raise ValueError(f"template {template!r} does not use exactly the slots {sorted(values)}")
    query, slots = render(rng, fill(template, values), typo_rate=0.05, lower_rate=0.0)
    return {
        "prompt": query,
        "completion": golds,
        "question_sheet_name": sheet,
        "check_format": check_format,
        "slots": slots,
    }


def formula_golds(cell: str, formula: str) -> list[str]:
    return [
        f"worksheet.update_acell({cell!r}, {formula!r})",
        f"worksheet.update([[{formula!r}]], {cell!r}, raw=False)",
    ]


def column_golds(sheet: str, col: str, header: str, formula: str) -> list[str]:
    """A header plus one formula per data row; ``formula`` uses {r} for the row number."""
    last = last_row(sheet)
    rows = f"[[f{formula!r}] for r in range(2, {last + 1})]"
    return [
        f"worksheet.update([[{header!r}]] + {rows}, '{col}1:{col}{last}', raw=False)",
        program(
            f"worksheet.update_acell('{col}1', {header!r})",
            f"formulas = {rows}",
            f"worksheet.update(formulas, '{col}2', raw=False)",
        ),
    ]


def loop_gold(sheet_test: str, *body: str) -> str:
    """A gspread loop over the data rows (i = sheet row) doing ``body`` where ``sheet_test``."""
    return program(
        "records = worksheet.get_all_records()",
        "for i, rec in enumerate(records, start=2):",
        f"    if {sheet_test}:",
        *(f"        {line}" for line in body),
    )


def rounding_agrees(values: Sequence[float], factor: float, digits: int) -> bool:
    """Python's round() and pandas' Series.round() (numpy) give the same result on each."""
    return all(round(v * factor, digits) == float(np.round(v * factor, digits)) for v in values)
