"""Dataset statistics in the shape of the paper's Table 1, for any awareness dataset.

One row per (source, manipulation), in a stable order (sources alphabetically, manipulations in
schema order), then an ``all`` row. Definitions, chosen to match the paper's caption where it
is explicit and stated exactly where it is not:

* **instances**: instances in the group.
* **avg turns**: mean over instances of the number of *utterances* in the dialogue, i.e. user
  and assistant turns; tool turns (API calls and their results) are not utterances. A
  single-query instance (ToolBench) has 1.
* **avg APIs**: mean over instances of the number of APIs offered (``len(apis)``).
* **avg user words**: total words over all user turns of the group divided by the number of
  those turns (pooled, so a long dialogue weighs more). Words are punctuation-aware tokens, a
  run of letters/digits or a single punctuation mark (``"Rome, please?"`` is 4): counted this
  way ToolBench's queries give the paper's 52.4. We count every source (API-Bank included) the
  same way, so the column compares sources.
* **avg API length**: mean over every offered API of every instance (an API offered in ten
  instances counts ten times) of the length in characters (Unicode code points) of the whole
  entry as a model sees it in our prompts (``render_api``: name, description and parameter
  schema). This is the paper's "API length": on API-Bank the whole entry gives 422-445
  characters against the paper's 434.4, the description alone 65.8.
* **avg description chars**: the same mean over the description string alone, for reference.
* verification counts (pending/accepted/rejected) and labels (complete/incomplete).

An average with nothing to average (a group without user turns or without APIs) is ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from toolbench.aware.evaluate.render import render_api
from toolbench.aware.schema import MANIPULATIONS, Instance

ALL = "all"
_TOKEN = re.compile(r"\w+|[^\w\s]")
LEGEND = (
    "avg user words: punctuation-aware tokens (a run of letters/digits, or one punctuation "
    "mark) per user turn, pooled over the group's user turns (the paper's count; every source)",
    "avg API length: characters of the whole API entry as the model sees it (name, description "
    "and parameters), averaged over every offered API (the paper's definition)",
    "avg description chars: characters of the description alone; avg turns: user and "
    "assistant utterances (tool turns are not utterances)",
)


def word_count(text: str) -> int:
    """Punctuation-aware tokens: what the paper's words per utterance counts."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class StatsRow:
    source: str
    manipulation: str
    instances: int
    avg_turns: float | None
    avg_apis: float | None
    avg_user_words: float | None
    avg_api_length: float | None
    avg_api_description_chars: float | None
    pending: int
    accepted: int
    rejected: int
    complete: int
    incomplete: int


def utterance_count(instance: Instance) -> int:
    """User and assistant turns: what the paper's "Avg. Turns" counts."""
    return sum(1 for turn in instance.dialogue if turn.role in ("user", "assistant"))


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


def _row(source: str, manipulation: str, group: list[Instance]) -> StatsRow:
    user_turns = [turn for i in group for turn in i.user_turns()]
    descriptions = [api.description for i in group for api in i.apis]
    entries = [len(render_api(api)) for i in group for api in i.apis]
    statuses = [i.verification.status for i in group]
    labels = [i.label for i in group]
    return StatsRow(
        source=source,
        manipulation=manipulation,
        instances=len(group),
        avg_turns=_mean(sum(utterance_count(i) for i in group), len(group)),
        avg_apis=_mean(sum(len(i.apis) for i in group), len(group)),
        avg_user_words=_mean(sum(word_count(t.content) for t in user_turns), len(user_turns)),
        avg_api_length=_mean(sum(entries), len(entries)),
        avg_api_description_chars=_mean(sum(len(d) for d in descriptions), len(descriptions)),
        pending=statuses.count("pending"),
        accepted=statuses.count("accepted"),
        rejected=statuses.count("rejected"),
        complete=labels.count("complete"),
        incomplete=labels.count("incomplete"),
    )


def _manipulation_rank(name: str) -> tuple[int, str]:
    return (
        (MANIPULATIONS.index(name), name) if name in MANIPULATIONS else (len(MANIPULATIONS), name)
    )


def table1(instances: Iterable[Instance]) -> list[StatsRow]:
    """Per (source, manipulation) rows in a stable order, then the ``all`` row."""
    everything = list(instances)
    groups: dict[tuple[str, str], list[Instance]] = {}
    for instance in everything:
        groups.setdefault((instance.source, instance.manipulation), []).append(instance)
    keys = sorted(groups, key=lambda k: (k[0], _manipulation_rank(k[1])))
    rows = [
        _row(source, manipulation, groups[(source, manipulation)]) for source, manipulation in keys
    ]
    rows.append(_row(ALL, ALL, everything))
    return rows


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def render_table1(rows: Iterable[StatsRow], console: Console) -> None:
    """Print the rows as one rich table (groups as rows, so any number of groups fits)."""
    table = Table(title="Dataset statistics (Table 1)")
    for header in ("source", "manipulation"):
        table.add_column(header, no_wrap=True)
    for header in (
        "# instances",
        "avg turns",
        "avg APIs",
        "avg user words",
        "avg API length",
        "avg description chars",
        "pending",
        "accepted",
        "rejected",
        "complete",
        "incomplete",
    ):
        table.add_column(header, justify="right")
    rows = list(rows)
    for index, row in enumerate(rows):
        table.add_row(
            row.source,
            row.manipulation,
            str(row.instances),
            _fmt(row.avg_turns),
            _fmt(row.avg_apis),
            _fmt(row.avg_user_words),
            _fmt(row.avg_api_length),
            _fmt(row.avg_api_description_chars),
            str(row.pending),
            str(row.accepted),
            str(row.rejected),
            str(row.complete),
            str(row.incomplete),
            # A rule above the "all" row sets the total apart from the groups.
            end_section=index + 1 < len(rows) and rows[index + 1].source == ALL,
        )
    console.print(table)
    for line in LEGEND:
        console.print(line, soft_wrap=True)
