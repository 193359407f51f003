"""The tables of task runs that ``toolbench report`` shows, as ``Grid`` data: where each run
stands, one run's metrics, runs side by side, paired differences, with several epochs pass@k
and pass^k (``report/reliability.py``), and the table ``toolbench run`` prints at its end.
The terminal, the HTML report and the CSV/Markdown exports render these same grids
(``toolbench.tables.grid``), so they print the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolbench.report.reliability import reliability_grids
from toolbench.report.summary import (
    LoadedRun,
    columns_of,
    compare,
    comparison_note,
    summarize,
)
from toolbench.report.tokens import TOKEN_COLUMNS, overflow_notes, overflows_of, token_cells
from toolbench.tables.bootstrap import Estimate
from toolbench.tables.grid import Cell, Grid
from toolbench.tables.runs import model_of


def run_names(runs: Sequence[LoadedRun]) -> list[str]:
    """A column name per run: the folder name and model, the full path where names clash."""
    names = [run.label for run in runs]
    clash = {n for n in names if names.count(n) > 1}
    return [
        f"{str(run.folder) if run.label in clash else run.label} ({model_of(run)})" for run in runs
    ]


def counts_text(counts: dict[str, int]) -> str:
    """``n (scored/model errors/infra errors)``, and the context overflows among the model
    errors when there are any (CSV and HTML cells carry them too, not only the notes)."""
    c = counts
    text = f"{c['scored'] + c['model_error']} ({c['scored']}/{c['model_error']}/{c['infra_error']})"
    n = overflows_of(c)
    return f"{text}, {n} context overflow{'' if n == 1 else 's'}" if n else text


def status_grid(runs: Sequence[LoadedRun]) -> Grid:
    """Where each run stands (complete, interrupted, in progress; done of planned), first in
    every export, so a partial run's numbers are never read as a whole run's."""
    grid = Grid(
        title="run status",
        columns=["run", "status", "done", "planned", "resume with", *TOKEN_COLUMNS],
        notes=[note] if (note := comparison_note(runs)) else [],
    )
    for run, name in zip(runs, run_names(runs), strict=True):
        status = run.status
        planned = "" if status.planned is None else str(status.planned)
        resume = "" if status.finished else (status.resume or "its command again")
        cells = [name, status.state, str(status.done), planned, resume]
        grid.rows.append([*cells, *token_cells(run.info)])
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
    summary = summarize(run)
    for task, entry in summary.items():
        row: list[Cell] = [task, counts_text(entry["counts"])]
        row += [entry.get(m, "-") for m in columns]
        grid.rows.append(row)
    grid.notes += overflow_notes({task: entry["counts"] for task, entry in summary.items()})
    return grid


def finished_run_grid(title: str, info: dict[str, Any]) -> Grid:
    """What ``toolbench run`` prints at its end, from run.json: a row per task with its counts
    and the task's metrics (mean ± spread over epochs where there are several); a note per task
    with context overflows."""
    names = tuple(dict.fromkeys(m for ms in info.get("metric_names", {}).values() for m in ms))
    grid = Grid(title, ["task", "scored", "model err", "infra err", *names], key_columns=4)
    grid.notes += overflow_notes({task: info["counts"].get(task) for task in info["metrics"]})
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
    for name, summary in zip(run_names(runs), summaries, strict=True):
        by_task = {task: entry["counts"] for task, entry in summary.items()}
        grid.notes += overflow_notes(by_task, prefix=f"{name}: ")
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
    grids += reliability_grids(runs)  # with several epochs: pass@k and pass^k per task
    if len(runs) >= 2:
        grids.append(differences(runs, reference or runs[0]))
    return grids
