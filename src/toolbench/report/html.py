"""``toolbench report --html FILE``: one self-contained HTML file.

Everything is inline (CSS, the explorer's script, the plots as data URIs, the data as one
compressed payload), so the file works from ``file://``, as an e-mail attachment and with the
network off. The page is rendered by jinja2 with autoescaping; the explorer writes every
record string with ``textContent``. As a second wall, a Content-Security-Policy allows no
network source at all and only the one script whose hash the page carries, so markup that
somehow got through could neither run nor load anything.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from toolbench.aware.evaluate.tables import aware_grids, aware_pair_grids
from toolbench.package import __version__, default_cache_dir
from toolbench.report import audits, explorer, plots
from toolbench.report.reliability import reliability_grids
from toolbench.report.summary import (
    LoadedRun,
    columns_of,
    compare,
    comparison_note,
    summarize,
)
from toolbench.report.tables import counts_text, differences, run_names
from toolbench.report.tokens import overflow_notes, tokens_line
from toolbench.tables.bootstrap import Estimate
from toolbench.tables.grid import significant
from toolbench.tables.runs import model_of


def _resource(name: str) -> str:
    return (
        resources.files("toolbench.report").joinpath("templates").joinpath(name).read_text("utf-8")
    )


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("toolbench.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals["is_estimate"] = lambda cell: isinstance(cell, Estimate)
    env.globals["significant"] = significant
    return env


def _cell(e: Estimate | None) -> dict[str, Any] | None:
    if e is None or not e.defined:
        return None
    return {"text": e.fmt(), "mean": e.mean, "low": e.low, "high": e.high, "n": e.n}


def overview(runs: Sequence[LoadedRun]) -> list[dict[str, Any]]:
    """Per task: counts per run and, per metric, each run's estimate (None: ``-``)."""
    summaries = [summarize(run) for run in runs]
    columns = columns_of(runs)
    out = []
    for task in sorted({t for s in summaries for t in s}):
        metrics = []
        for metric in columns:
            cells = [_cell(s.get(task, {}).get(metric)) for s in summaries]
            if any(cells):
                metrics.append({"name": metric, "cells": cells})
        counts = [counts_text(s[task]["counts"]) if task in s else "-" for s in summaries]
        out.append({"task": task, "counts": counts, "metrics": metrics})
    return out


def overflow_lines(runs: Sequence[LoadedRun]) -> list[str]:
    """Per run and task with context overflows, the line under the overview (the run named
    only where there are several)."""
    out = []
    for run, name in zip(runs, run_names(runs), strict=True):
        counts = {task: entry["counts"] for task, entry in summarize(run).items()}
        out += overflow_notes(counts, prefix=f"{name}: " if len(runs) > 1 else "")
    return out


def _plots(runs: Sequence[LoadedRun], reference: LoadedRun | None) -> list[dict[str, str]]:
    """A forest plot per metric (tasks x runs), and one of paired differences per metric."""
    names = [f"{run.label} ({model_of(run)})" for run in runs]
    summaries = [summarize(run) for run in runs]
    others = [i for i, run in enumerate(runs) if run is not reference]
    compared = {i: compare(reference, runs[i]) for i in others} if reference else {}
    out = []
    for metric in columns_of(runs):
        points = [
            plots.Point(task, i, entry[metric])
            for i, summary in enumerate(summaries)
            for task, entry in summary.items()
            if metric in entry
        ]
        uri = plots.forest(f"{metric} (95% CI)", points, names)
        if uri:
            out.append({"metric": metric, "kind": "estimates", "uri": uri})
        deltas = [
            plots.Point(task, i, entry[metric])
            for i, by_task in compared.items()
            for task, entry in by_task.items()
            if metric in entry
        ]
        uri = plots.forest(f"Δ {metric} vs {reference.label if reference else ''}", deltas, names,
                           zero_line=True)  # fmt: skip
        if uri and deltas:
            out.append({"metric": metric, "kind": "differences", "uri": uri})
    return out


def _run_rows(runs: Sequence[LoadedRun]) -> list[dict[str, Any]]:
    rows = []
    for index, run in enumerate(runs):
        isolation = run.isolation
        rows.append(
            {
                "index": index,
                "label": run.label,
                "folder": str(run.folder),
                "model": model_of(run),
                "kind": str(run.info.get("kind", "tasks"))[:20],
                "status": f"{run.status.state}: {run.status.share}",
                "status_line": run.status.line(),
                "finished": run.status.finished,
                "log": run.log_line,
                "modified": run.log.state == "modified",
                "isolation": isolation["summary"] if isolation else "not recorded",
                "isolation_full": bool(isolation and isolation["level"] == "full"),
                "records": run.record_count,
                "tokens": _tokens_text(run.info),
            }
        )
    return rows


def _tokens_text(info: dict[str, Any]) -> str:
    """The runs table's tokens cell: the totals, or why there are none (a model that reports
    no tokens is not a run that lost its counts)."""
    line = tokens_line(info)
    if line is not None:
        return line.removeprefix("tokens: ")
    tokens = info.get("tokens")
    return "none reported by the model" if isinstance(tokens, dict) and tokens else "not recorded"


def render(
    runs: Sequence[LoadedRun], reference: LoadedRun | None, cache_dir: Path | None = None
) -> str:
    """The whole page as a string; differences are taken against ``reference`` (a task run)."""
    task_runs = [r for r in runs if r.info.get("kind", "tasks") != "aware"]
    aware_pairs = aware_pair_grids(runs, reference)  # two awareness runs: their differences
    if reference not in task_runs:
        reference = task_runs[0] if task_runs else None
    paired = reference is not None and len(task_runs) >= 2
    script = _resource("report.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    context = {
        "version": __version__,
        "generated": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": _run_rows(runs),
        "comparison_note": comparison_note(runs),
        "overview": overview(task_runs),
        "overflow_notes": overflow_lines(task_runs),
        "task_run_names": [f"{r.label} ({model_of(r)})" for r in task_runs],
        "task_run_indexes": [runs.index(r) for r in task_runs],
        "difference_grids": [differences(task_runs, reference)] if reference and paired else [],
        "reliability_grids": reliability_grids(task_runs),
        "plots": _plots(task_runs, reference if paired else None),
        "audits": audits.audits(task_runs),
        "aware_grids": [g for r in runs if r not in task_runs for g in aware_grids(r)]
        + aware_pairs,
        "payload": explorer.pack(
            {
                "runs": [{"label": r.label, "model": model_of(r)} for r in runs],
                **explorer.explorer_data(runs, cache_dir),
            }
        ),
        "epochs_shown": explorer.EPOCHS_SHOWN,
        "style": _resource("report.css"),
        "script": script,
        "script_hash": f"sha256-{digest}",
    }
    return _environment().get_template("report.html.j2").render(**context)


def write_report(runs: Sequence[LoadedRun], reference: LoadedRun | None, path: Path) -> int:
    """Write the page; its size in bytes."""
    text = render(runs, reference, default_cache_dir())
    data = text.encode("utf-8")
    path.write_bytes(data)
    return len(data)
