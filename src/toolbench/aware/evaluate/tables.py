"""Awareness runs (``kind: aware``) as ``Grid`` tables, for the HTML report, the exports and
the terminal's comparison of two runs.

The numbers come from ``toolbench.aware.evaluate.breakdown`` (the terminal's source too): the
paper's metrics and the two a constant answer cannot game per task x source x manipulation,
the confusion matrix of each row, agreement of explicit with implicit/tools answers, feedback
accuracy per scenario and the graded explanations; and, for two awareness runs, the paired
differences (``aware_pair_grids``) that ``report --json`` gives as ``difference``.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench.aware.evaluate import breakdown
from toolbench.aware.evaluate.metrics import binary_metrics, confusion
from toolbench.tables.bootstrap import Estimate
from toolbench.tables.grid import Cell, Grid
from toolbench.tables.runs import RunResults, model_of


def _metric_grids(run: RunResults, heading: str) -> list[Grid]:
    table_rows = breakdown.rows(run.records)
    grids = []
    for title, metrics in breakdown.METRIC_TABLES:
        grid = Grid(
            title=f"{heading}: {title}, 95% CIs",
            columns=["mode", "source", "manipulation", "n", *metrics],
            key_columns=3,
        )
        for (task, source, group), items in table_rows.items():
            est = binary_metrics(items)
            cells: list[Cell] = [est[m] for m in metrics]
            grid.rows.append([task.removeprefix("aware-"), source, group, str(len(items)), *cells])
        grids.append(grid)
    return grids


def confusion_grid(run: RunResults, heading: str) -> Grid:
    """Per mode x source x manipulation: what complete and incomplete instances were answered."""
    grid = Grid(
        title=f"{heading}: confusion matrices (label -> answer yes / no / unparseable)",
        columns=[
            "mode",
            "source",
            "manipulation",
            "complete: yes",
            "complete: no",
            "complete: unparseable",
            "incomplete: yes",
            "incomplete: no",
            "incomplete: unparseable",
        ],
        key_columns=3,
    )
    for (task, source, group), items in breakdown.rows(run.records).items():
        c = confusion(items)
        counts = [str(c[label][a]) for label in c for a in ("yes", "no", "unparseable")]
        grid.rows.append([task.removeprefix("aware-"), source, group, *counts])
    return grid


def _agreement_grid(run: RunResults, heading: str) -> Grid | None:
    groups = breakdown.agreement_by_group(run.records)
    if not groups:
        return None
    pairs = sorted({pair for row in groups.values() for pair in row})
    grid = Grid(
        title=f"{heading}: agreement with explicit-0shot per instance, 95% CIs",
        columns=["source", "manipulation", *[f"vs {p}" for p in pairs]],
        key_columns=2,
    )
    for (source, group), row in groups.items():
        grid.rows.append([source, group, *[row.get(p, "-") for p in pairs]])
    return grid


def _feedback_grid(run: RunResults, heading: str) -> Grid | None:
    scenarios = breakdown.feedback_by_scenario(run.records)
    if not scenarios:
        return None
    grid = Grid(title=f"{heading}: feedback accuracy per scenario", columns=["scenario", "acc"])
    grid.rows = [[name, e] for name, e in scenarios.items()]
    return grid


def _explain_grid(run: RunResults, heading: str) -> Grid | None:
    labels = run.info.get("judge_labels")
    explain = breakdown.explain_summary(run.records, labels if isinstance(labels, dict) else {})
    if not explain:
        return None
    grid = Grid(title=f"{heading}: explanation grades", columns=["what", "value"])
    acc = explain.get("explanation_accuracy")
    if acc:
        grid.rows.append(
            ["judged correct", Estimate(acc["mean"], acc["low"], acc["high"], acc["n"])]
        )
    for key in ("incomplete_instances", "explained", "judged", "judge_unparseable"):
        grid.rows.append([key.replace("_", " "), str(explain[key])])
    hand = explain.get("judge_vs_hand_labels")
    if hand:
        grid.rows.append(["judge vs hand labels: agreement", f"{hand['agreement']:.3f}"])
        grid.rows.append(["judge vs hand labels: Cohen's kappa", f"{hand['cohen_kappa']:.3f}"])
    return grid


def aware_grids(run: RunResults) -> list[Grid]:
    """Every awareness table of one run."""
    heading = f"{run.label} ({model_of(run)})"
    grids = [*_metric_grids(run, heading), confusion_grid(run, heading)]
    for extra in (_agreement_grid, _feedback_grid, _explain_grid):
        grid = extra(run, heading)
        if grid is not None:
            grids.append(grid)
    return grids


def aware_comparison_grids(reference: RunResults, other: RunResults) -> list[Grid]:
    """Paired differences (other - reference) over the instances both runs judged, one table
    per ``METRIC_TABLES`` entry; ``*`` marks an interval that excludes 0. The terminal, the
    exports and the HTML report all print these grids, so they show the same numbers."""
    compared = breakdown.compare_rows(reference, other)
    names = f"{other.label} ({model_of(other)}) - {reference.label} ({model_of(reference)})"
    grids = []
    for title, metrics in breakdown.METRIC_TABLES:
        grid = Grid(
            title=f"paired difference: {names}: {title} (95% CIs; * interval excludes 0)",
            columns=["mode", "source", "manipulation", "n paired", *[f"Δ {m}" for m in metrics]],
            key_columns=3,
            differences=True,
        )
        for (task, source, group), entry in compared.items():
            if entry:  # no instance in common: nothing to pair
                n = str(next(iter(entry.values())).n)
                cells: list[Cell] = [entry[m] for m in metrics]
                grid.rows.append([task.removeprefix("aware-"), source, group, n, *cells])
        if not grid.rows:
            grid.notes.append(
                f"{other.label} and {reference.label} share no judged instance: nothing to pair"
            )
        grids.append(grid)
    return grids


def aware_pair_grids(runs: Sequence[RunResults], reference: RunResults | None) -> list[Grid]:
    """The comparison ``report`` takes between exactly two awareness runs (against
    ``reference``, else the first), as the terminal and ``--json`` do; none otherwise."""
    if len(runs) != 2 or any(run.info.get("kind", "tasks") != "aware" for run in runs):
        return []
    first, second = runs
    if reference is second:
        return aware_comparison_grids(second, first)
    return aware_comparison_grids(first, second)
