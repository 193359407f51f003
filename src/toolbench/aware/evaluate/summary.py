"""Awareness results from run records: tables per task x source x manipulation with 95%
intervals, the confusion matrix, feedback accuracy per scenario, explanation accuracy (and the
judge's agreement with hand labels), explicit/implicit agreement, and paired differences of
two runs. ``toolbench report`` calls these for runs whose ``run.json`` says ``kind: aware``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.table import Table

from toolbench.aware.evaluate.metrics import (
    PAPER_METRICS,
    UNGAMEABLE_METRICS,
    Judged,
    agreement,
    binary_metrics,
    cohen_kappa,
    confusion,
    paired_metrics,
)
from toolbench.tables.bootstrap import Estimate, bootstrap_mean
from toolbench.tables.runs import RunResults as LoadedRun
from toolbench.tables.runs import counts_of

ALL = "all"
Row = tuple[str, str, str]  # (task, source, manipulation group)


def _judged(record: dict[str, Any]) -> Judged:
    d = record["details"]
    label = "complete" if d["expected"] == "yes" else "incomplete"
    return Judged(id=str(record["id"]), label=label, predicted=d.get("predicted"))


def _scored(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records a metric may use: scored or model errors (a model error is a wrong answer)."""
    out = []
    for r in records:
        if r["status"] == "infra_error":
            continue
        if r["status"] == "model_error":
            r = {**r, "details": {**r.get("details", {}), "predicted": None}}
        out.append(r)
    return out


def rows(records: Iterable[dict[str, Any]]) -> dict[Row, list[Judged]]:
    """Every (task, source, group) with its judged items, plus ``all`` rollups; explain
    records are not yes/no items and are summarised separately."""
    table: dict[Row, dict[str, Judged]] = defaultdict(dict)
    for r in _scored(records):
        if r["task"] == "aware-explain" or "expected" not in r.get("details", {}):
            continue
        d, item = r["details"], _judged(r)
        for group in [*d.get("groups", []), ALL]:
            for source in (d.get("source", "?"), ALL):
                table[(r["task"], source, group)][item.id] = item
    return {key: list(items.values()) for key, items in sorted(table.items(), key=_order)}


def _order(entry: tuple[Row, Any]) -> tuple[str, bool, str, bool, str]:
    (task, source, group), _ = entry
    return (task, source == ALL, source, group == ALL, group)


def summary_metrics(
    records: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, dict[str, int]]]:
    """Point values for run.json: task -> "source/group" -> metric (plus n)."""
    metrics: dict[str, Any] = defaultdict(dict)
    for (task, source, group), items in rows(records).items():
        estimates = binary_metrics(items)
        metrics[task][f"{source}/{group}"] = {
            **{m: round(e.mean, 6) for m, e in estimates.items()},
            "n": len(items),
        }
    explain = explain_summary(records)
    if explain:
        metrics["aware-explain"] = explain
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_task[r["task"]].append(r)
    return dict(metrics), {task: counts_of(rs) for task, rs in sorted(by_task.items())}


def explain_summary(
    records: list[dict[str, Any]], hand_labels: dict[str, bool] | None = None
) -> dict[str, Any]:
    explain = [r for r in _scored(records) if r["task"] == "aware-explain"]
    if not explain:
        return {}
    explained = [r for r in explain if r["metrics"].get("explained")]
    judged = [r for r in explained if "explanation_correct" in r["metrics"]]
    out: dict[str, Any] = {
        "incomplete_instances": len(explain),
        "explained": len(explained),
        "judged": len(judged),
        "judge_unparseable": len(explained) - len(judged),
        "judge_prompt_tokens": sum(r["details"].get("judge_prompt_tokens", 0) for r in explain),
        "judge_completion_tokens": sum(
            r["details"].get("judge_completion_tokens", 0) for r in explain
        ),
    }
    if judged:
        values = [r["metrics"]["explanation_correct"] for r in judged]
        e = bootstrap_mean(values)
        out["explanation_accuracy"] = {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}
    if hand_labels:
        pairs = [
            (bool(r["details"]["judge_verdict"]), hand_labels[r["id"]])
            for r in judged
            if r["id"] in hand_labels
        ]
        if pairs:
            out["judge_vs_hand_labels"] = {
                "n": len(pairs),
                "agreement": sum(1 for a, b in pairs if a == b) / len(pairs),
                "cohen_kappa": cohen_kappa(pairs),
            }
    return out


def feedback_by_scenario(records: list[dict[str, Any]]) -> dict[str, Estimate]:
    by: dict[str, list[float]] = defaultdict(list)
    for r in _scored(records):
        if r["task"] == "aware-feedback":
            by[r["details"]["scenario"]].append(1.0 if r["success"] else 0.0)
    return {name: bootstrap_mean(values) for name, values in sorted(by.items())}


AGREEMENT_PAIRS = ("aware-implicit", "aware-tools")  # each compared with explicit-0shot


def mode_agreement(records: list[dict[str, Any]]) -> dict[str, tuple[float, int]]:
    """Explicit (0-shot) vs implicit / tools: do the two ways of asking agree per instance?"""
    by_task: dict[str, list[Judged]] = defaultdict(list)
    for r in _scored(records):
        if r["task"] in ("aware-explicit-0shot", *AGREEMENT_PAIRS):
            by_task[r["task"]].append(_judged(r))
    out = {}
    for other in AGREEMENT_PAIRS:
        if by_task.get("aware-explicit-0shot") and by_task.get(other):
            out[f"explicit-0shot vs {other[6:]}"] = agreement(
                by_task["aware-explicit-0shot"], by_task[other]
            )
    return out


def agreement_by_group(
    records: list[dict[str, Any]],
) -> dict[tuple[str, str], dict[str, Estimate]]:
    """The paper's Table 6 layout: per (source, manipulation), the share of instances on which
    explicit-0shot and each other mode gave the same answer, with a 95% bootstrap interval."""
    table = rows(records)
    out: dict[tuple[str, str], dict[str, Estimate]] = {}
    for (task, source, group), explicit in table.items():
        if task != "aware-explicit-0shot":
            continue
        answers = {item.id: item.predicted for item in explicit}
        for other in AGREEMENT_PAIRS:
            theirs = table.get((other, source, group), [])
            same = [float(answers[i.id] == i.predicted) for i in theirs if i.id in answers]
            if same:
                out.setdefault((source, group), {})[other[6:]] = bootstrap_mean(same)
    return out


# Two tables per task, so each fits a 160-column terminal with points and intervals at the same
# precision: the paper's four, then the yes-ratio and the two a constant answer cannot game (the
# paper's F1 gives always-no 0.667 on a balanced set).
METRIC_TABLES = (
    ("the paper's metrics (positive class = incomplete)",
     ("accuracy", "f1", "precision", "recall")),
    ("yes-ratio; balanced accuracy and MCC (a constant answer scores 0.5 and 0)",
     ("yes_ratio", *UNGAMEABLE_METRICS)),
)  # fmt: skip
assert {m for _, group in METRIC_TABLES for m in group} == set(PAPER_METRICS + UNGAMEABLE_METRICS)


def _fmt(e: Estimate) -> str:
    """``0.812 [0.741, 0.873]``: the point and its 95% interval at the same precision."""
    if e.n == 0 or e.mean != e.mean:
        return "-"
    return e.fmt(3)


def render_aware(run: LoadedRun, console: Console) -> None:
    model = run.info.get("config", {}).get("model", "?")
    table_rows = rows(run.records)
    for task in sorted({t for (t, _, _) in table_rows}):
        _render_metric_tables(f"{run.label}  ({model})  {task[6:]}", task, table_rows, console)
    _render_counts(run, console)
    for task in sorted({t for (t, _, _) in table_rows}):
        items = table_rows[(task, ALL, ALL)]
        c = confusion(items)
        console.print(
            f"{task[6:]} confusion (label: yes / no / unparseable): "
            f"complete {c['complete']['yes']} / {c['complete']['no']} / "
            f"{c['complete']['unparseable']}; incomplete {c['incomplete']['yes']} / "
            f"{c['incomplete']['no']} / {c['incomplete']['unparseable']}"
        )
    _render_agreement(agreement_by_group(run.records), console)
    scenarios = feedback_by_scenario(run.records)
    if scenarios:
        ft = Table(title="feedback: accuracy per scenario")
        ft.add_column("scenario")
        ft.add_column("n")
        ft.add_column("accuracy [95% CI]")
        for name, e in scenarios.items():
            ft.add_row(name, str(e.n), _fmt(e))
        console.print(ft)
    explain = explain_summary(run.records, run.info.get("judge_labels") or {})
    if explain:
        acc = explain.get("explanation_accuracy")
        shown = f"{acc['mean']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}]" if acc else "-"
        console.print(
            f"explanations: {explain['explained']} of {explain['incomplete_instances']} "
            f"incomplete instances rightly answered No and were explained; judged correct "
            f"{shown} (judge unparseable {explain['judge_unparseable']}; judge tokens "
            f"{explain['judge_prompt_tokens']} in / {explain['judge_completion_tokens']} out)"
        )
        if "judge_vs_hand_labels" in explain:
            j = explain["judge_vs_hand_labels"]
            console.print(
                f"judge vs hand labels: agreement {j['agreement']:.3f}, Cohen's kappa "
                f"{j['cohen_kappa']:.3f} over {j['n']} explanations"
            )


def _render_metric_tables(
    heading: str, task: str, table_rows: dict[Row, list[Judged]], console: Console
) -> None:
    """The rows of one task, in each of ``METRIC_TABLES``."""
    mine = {key[1:]: items for key, items in table_rows.items() if key[0] == task}
    estimates = {key: binary_metrics(items) for key, items in mine.items()}
    for title, metrics in METRIC_TABLES:
        table = Table(title=f"{heading}: {title}, 95% CIs")
        for column in ("source", "manipulation", "n", *metrics):
            table.add_column(column)
        for (source, group), est in estimates.items():
            count = str(len(mine[(source, group)]))
            table.add_row(source, group, count, *[_fmt(est[m]) for m in metrics])
        console.print(table)


def _render_agreement(groups: dict[tuple[str, str], dict[str, Estimate]], console: Console) -> None:
    if not groups:
        return
    pairs = [p[6:] for p in AGREEMENT_PAIRS if any(p[6:] in row for row in groups.values())]
    table = Table(title="agreement with explicit-0shot per instance (paper Table 6), 95% CIs")
    for column in ("source", "manipulation", *[f"vs {pair} (n)" for pair in pairs]):
        table.add_column(column)
    for (source, group), row in groups.items():
        cells = [f"{_fmt(row[p])} ({row[p].n})" if p in row else "-" for p in pairs]
        table.add_row(source, group, *cells)
    console.print(table)


def _render_counts(run: LoadedRun, console: Console) -> None:
    counts = counts_of(run.records)
    if counts["model_error"] or counts["infra_error"]:
        overflows = counts.get("context_overflow", 0)
        of_them = f", {overflows} of them context overflows" if overflows else ""
        console.print(
            f"[yellow]{counts['model_error']} model errors (scored as wrong{of_them}) and "
            f"{counts['infra_error']} infra errors (left out; rerun to retry)[/yellow]"
        )


def compare_rows(a: LoadedRun, b: LoadedRun) -> dict[Row, dict[str, Estimate]]:
    rows_a, rows_b = rows(a.records), rows(b.records)
    return {key: paired_metrics(rows_a[key], rows_b[key]) for key in rows_a if key in rows_b}


def render_aware_comparison(a: LoadedRun, b: LoadedRun, console: Console) -> None:
    """Paired differences (b - a) as the grids the exports and the HTML report print too."""
    from toolbench.aware.evaluate.tables import aware_comparison_grids
    from toolbench.tables.grid import render_rich

    for grid in aware_comparison_grids(a, b):
        render_rich(grid, console)


def aware_json(run: LoadedRun) -> dict[str, Any]:
    def est(e: Estimate) -> dict[str, float]:
        return {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}

    out: dict[str, Any] = {"rows": [], "feedback": {}, "agreement": {}}
    for (task, source, group), items in rows(run.records).items():
        out["rows"].append(
            {
                "task": task,
                "source": source,
                "manipulation": group,
                "confusion": confusion(items),
                **{m: est(e) for m, e in binary_metrics(items).items()},
            }
        )
    out["feedback"] = {k: est(v) for k, v in feedback_by_scenario(run.records).items()}
    out["agreement"] = {
        k: {"agreement": v, "n": n} for k, (v, n) in mode_agreement(run.records).items()
    }
    out["agreement_by_group"] = [
        {"source": source, "manipulation": group, "versus": pair, **est(e)}
        for (source, group), row in agreement_by_group(run.records).items()
        for pair, e in row.items()
    ]
    out["explain"] = explain_summary(run.records, run.info.get("judge_labels") or {})
    return out


def aware_comparison_json(a: LoadedRun, b: LoadedRun) -> list[dict[str, Any]]:
    return [
        {
            "task": task,
            "source": source,
            "manipulation": group,
            **{
                m: {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}
                for m, e in entry.items()
            },
        }
        for (task, source, group), entry in compare_rows(a, b).items()
    ]
