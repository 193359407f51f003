"""A table as plain data (``Grid``) and its renderers: rich (terminal), Markdown, long CSV.

A grid is a title, column names and rows of cells; a cell is text or an ``Estimate`` (a point
with its 95% interval). The renderers print the same grid in each medium, so the terminal, the
HTML report and the CSV/Markdown exports show the same numbers. The long CSV has one line per
cell, with mean/low/high/n as numbers, which is what a paper's plotting script wants.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from toolbench.tables.bootstrap import Estimate

Cell = str | Estimate


@dataclass
class Grid:
    """One table: ``key_columns`` leading text columns name the row; the rest hold values."""

    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)
    key_columns: int = 1
    notes: list[str] = field(default_factory=list)
    #: Differences: an interval that excludes 0 is marked ``*`` (and flagged in the CSV).
    differences: bool = False

    def text(self, cell: Cell) -> str:
        if isinstance(cell, Estimate):
            return f"{cell.fmt()} *" if self.differences and significant(cell) else cell.fmt()
        return cell


def significant(e: Estimate) -> bool:
    """A paired difference whose 95% interval excludes 0."""
    return e.defined and (e.low > 0 or e.high < 0)


def render_rich(grid: Grid, console: Console) -> None:
    """The grid as a table when its cells fit the terminal unwrapped (headers may wrap at
    spaces); else ``stacked`` (a few columns, a section per row), so no number is broken over
    lines and no name is cut."""
    widths = cell_widths(grid)
    if 1 + sum(width + 3 for width in widths) <= console.width:
        table = Table(title=grid.title)
        for column, width in zip(grid.columns, widths, strict=True):
            table.add_column(column, overflow="fold", min_width=width)
        for row in grid.rows:
            table.add_row(*[grid.text(c) for c in row])
        console.print(table)
    else:
        console.print(stacked(grid))
    for note in grid.notes:
        console.print(note, style="yellow", markup=False)


def cell_widths(grid: Grid) -> list[int]:
    """Per column, the width its cells need unwrapped (and its header's longest word)."""
    widths = [max((len(word) for word in column.split()), default=1) for column in grid.columns]
    for row in grid.rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], cell_len(grid.text(cell)))
    return widths


def stacked(grid: Grid) -> Table:
    """A wide grid turned on its side: its value columns become rows, one section per row of
    the grid, so the table is three or four columns wide whatever the number of metrics or
    runs. When the first key (a task) names one row each, the other keys become rows too and
    ``-`` cells (metrics the task does not have) are left out; else the other keys stay
    columns (task, metric, run, value)."""
    k = grid.key_columns
    first = [grid.text(row[0]) for row in grid.rows]
    one_row_each = len(set(first)) == len(first)
    middle = [] if one_row_each else grid.columns[1:k]
    table = Table(title=grid.title)
    for column in [grid.columns[0], *middle, "", "value"]:
        table.add_column(column, overflow="fold")
    for index, (name, row) in enumerate(zip(first, grid.rows, strict=True)):
        shown_name = "" if index and first[index - 1] == name else name
        keys = [grid.text(c) for c in row[1:k]]
        pairs = list(zip(grid.columns[k:], map(grid.text, row[k:]), strict=True))
        if one_row_each:
            pairs = [*zip(grid.columns[1:k], keys, strict=True)]
            pairs += [
                (c, t)
                for c, t in zip(grid.columns[k:], map(grid.text, row[k:]), strict=True)
                if t != "-"
            ]
            keys = []
        for number, (column, text) in enumerate(pairs):
            lead = [shown_name, *keys] if number == 0 else [""] * (1 + len(keys))
            table.add_row(*lead, column, text, end_section=number == len(pairs) - 1)
    return table


def _md_cell(text: str) -> str:
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def to_markdown(grids: Sequence[Grid]) -> str:
    """Every table as a GitHub Markdown pipe table under a heading (for issue threads)."""
    out = []
    for grid in grids:
        out.append(f"### {_md_cell(grid.title)}\n")
        out.append("| " + " | ".join(_md_cell(c) for c in grid.columns) + " |")
        out.append("|" + "|".join("---" for _ in grid.columns) + "|")
        for row in grid.rows:
            out.append("| " + " | ".join(_md_cell(grid.text(c)) for c in row) + " |")
        out.extend(f"\n_{_md_cell(note)}_" for note in grid.notes)
        out.append("")
    return "\n".join(out) + "\n"


CSV_HEADER = ("table", "row", "column", "value", "mean", "low", "high", "n", "significant")


def to_csv(grids: Sequence[Grid]) -> str:
    """Every cell of every table as one line: which table, which row (its key columns joined
    by `` / ``), which column, the text shown, and for intervals the numbers themselves."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for grid in grids:
        for row in grid.rows:
            k = grid.key_columns
            key = " / ".join(grid.text(c) for c in row[:k])
            for column, cell in zip(grid.columns[k:], row[k:], strict=True):
                numbers: list[object] = ["", "", "", "", ""]
                if isinstance(cell, Estimate) and cell.defined:
                    flag = str(significant(cell)).lower() if grid.differences else ""
                    numbers = [repr(cell.mean), repr(cell.low), repr(cell.high), cell.n, flag]
                writer.writerow([grid.title, key, column, grid.text(cell), *numbers])
    return buffer.getvalue()
