"""The results of the human baseline (paper Table 5), as rich tables.

Accuracy, F1 (incomplete is the positive class) and the other awareness metrics per
manipulation group and overall, with 95% bootstrap intervals, computed exactly as for models
(``metrics.binary_metrics``), over the answered instances; a complete instance counts in the
group of each of its twins' manipulations. Plus per-annotator counts and times. Kept apart from
the session (``human``) so the scoring can be read and tested without the interactive parts.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence

from rich.table import Table

from toolbench.aware.evaluate.human_store import Event, Given
from toolbench.aware.evaluate.items import report_groups
from toolbench.aware.evaluate.metrics import METRICS, Judged, binary_metrics
from toolbench.aware.schema import Instance
from toolbench.report.bootstrap import Estimate

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


def _fmt(e: Estimate) -> str:
    return "-" if e.n == 0 or e.mean != e.mean else e.fmt()


def results_table(
    instances: Sequence[Instance], answers: Sequence[Given], by_id: dict[str, Instance]
) -> Table:
    table = Table(title="human answers  (positive class: incomplete)")
    for column in ("group", "n", *[f"{m} [95% CI]" for m in METRICS]):
        table.add_column(column)
    for group, items in grouped(instances, answers, by_id).items():
        est = binary_metrics(items)
        name = ALL if group == ALL else group_title(group)
        table.add_row(name, str(len(items)), *[_fmt(est[m]) for m in METRICS])
    return table


def annotator_table(given: Sequence[Given], events: Sequence[Event]) -> Table:
    table = Table(title="annotators")
    for column in ("annotator", "answers", "skips", "undos", "mean s/answer"):
        table.add_column(column, justify="left" if column == "annotator" else "right")
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
        table.add_row(
            who, str(len(times)), str(counts[who]["skip"]), str(counts[who]["undo"]), mean
        )
    everyone = [s for times in seconds.values() for s in times]
    if len(seconds) > 1:
        table.add_row(
            "all",
            str(len(everyone)),
            str(sum(c["skip"] for c in counts.values())),
            str(sum(c["undo"] for c in counts.values())),
            f"{statistics.fmean(everyone):.1f}",
        )
    return table
