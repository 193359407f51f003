"""The results of the human baseline (paper Table 5), as ``Grid`` tables and lines of text.

Accuracy, F1 (incomplete is the positive class) and the other awareness metrics per
manipulation group and overall, with 95% bootstrap intervals, computed exactly as for models
(``metrics.binary_metrics``), over the answered instances; a complete instance counts in the
group of each of its twins' manipulations. Plus per-annotator counts and times. Kept apart from
the session (``human``) so the scoring can be read and tested without the interactive parts.

The results are plain data (``Line`` and ``Grid`` blocks) so the terminal (``--report``) and the
study server's ``/results`` page show the same numbers, each in its own medium: rich tables
there, HTML tables here.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolbench.aware.evaluate.human_store import Event, Given
from toolbench.aware.evaluate.items import report_groups
from toolbench.aware.evaluate.metrics import METRICS, Judged, binary_metrics
from toolbench.aware.schema import Instance
from toolbench.tables.grid import Cell, Grid

ALL = "overall"
PAPER_NOTE = (
    "for comparison, the paper's Table 5 (180 balanced APIBank instances, 9 people): accuracy "
    "0.811 and F1 0.785 (API replacement), 0.811 and 0.813 (utterance removal), 0.811 and 0.800 "
    "overall"
)
#: Row order and names of the paper's groups; other manipulations follow in name order.
GROUP_TITLES = {"api_replacement": "API replacement", "utterance_removal": "utterance removal"}


def group_title(group: str) -> str:
    if group == "none":  # a complete instance none of whose twins is evaluated
        return "complete, no twin"
    return GROUP_TITLES.get(group, group.replace("_", " "))


def grouped(
    instances: Sequence[Instance], answers: Sequence[Given], by_id: dict[str, Instance]
) -> dict[str, list[Judged]]:
    """Group -> judged answers; a complete instance counts in the group of each of its twins'
    manipulations (as for models), and everything in ``overall``."""
    groups = report_groups(instances)
    table: dict[str, list[Judged]] = defaultdict(list)
    for given in answers:
        item = Judged(given.instance_id, by_id[given.instance_id].label, given.answer)
        for group in groups.get(given.instance_id, ("none",)):
            table[group].append(item)
    order = [g for g in GROUP_TITLES if g in table]
    order += sorted(g for g in table if g not in GROUP_TITLES)
    out = {group: table[group] for group in order}
    out[ALL] = [Judged(g.instance_id, by_id[g.instance_id].label, g.answer) for g in answers]
    return out


@dataclass(frozen=True)
class Line:
    """A sentence of the results; ``style`` is "" (plain), "warn" or "dim"."""

    text: str
    style: str = ""


Block = Line | Grid
_RICH_STYLE = {"": "", "warn": "yellow", "dim": "dim"}


def render_blocks(blocks: Sequence[Block], console: Console) -> None:
    """The results in a terminal: lines as text, grids as rich tables. Every cell is ``Text``,
    so an annotator's name such as ``[/]`` is shown as typed, never read as rich markup."""
    for block in blocks:
        if isinstance(block, Line):
            console.print(Text(block.text, _RICH_STYLE[block.style]), highlight=False)
            continue
        table = Table(title=Text(block.title))
        for k, column in enumerate(block.columns):
            table.add_column(Text(column), justify="left" if k < block.key_columns else "right")
        for row in block.rows:
            table.add_row(*[Text(block.text(cell)) for cell in row])
        console.print(table)


def results_table(
    instances: Sequence[Instance], answers: Sequence[Given], by_id: dict[str, Instance]
) -> Grid:
    grid = Grid(
        title="human answers (positive class: incomplete)",
        columns=["group", "n", *[f"{m} [95% CI]" for m in METRICS]],
    )
    for group, items in grouped(instances, answers, by_id).items():
        est = binary_metrics(items)
        name = ALL if group == ALL else group_title(group)
        cells: list[Cell] = [est[m] for m in METRICS]
        grid.rows.append([name, str(len(items)), *cells])
    return grid


def annotator_table(given: Sequence[Given], events: Sequence[Event]) -> Grid:
    grid = Grid(
        title="annotators", columns=["annotator", "answers", "skips", "undos", "mean s/answer"]
    )
    seconds: dict[str, list[float]] = defaultdict(list)
    for g in given:
        seconds[g.annotator].append(g.seconds)
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"skip": 0, "undo": 0})
    for e in events:
        if e.action != "answer":
            counts[e.annotator][e.action] += 1
    for who in sorted(set(seconds) | set(counts)):
        times = seconds.get(who, [])
        mean = f"{statistics.fmean(times):.1f}" if times else "-"
        grid.rows.append(
            [who, str(len(times)), str(counts[who]["skip"]), str(counts[who]["undo"]), mean]
        )
    everyone = [s for times in seconds.values() for s in times]
    if len(seconds) > 1:
        grid.rows.append(
            [
                "all",
                str(len(everyone)),
                str(sum(c["skip"] for c in counts.values())),
                str(sum(c["undo"] for c in counts.values())),
                f"{statistics.fmean(everyone):.1f}",
            ]
        )
    return grid
