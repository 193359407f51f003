"""``toolbench report``: per-task metrics with 95% bootstrap intervals, and paired comparisons.

Intervals resample samples: each sample's value is averaged over its epochs first, so epochs
tighten the estimate of each sample without pretending to be more samples. Infra errors are
excluded (and counted).

Before any number is shown, each run's log is checked against the checksum chain its run.json
anchors (``runner/chain.py``): a log modified after it was written, or whose anchor does not
verify with this machine's key (a re-chained forgery), is refused unless ``--allow-modified``;
one line says whether the chain was verified with this machine's key or only found intact.
The run's isolation level (how well programs were kept away from the machine and the run
folder) is shown with it, with a warning when it was not full.
"""

from __future__ import annotations

import functools
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.errors import UserError
from toolbench.report.environment import environment_lines, environment_warnings
from toolbench.report.tokens import tokens_line
from toolbench.runner.chain import KEYED, MODIFIED
from toolbench.runner.donekeys import DoneKeys
from toolbench.runner.status import RunStatus, run_status
from toolbench.runner.store import SAMPLES_FILE, read_records, read_run_info, scan_log
from toolbench.tables.bootstrap import Estimate, bootstrap_mean, paired_difference, seed_for
from toolbench.tables.runs import add_count, empty_counts
from toolbench.tasks.registry import find_task

REPORT_METRICS = ("success_rate", "crash_rate", "precision", "recall", "f1")


def metric_names(run: LoadedRun, task: str) -> tuple[str, ...]:
    """The task's own metrics, as the run recorded them (``run.json`` ``metric_names``); for
    runs written before that, the registered task's; else the ToolBench set. A task reports
    only its own metrics: google_sheets defines no precision/recall/F1, so it shows none."""
    recorded = run.info.get("metric_names")
    names = recorded.get(task) if isinstance(recorded, dict) else None
    if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
        return tuple(names)[:20]
    known = find_task(task)
    return tuple(known.metrics) if known is not None else REPORT_METRICS


def columns_of(runs: Sequence[LoadedRun]) -> tuple[str, ...]:
    """Every metric any task of these runs has, the usual ones first."""
    seen = dict.fromkeys(REPORT_METRICS)
    for run in runs:
        for task in run.tasks:
            seen.update(dict.fromkeys(metric_names(run, task)))
    wanted = {m for run in runs for task in run.tasks for m in metric_names(run, task)}
    return tuple(m for m in seen if m in wanted)


def id_order(key: str) -> tuple[int, int, str]:
    """Sample ids in a fixed order (numbers numerically, then names), whatever order the
    samples finished in: the bootstrap must see the same values in the same order."""
    return (0, int(key), "") if key.isdigit() and len(key) < 19 else (1, 0, key)


ALWAYS = ("success_rate", "crash_rate")  # every task has these (from status and success)
MAX_EPOCHS = 100_000  # per-epoch success counts a task's tally keeps (later epochs: not split)


def per_sample_values(records: Sequence[dict[str, Any]], metric: str) -> dict[str, float]:
    """Sample id -> metric value averaged over epochs (infra errors left out), in id order.

    A per-sample metric (not success or crash rate) that no record of the task holds is not
    the task's: then nothing is returned and tables show ``-``, rather than scoring crashed
    samples 0 on a metric the task never had. (The list-based form of ``TaskTally``: a
    report streams the log into tallies instead.)"""
    tally = TaskTally((metric,))
    for r in records:
        tally.add(r)
    return tally.values(metric)


def _value(r: dict[str, Any], metric: str) -> float | None:
    """A record's value of ``metric`` for the per-sample means (None: it does not count)."""
    if metric == "success_rate":
        return 1.0 if r.get("success") else 0.0
    if metric == "crash_rate":
        return 1.0 if r["status"] == "model_error" else 0.0
    raw = (r.get("metrics") or {}).get(metric)  # null: a NaN the log refused
    if raw is None and r["status"] == "scored":
        return None
    return float(raw or 0.0)


class TaskTally:
    """What the report needs of one task's records, kept per sample as the log streams by:
    per metric a running sum and count per sample (added in log order, so the means are the
    very floats a list of the records gave), the status counts, and per sample its epochs'
    successes (for the audits). Nothing is kept per record."""

    def __init__(self, metrics: Sequence[str]) -> None:
        self.metrics = tuple(dict.fromkeys([*ALWAYS, *metrics]))
        self.counts = empty_counts()
        self.held: set[str] = set()  # per-sample metrics some record of the task holds
        self.sums: dict[str, dict[str, list[float]]] = {m: {} for m in self.metrics}
        self.epochs: dict[str, list[int]] = {}  # id -> [epochs not infra errors, successes]
        self.per_epoch: dict[int, list[int]] = {}  # epoch -> [trials not infra errors, successes]

    def add(self, r: dict[str, Any]) -> None:
        add_count(self.counts, r)
        metrics = r.get("metrics") or {}
        self.held.update(m for m in self.metrics if m in metrics)
        if r["status"] == "infra_error":
            return
        key = str(r["id"])
        seen = self.epochs.setdefault(key, [0, 0])
        seen[0] += 1
        seen[1] += bool(r.get("success"))
        epoch = r.get("epoch")
        if isinstance(epoch, int) and (epoch in self.per_epoch or len(self.per_epoch) < MAX_EPOCHS):
            trials = self.per_epoch.setdefault(epoch, [0, 0])
            trials[0] += 1
            trials[1] += bool(r.get("success"))
        for metric in self.metrics:
            value = _value(r, metric)
            if value is not None:
                total = self.sums[metric].setdefault(key, [0.0, 0])
                total[0] += value
                total[1] += 1

    def values(self, metric: str) -> dict[str, float]:
        """``per_sample_values`` of the task's records for ``metric``."""
        if metric not in ALWAYS and metric not in self.held:
            return {}
        sums = self.sums.get(metric, {})
        return {key: sums[key][0] / sums[key][1] for key in sorted(sums, key=id_order)}


class LoadedRun:
    """A run folder read for the report: its run.json, and its log read once as it streams
    (the chain checked on the way) into per-task, per-sample tallies. The records themselves
    are not held: ``records`` and ``by_task`` read the log again when asked (``toolbench
    show``, awareness runs), and the HTML explorer streams it again for what it embeds."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.info = read_run_info(folder)
        self.tallies: dict[str, TaskTally] = {}
        self.crashes: Counter[tuple[str, str]] = Counter()  # (task, masked reason) -> n
        self.crash_example: dict[tuple[str, str], str] = {}
        self.record_count = self.done = 0
        self._done_keys = DoneKeys()
        scan = scan_log(folder, self.info)
        for record in scan:
            self._add(record)
        self.log = scan.check

    def _add(self, record: dict[str, Any]) -> None:
        task = record["task"]
        tally = self.tallies.get(task)
        if tally is None:
            tally = self.tallies[task] = TaskTally(metric_names(self, task))
        tally.add(record)
        self.record_count += 1
        if record["status"] != "infra_error":  # a key written twice is done once
            epoch = record.get("epoch")
            at = epoch if isinstance(epoch, int) and epoch >= 0 else 0
            self.done += self._done_keys.add((task, str(record["id"]), at))
        if record["status"] == "model_error":
            key = (task, reason_of(str(record.get("message") or "")))
            if key in self.crashes or len(self.crashes) < MAX_CRASH_REASONS:
                self.crashes[key] += 1
                self.crash_example.setdefault(key, str(record["id"]))

    @property
    def tasks(self) -> list[str]:
        """The run's tasks, in the order the log first names them."""
        return list(self.tallies)

    @functools.cached_property
    def records(self) -> list[dict[str, Any]]:
        """Every record (read again from the log: ``show`` and awareness runs only)."""
        return read_records(self.folder)

    @functools.cached_property
    def by_task(self) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in self.records:
            out[record["task"]].append(record)
        return out

    @property
    def label(self) -> str:
        return self.folder.name

    @functools.cached_property
    def status(self) -> RunStatus:
        """Complete, in progress (another process holds the folder), interrupted...: said
        wherever this run's numbers are printed."""
        return run_status(self.folder, self.info, self.done)

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


# Distinct crash reasons a run's tally keeps (masked messages; a run of hostile messages
# that no mask collapses cannot grow it without bound): later new reasons are not counted.
MAX_CRASH_REASONS = 10_000
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")


def reason_of(message: str) -> str:
    """A crash message with what varies between samples masked (quoted names, numbers), so
    "name 'products' is not defined" and "name 'rows' is not defined" count as one reason."""
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    return _NUMBER.sub("N", _QUOTED.sub("'…'", first[:300]))


def load_runs(folders: Sequence[Path], allow_modified: bool) -> list[LoadedRun]:
    """The runs to report; a run whose log was modified after it was written is refused
    (one line naming file:line) unless ``allow_modified``."""
    runs = [LoadedRun(folder) for folder in folders]
    for run in runs:
        if run.log.state == MODIFIED and not allow_modified:
            raise UserError(f"{run.log_line}; report it anyway with --allow-modified")
    return runs


def agent_isolation(info: Mapping[str, Any]) -> dict[str, Any] | None:
    """run.json's ``agent_isolation`` (runs of an agent: what kept its processes in), bounded
    and typed, or None for a run of a model."""
    raw = info.get("agent_isolation")
    if not isinstance(raw, dict):
        return None
    missing = raw.get("missing")
    return {
        "level": str(raw.get("level", "unknown"))[:40],
        "missing": [str(m)[:80] for m in missing[:20]] if isinstance(missing, list) else [],
        "network": str(raw.get("network", ""))[:20],
        "summary": str(raw.get("summary", ""))[:300],
    }


def render_checks(run: LoadedRun, console: Console) -> None:
    """The lines above a run's tables: log check, isolation level and tokens (plain text:
    run.json strings are never read as markup)."""

    def say(text: str, style: str) -> None:
        console.print(text, style=style, markup=False, soft_wrap=True)

    status = run.status
    say(f"{run.folder}: {status.line()}", "dim" if status.finished else "bold yellow")
    if run.log.state == MODIFIED:
        say(f"WARNING: {run.log_line}; these numbers cannot be trusted", "bold red")
    else:  # "log verified (N records); log chain verified with this machine's key" or not
        keyed = run.log.provenance == KEYED and run.log.anchored == run.log.records
        say(run.log_line, "dim" if keyed or not run.log.provenance else "bold yellow")
    isolation = run.isolation
    if isolation is not None:
        level, summary = isolation["level"], isolation["summary"]
        say(f"isolation: {summary if summary.startswith(level) else f'{level} - {summary}'}", "dim")
        if isolation["level"] != "full":
            missing = ", ".join(isolation["missing"]) or "not stated"
            warning = f"warning: programs ran with isolation level {level} (not full; missing: "
            say(f"{warning}{missing})", "bold yellow")
    agents = agent_isolation(run.info)
    if agents is not None:
        say(f"agent isolation: {agents['summary']}", "dim")
        if agents["level"] != "full":
            say(f"warning: agent processes were not contained ({agents['level']})", "bold yellow")
    for line in environment_lines({run.label: run.info}):
        say(line, "dim")
    for line in environment_warnings({run.label: run.info}):
        say(f"warning: {line}", "bold yellow")
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
        # keyed | other_key | unkeyed (runner/chain.py); null for a modified log
        "provenance": {str(run.folder): run.log.provenance or None for run in runs},
        "isolation": {str(run.folder): run.isolation for run in runs if run.isolation},
        "agent_isolation": {
            str(run.folder): found for run in runs if (found := agent_isolation(run.info))
        },
        "status": {str(run.folder): run.status.as_json() for run in runs},
        "environment": {
            str(run.folder): run.info["environment"] for run in runs if "environment" in run.info
        },
        **({"comparison_note": note} if (note := comparison_note(runs)) else {}),
        **({"environment_warnings": warned} if (warned := environment_warnings_of(runs)) else {}),
    }


def environment_warnings_of(runs: Sequence[LoadedRun]) -> list[str]:
    """Where runs side by side were made in ways that can change their numbers (a run's own
    resumes under another environment are said with its checks)."""
    return environment_warnings({run.label: run.info for run in runs}) if len(runs) > 1 else []


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
    for task, tally in sorted(run.tallies.items()):
        entry: dict[str, Any] = {"counts": dict(tally.counts)}
        for metric in metric_names(run, task):
            values = tally.values(metric)
            if values:
                entry[metric] = bootstrap_mean(list(values.values()), seed=seed_for(task))
        out[task] = entry
    return out


def compare(a: LoadedRun, b: LoadedRun) -> dict[str, dict[str, Estimate]]:
    """Task -> metric -> interval of (b - a) over the samples both runs scored."""
    out: dict[str, dict[str, Estimate]] = {}
    for task in sorted(set(a.tallies) & set(b.tallies)):
        entry = {}
        for metric in metric_names(b, task):
            va = a.tallies[task].values(metric)
            vb = b.tallies[task].values(metric)
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
