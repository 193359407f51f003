"""``toolbench report``: metrics with intervals per run (one side-by-side table for three or
more runs), paired differences against a reference run, and exports (HTML, CSV, Markdown)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.aware.evaluate import summary as aware
from toolbench.aware.evaluate.tables import aware_grids, aware_pair_grids
from toolbench.errors import UserError
from toolbench.report import summary as tables
from toolbench.report.endpoints import endpoint_lines, endpoint_stats
from toolbench.report.reliability import reliability_json
from toolbench.report.tables import status_grid, task_grids
from toolbench.tables.grid import render_rich, to_csv, to_markdown


def _reference(runs: Sequence[Any], wanted: Path | None) -> Any:
    if wanted is None:
        return runs[0]
    for run in runs:
        if run.folder.resolve() == wanted.resolve():
            return run
    raise UserError(
        f"--reference {wanted}: not one of the runs being reported; name one of "
        + ", ".join(str(run.folder) for run in runs)
    )


def _check_outputs(args: argparse.Namespace) -> None:
    """An output path that is a folder, or whose folder is missing, is refused before any work."""
    for flag in ("html", "csv", "markdown"):
        path: Path | None = getattr(args, flag)
        if path is None:
            continue
        if path.is_dir():
            raise UserError(f"--{flag} {path}: is a folder; name a file to write")
        if not path.parent.is_dir():
            raise UserError(f"--{flag} {path}: folder {path.parent} does not exist; create it")


def command_report(args: argparse.Namespace, console: Console) -> int:
    _check_outputs(args)
    runs = tables.load_runs(args.runs, args.allow_modified)
    kinds = [run.info.get("kind", "tasks") for run in runs]
    reference = _reference(runs, args.reference)
    # With --json, stdout is the JSON document alone: notes go to stderr.
    notes = Console(stderr=True, width=console.width) if args.json else console
    if len(runs) == 2 and kinds[0] != kinds[1]:  # each is shown; no difference is taken
        notes.print(
            f"no paired difference: {runs[0].folder} ({kinds[0]}) and {runs[1].folder} "
            f"({kinds[1]}) are runs of different kinds",
            style="yellow",
            markup=False,
        )
    task_runs = [r for r, k in zip(runs, kinds, strict=True) if k != "aware"]
    aware_runs = [r for r, k in zip(runs, kinds, strict=True) if k == "aware"]
    if args.csv or args.markdown or args.html:
        grids = _all_grids(task_runs, aware_runs, reference)
        _write_exports(args, grids, runs, reference, notes)
    if args.json:
        print(json.dumps(_json(runs, kinds, reference), indent=2))
        return 0
    _render_terminal(runs, kinds, task_runs, reference, console)
    return 0


def _all_grids(task_runs: list[Any], aware_runs: list[Any], reference: Any) -> list[Any]:
    task_reference = reference if reference in task_runs else None
    grids = [status_grid([*task_runs, *aware_runs]), *task_grids(task_runs, task_reference)]
    for run in aware_runs:
        grids += aware_grids(run)
    return grids + aware_pair_grids([*task_runs, *aware_runs], reference)


def _write_exports(
    args: argparse.Namespace, grids: list[Any], runs: list[Any], reference: Any, console: Console
) -> None:
    if args.csv is not None:
        args.csv.write_text(to_csv(grids), encoding="utf-8")
        console.print(f"wrote {args.csv}", markup=False, highlight=False)
    if args.markdown is not None:
        args.markdown.write_text(to_markdown(grids), encoding="utf-8")
        console.print(f"wrote {args.markdown}", markup=False, highlight=False)
    if args.html is not None:
        # deferred: --html only; the HTML report loads matplotlib and jinja2 (~330 modules)
        from toolbench.report.html import write_report

        size = write_report(runs, reference, args.html)
        console.print(f"wrote {args.html} ({size / 1e6:.2f} MB)", markup=False, highlight=False)


def _render_terminal(
    runs: list[Any], kinds: list[str], task_runs: list[Any], reference: Any, console: Console
) -> None:
    for run in runs:
        tables.render_checks(run, console)
    note = tables.comparison_note(runs)
    if note:
        console.print(note, style="bold yellow", markup=False, soft_wrap=True)
    for line in tables.environment_warnings_of(runs):  # made in ways that change numbers
        console.print(f"warning: {line}", style="bold yellow", markup=False, soft_wrap=True)
    for run, kind in zip(runs, kinds, strict=True):
        if kind == "aware":
            aware.render_aware(run, console)
    for grid in task_grids(task_runs, reference if reference in task_runs else None):
        render_rich(grid, console)
    for run in runs:  # a pool of endpoints (--base-url repeated): what each one did
        lines = endpoint_lines(run.info)
        if lines:
            heading = f"{run.folder}: {lines[0]}" if len(runs) > 1 else lines[0]
            for line in [heading, *lines[1:]]:
                console.print(line, markup=False, highlight=False, soft_wrap=True)
    if len(runs) == 2 and kinds == ["aware", "aware"]:
        other = runs[1] if reference is runs[0] else runs[0]
        aware.render_aware_comparison(reference, other, console)


def _json(runs: list[Any], kinds: list[str], reference: Any) -> dict[str, Any]:
    task_runs = [r for r, k in zip(runs, kinds, strict=True) if k != "aware"]
    result = tables.report_json(task_runs)
    for run in task_runs:  # several epochs: pass@k and pass^k beside each task's metrics
        for task, entry in reliability_json(run).items():
            result["runs"][str(run.folder)][task]["reliability"] = entry
    for run, kind in zip(runs, kinds, strict=True):
        if kind == "aware":
            result["runs"][str(run.folder)] = aware.aware_json(run)
    if len(runs) == 2 and kinds[0] == kinds[1]:
        other = runs[1] if reference is runs[0] else runs[0]
        if kinds[0] == "aware":
            result["difference"] = aware.aware_comparison_json(reference, other)
        else:
            result["difference"] = tables.difference_json(reference, other)
    elif len(task_runs) > 2:
        result["differences"] = {
            str(run.folder): tables.difference_json(reference, run)
            for run in task_runs
            if run is not reference
        }
        result["reference"] = str(reference.folder)
    pools = {str(run.folder): endpoint_stats(run.info) for run in runs}
    if any(pools.values()):  # a pool of endpoints: per run, the counts of each endpoint
        result["endpoints"] = {folder: stats for folder, stats in pools.items() if stats}
    return {**result, **tables.checks_json(runs)}
