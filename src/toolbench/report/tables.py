"""Every table ``toolbench report`` shows, as plain data, so the terminal, the HTML report and
the CSV/Markdown exports print the same numbers from one place.

A ``Grid`` is a title, column names and rows of cells; a cell is text or an ``Estimate`` (a
point with its 95% interval). Renderers turn grids into rich tables, Markdown or a long CSV
(one line per cell, with mean/low/high/n as numbers, which is what a paper's plotting script
wants).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table

from toolbench.report.bootstrap import Estimate
from toolbench.report.summary import (
    LoadedRun,
    columns_of,
    compare,
    comparison_note,
    summarize,
)

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


def model_of(run: LoadedRun) -> str:
    config = run.info.get("config")
    return str(config.get("model", "?"))[:200] if isinstance(config, dict) else "?"


def run_names(runs: Sequence[LoadedRun]) -> list[str]:
    """A column name per run: the folder name and model, the full path where names clash."""
    names = [run.label for run in runs]
    clash = {n for n in names if names.count(n) > 1}
    return [
        f"{str(run.folder) if run.label in clash else run.label} ({model_of(run)})" for run in runs
    ]


def counts_text(counts: dict[str, int]) -> str:
    c = counts
    return f"{c['scored'] + c['model_error']} ({c['scored']}/{c['model_error']}/{c['infra_error']})"


def status_grid(runs: Sequence[LoadedRun]) -> Grid:
    """Where each run stands (complete, interrupted, in progress; done of planned), first in
    every export, so a partial run's numbers are never read as a whole run's."""
    grid = Grid(
        title="run status",
        columns=["run", "status", "done", "planned", "resume with"],
        notes=[note] if (note := comparison_note(runs)) else [],
    )
    for run, name in zip(runs, run_names(runs), strict=True):
        status = run.status
        planned = "-" if status.planned is None else str(status.planned)
        resume = "" if status.finished else (status.resume or "its command again")
        grid.rows.append([name, status.state, str(status.done), planned, resume])
    return grid


def run_grid(run: LoadedRun) -> Grid:
    """One run: a row per task, a column per metric (``-`` where the task has none)."""
    columns = columns_of([run])
    grid = Grid(
        title=f"{run.label}  ({model_of(run)})",
        columns=[
            "task",
            "n (scored / model err / infra err)",
            *[f"{m} [95% CI]" for m in columns],
        ],
        key_columns=2,
    )
    for task, entry in summarize(run).items():
        row: list[Cell] = [task, counts_text(entry["counts"])]
        row += [entry.get(m, "-") for m in columns]
        grid.rows.append(row)
    return grid


def finished_run_grid(title: str, info: dict[str, Any]) -> Grid:
    """What ``toolbench run`` prints at its end, from run.json: a row per task with its counts
    and the task's metrics (mean ± spread over epochs where there are several)."""
    names = tuple(dict.fromkeys(m for ms in info.get("metric_names", {}).values() for m in ms))
    grid = Grid(title, ["task", "scored", "model err", "infra err", *names], key_columns=4)
    for task, metrics in info["metrics"].items():
        counts = info["counts"][task]
        spread = info.get("metrics_spread", {}).get(task, {})
        cells: list[Cell] = [task, *(str(counts[k]) for k in ("scored", "model_error"))]
        cells.append(str(counts["infra_error"]))
        for name in names:
            if name not in metrics:
                cells.append("-")
            elif name in spread:
                cells.append(f"{metrics[name]:.3f}±{spread[name]:.3f}")
            else:
                cells.append(f"{metrics[name]:.3f}")
        grid.rows.append(cells)
    return grid


def side_by_side(runs: Sequence[LoadedRun]) -> Grid:
    """Every run in one table: a row per task x metric, a column per run (model)."""
    summaries = [summarize(run) for run in runs]
    grid = Grid(
        title="all runs side by side (95% CIs)",
        columns=["task", "metric", *run_names(runs)],
        key_columns=2,
    )
    tasks = sorted({task for s in summaries for task in s})
    columns = columns_of(runs)
    for task in tasks:
        counts: list[Cell] = [
            counts_text(s[task]["counts"]) if task in s else "-" for s in summaries
        ]
        grid.rows.append([task, "n (scored/model err/infra err)", *counts])
        for metric in columns:
            cells: list[Cell] = [s.get(task, {}).get(metric, "-") for s in summaries]
            if any(isinstance(c, Estimate) for c in cells):
                grid.rows.append([task, metric, *cells])
    for run, summary in zip(runs, summaries, strict=True):
        others = {t for s in summaries if s is not summary for t in s}
        if not set(summary) & others:
            grid.notes.append(f"{run.label} shares no task with any other run")
    return grid


def differences(runs: Sequence[LoadedRun], reference: LoadedRun) -> Grid:
    """Paired differences (run - reference) over the samples both scored, a column per run;
    ``*`` marks a difference whose 95% interval excludes 0."""
    others = [run for run in runs if run is not reference]
    names = dict(zip(map(id, runs), run_names(runs), strict=True))
    grid = Grid(
        title=f"paired difference against {names[id(reference)]} "
        "(run - reference, 95% CIs; * interval excludes 0)",
        columns=["task", "metric", *[f"Δ {names[id(run)]}" for run in others]],
        key_columns=2,
        differences=True,
    )
    compared = [compare(reference, run) for run in others]
    for run, entry in zip(others, compared, strict=True):
        if not entry:
            grid.notes.append(f"{run.label} shares no task with the reference {reference.label}")
    tasks = sorted({task for c in compared for task in c})
    for task in tasks:
        paired = [c.get(task, {}) for c in compared]
        ns = [str(next(iter(p.values())).n) if p else "-" for p in paired]
        grid.rows.append([task, "n paired", *ns])
        for metric in columns_of(runs):
            cells: list[Cell] = [p.get(metric, "-") for p in paired]
            if any(metric in p for p in paired):
                grid.rows.append([task, f"Δ {metric}", *cells])
    return grid


def task_grids(runs: Sequence[LoadedRun], reference: LoadedRun | None) -> list[Grid]:
    """The tables of task runs: one per run (one or two runs) or one side by side (three or
    more), and the paired differences against the reference when there are two or more."""
    if not runs:
        return []
    grids = [run_grid(run) for run in runs] if len(runs) < 3 else [side_by_side(runs)]
    if len(runs) >= 2:
        grids.append(differences(runs, reference or runs[0]))
    return grids


# -- renderers --------------------------------------------------------------------------------


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
