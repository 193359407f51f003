"""The numbers of an awareness run, computed from its records: judged items per task x source x
manipulation (with ``all`` rollups), the point values run.json keeps, explanation accuracy (and
the judge's agreement with hand labels), feedback accuracy per scenario, explicit/implicit
agreement and paired differences of two runs. ``summary`` prints them in the terminal and as
JSON, ``tables`` lays them out as grids; both read them here, so neither imports the other's
output code.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from toolbench.aware.evaluate.metrics import (
    PAPER_METRICS,
    UNGAMEABLE_METRICS,
    Judged,
    agreement,
    binary_metrics,
    cohen_kappa,
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


def compare_rows(a: LoadedRun, b: LoadedRun) -> dict[Row, dict[str, Estimate]]:
    rows_a, rows_b = rows(a.records), rows(b.records)
    return {key: paired_metrics(rows_a[key], rows_b[key]) for key in rows_a if key in rows_b}
