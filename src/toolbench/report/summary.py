"""``toolbench report``: per-task metrics with 95% bootstrap intervals, and paired comparisons.

Intervals resample samples: each sample's value is averaged over its epochs first, so epochs
tighten the estimate of each sample without pretending to be more samples. Infra errors are
excluded (and counted).

Before any number is shown, each run's log is checked against the checksum chain its run.json
anchors (``runner/chain.py``): a log modified after it was written is refused unless
``--allow-modified``. The run's isolation level (how well programs were kept away from the
machine and the run folder) is shown with it, with a warning when it was not full.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.errors import UserError
from toolbench.report.tokens import tokens_line
from toolbench.runner.chain import MODIFIED
from toolbench.runner.status import RunStatus, run_status
from toolbench.runner.store import SAMPLES_FILE, load_log, read_run_info
from toolbench.tables.bootstrap import Estimate, bootstrap_mean, paired_difference, seed_for
from toolbench.tables.runs import counts_of

REPORT_METRICS = ("success_rate", "crash_rate", "precision", "recall", "f1")


def metric_names(run: LoadedRun, task: str) -> tuple[str, ...]:
    """The task's own metrics, as the run recorded them (``run.json`` ``metric_names``); for
    runs written before that, the registered task's; else the ToolBench set. A task reports
    only its own metrics: google_sheets defines no precision/recall/F1, so it shows none."""
    recorded = run.info.get("metric_names")
    names = recorded.get(task) if isinstance(recorded, dict) else None
    if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
        return tuple(names)[:20]
    from toolbench.tasks.registry import find_task

    known = find_task(task)
    return tuple(known.metrics) if known is not None else REPORT_METRICS


def columns_of(runs: Sequence[LoadedRun]) -> tuple[str, ...]:
    """Every metric any task of these runs has, the usual ones first."""
    seen = dict.fromkeys(REPORT_METRICS)
    for run in runs:
        for task in run.by_task:
            seen.update(dict.fromkeys(metric_names(run, task)))
    wanted = {m for run in runs for task in run.by_task for m in metric_names(run, task)}
    return tuple(m for m in seen if m in wanted)


def id_order(key: str) -> tuple[int, int, str]:
    """Sample ids in a fixed order (numbers numerically, then names), whatever order the
    samples finished in: the bootstrap must see the same values in the same order."""
    return (0, int(key), "") if key.isdigit() and len(key) < 19 else (1, 0, key)


def per_sample_values(records: Sequence[dict[str, Any]], metric: str) -> dict[str, float]:
    """Sample id -> metric value averaged over epochs (infra errors left out), in id order.

    A per-sample metric (not success or crash rate) that no record of the task holds is not
    the task's: then nothing is returned and tables show ``-``, rather than scoring crashed
    samples 0 on a metric the task never had."""
    if metric not in ("success_rate", "crash_rate") and not any(
        metric in (r.get("metrics") or {}) for r in records
    ):
        return {}
    sums: dict[str, list[float]] = defaultdict(list)
    for r in records:
        if r["status"] == "infra_error":
            continue
        if metric == "success_rate":
            value = 1.0 if r.get("success") else 0.0
        elif metric == "crash_rate":
            value = 1.0 if r["status"] == "model_error" else 0.0
        else:
            raw = (r.get("metrics") or {}).get(metric)  # null: a NaN the log refused
            if raw is None and r["status"] == "scored":
                continue
            value = float(raw or 0.0)
        sums[str(r["id"])].append(value)
    return {key: sum(sums[key]) / len(sums[key]) for key in sorted(sums, key=id_order)}


class LoadedRun:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.info = read_run_info(folder)
        self.records, self.log = load_log(folder, self.info)
        self.by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in self.records:
            self.by_task[record["task"]].append(record)

    @property
    def label(self) -> str:
        return self.folder.name

    @functools.cached_property
    def status(self) -> RunStatus:
        """Complete, in progress (another process holds the folder), interrupted...: said
        wherever this run's numbers are printed."""
        return run_status(self.folder, self.info, self.records)

    @property
    def log_line(self) -> str:
        return self.log.describe(self.folder / SAMPLES_FILE)

    @property
    def isolation(self) -> dict[str, Any] | None:
        """run.json's ``isolation`` (the sandbox's, written when a session of the run ends), or
        None while a session is still going or after its process was killed before that."""
        raw = self.info.get("isolation")
        if raw is None:
            return None
        raw = raw if isinstance(raw, dict) else {}
        missing = raw.get("missing")
        return {
            "level": str(raw.get("level", "unknown"))[:40],
            "missing": [str(m)[:80] for m in missing[:20]] if isinstance(missing, list) else [],
            "summary": str(raw.get("summary", ""))[:300],
        }


def load_runs(folders: Sequence[Path], allow_modified: bool) -> list[LoadedRun]:
    """The runs to report; a run whose log was modified after it was written is refused
    (one line naming file:line) unless ``allow_modified``."""
    runs = [LoadedRun(folder) for folder in folders]
    for run in runs:
        if run.log.state == MODIFIED and not allow_modified:
            raise UserError(f"{run.log_line}; report it anyway with --allow-modified")
    return runs


def render_checks(run: LoadedRun, console: Console) -> None:
    """The lines above a run's tables: log check, isolation level and tokens (plain text:
    run.json strings are never read as markup)."""

    def say(text: str, style: str) -> None:
        console.print(text, style=style, markup=False, soft_wrap=True)

    status = run.status
    say(f"{run.folder}: {status.line()}", "dim" if status.finished else "bold yellow")
    if run.log.state == MODIFIED:
        say(f"WARNING: {run.log_line}; these numbers cannot be trusted", "bold red")
    else:  # "log verified (N records)"
        say(run.log_line, "dim")
    isolation = run.isolation
    if isolation is not None:
        level, summary = isolation["level"], isolation["summary"]
        say(f"isolation: {summary if summary.startswith(level) else f'{level} - {summary}'}", "dim")
        if isolation["level"] != "full":
            missing = ", ".join(isolation["missing"]) or "not stated"
            warning = f"warning: programs ran with isolation level {level} (not full; missing: "
            say(f"{warning}{missing})", "bold yellow")
    tokens = tokens_line(run.info)
    if tokens is not None:
        say(tokens, "dim")


def checks_json(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    """``log`` and ``isolation`` per run folder, for ``report --json``."""
    return {
        "log": {
            str(run.folder): {
                "state": run.log.state,
                "records": run.log.records,
                **({"line": run.log.line, "reason": run.log.reason} if run.log.line else {}),
            }
            for run in runs
        },
        "isolation": {str(run.folder): run.isolation for run in runs if run.isolation},
        "status": {str(run.folder): run.status.as_json() for run in runs},
        **({"comparison_note": note} if (note := comparison_note(runs)) else {}),
    }


def comparison_note(runs: Sequence[LoadedRun]) -> str | None:
    """When runs are put side by side and some are not finished: which, and what that means
    for the comparison (None when all are finished, or for a single run)."""
    unfinished = [run for run in runs if not run.status.finished]
    if len(runs) < 2 or not unfinished:
        return None
    names = "; ".join(
        f"{run.label} is {run.status.state} ({run.status.share})" for run in unfinished
    )
    return (
        f"comparing runs that are not all finished: {names}. Its numbers cover only the "
        "samples done so far; paired differences use only the samples both runs have"
    )


def summarize(run: LoadedRun) -> dict[str, dict[str, Any]]:
    """Task -> {metric: Estimate, 'counts': {...}} for one run."""
    out: dict[str, dict[str, Any]] = {}
    for task, records in sorted(run.by_task.items()):
        entry: dict[str, Any] = {"counts": counts_of(records)}
        for metric in metric_names(run, task):
            values = per_sample_values(records, metric)
            if values:
                entry[metric] = bootstrap_mean(list(values.values()), seed=seed_for(task))
        out[task] = entry
    return out


def compare(a: LoadedRun, b: LoadedRun) -> dict[str, dict[str, Estimate]]:
    """Task -> metric -> interval of (b - a) over the samples both runs scored."""
    out: dict[str, dict[str, Estimate]] = {}
    for task in sorted(set(a.by_task) & set(b.by_task)):
        entry = {}
        for metric in metric_names(b, task):
            va = per_sample_values(a.by_task[task], metric)
            vb = per_sample_values(b.by_task[task], metric)
            common = sorted(set(va) & set(vb), key=id_order)
            if common:
                entry[metric] = paired_difference(
                    [va[k] for k in common], [vb[k] for k in common], seed=seed_for(task)
                )
        out[task] = entry
    return out


def _est(e: Estimate) -> dict[str, float]:
    return {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}


def report_json(runs: Sequence[LoadedRun]) -> dict[str, Any]:
    result: dict[str, Any] = {"runs": {}}
    for run in runs:
        result["runs"][str(run.folder)] = {
            task: {k: (_est(v) if isinstance(v, Estimate) else v) for k, v in entry.items()}
            for task, entry in summarize(run).items()
        }
    return result


def difference_json(reference: LoadedRun, run: LoadedRun) -> dict[str, Any]:
    """Task -> metric -> interval of (run - reference)."""
    return {
        task: {m: _est(e) for m, e in entry.items()}
        for task, entry in compare(reference, run).items()
    }
