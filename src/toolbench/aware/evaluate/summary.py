"""Awareness results in the terminal and as JSON: tables per task x source x manipulation with
95% intervals, the confusion matrix, feedback accuracy per scenario, explanation accuracy (and the
judge's agreement with hand labels), explicit/implicit agreement, and paired differences of two
runs. ``toolbench report`` calls these for runs whose ``run.json`` says ``kind: aware``; the
numbers themselves come from ``breakdown``.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from toolbench.aware.evaluate.breakdown import (
    AGREEMENT_PAIRS,
    ALL,
    METRIC_TABLES,
    Row,
    agreement_by_group,
    compare_rows,
    explain_summary,
    feedback_by_scenario,
    mode_agreement,
    rows,
)
from toolbench.aware.evaluate.metrics import Judged, binary_metrics, confusion
from toolbench.aware.evaluate.tables import aware_comparison_grids
from toolbench.tables.bootstrap import Estimate
from toolbench.tables.grid import render_rich
from toolbench.tables.runs import RunResults as LoadedRun
from toolbench.tables.runs import counts_of


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


def render_aware_comparison(a: LoadedRun, b: LoadedRun, console: Console) -> None:
    """Paired differences (b - a) as the grids the exports and the HTML report print too."""
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
