"""What an awareness run evaluates: one ``Item`` per (mode, instance or feedback scenario).

Record tasks are ``explicit-<k>shot``, ``implicit``, ``tools``, ``feedback`` and ``explain``.
Each item knows its expected answer ("yes": the APIs can be invoked now; "no": they cannot)
and its report groups: an incomplete instance belongs to its manipulation, a complete one to
the manipulation of each of its evaluated twins (as the paper, which scores each manipulation
on the manipulated instances together with their originals). ``evaluated`` picks the instances
a run (or the human baseline) evaluates at all, by review status; it lives here, away from the
run machinery, so that light callers need not import the task registry.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from toolbench.aware.evaluate.demos import DemoPool
from toolbench.aware.evaluate.feedback import Scenario, complete_scenario, scenarios_for
from toolbench.aware.schema import Instance
from toolbench.errors import UserError, did_you_mean

MODES = ("explicit", "implicit", "tools", "feedback", "explain")


@dataclass(frozen=True)
class Item:
    task: str
    id: str
    instance: Instance
    kind: str
    groups: tuple[str, ...]
    shots: int = 0
    scenario: Scenario | None = None

    @property
    def expected(self) -> str:
        if self.scenario is not None:
            return self.scenario.expected
        return "yes" if self.instance.label == "complete" else "no"


@dataclass
class AwareData:
    """What an awareness run loaded besides its samples (``TaskData.runtime``): the evaluated
    instances, each sample's item by (record task, id), the demonstration pool (the
    ``similarity`` floor fits on it too) and the hand labels of explanations."""

    instances: list[Instance]
    items: dict[tuple[str, str], Item]
    pool: list[Instance]
    demos: DemoPool
    judge_labels: dict[str, bool] = field(default_factory=dict)

    def item(self, task: str, sample_id: str) -> Item:
        return self.items[(task, sample_id)]


def parse_modes(text: str) -> tuple[str, ...]:
    modes = tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    for mode in modes:
        if mode not in MODES:
            raise UserError(f"--mode {mode}: unknown mode{did_you_mean(mode, MODES)}")
    if not modes:
        raise UserError(f"--mode: give at least one of {', '.join(MODES)}")
    return modes


def parse_shots(text: str) -> tuple[int, ...]:
    try:
        shots = tuple(dict.fromkeys(int(s) for s in text.split(",") if s.strip()))
    except ValueError:
        raise UserError(
            f"--shots {text}: expected comma-separated even numbers, e.g. 0,4"
        ) from None
    if not shots or any(s < 0 or s % 2 for s in shots):
        raise UserError(f"--shots {text}: expected comma-separated even numbers, e.g. 0,4")
    return shots


def evaluated(instances: Sequence[Instance], include_pending: bool) -> list[Instance]:
    """Accepted instances (plus pending ones on request); rejected ones never."""
    allowed = {"accepted", "pending"} if include_pending else {"accepted"}
    return [i for i in instances if i.verification.status in allowed]


def report_groups(instances: Sequence[Instance]) -> dict[str, tuple[str, ...]]:
    twins: dict[str, set[str]] = defaultdict(set)
    for instance in instances:
        if instance.twin_id:
            twins[instance.twin_id].add(instance.manipulation)
    groups: dict[str, tuple[str, ...]] = {}
    for instance in instances:
        if instance.label == "incomplete":
            groups[instance.id] = (instance.manipulation,)
        else:
            groups[instance.id] = tuple(sorted(twins.get(instance.id, {"none"})))
    return groups


def build_items(
    instances: Sequence[Instance], modes: Sequence[str], shots: Sequence[int]
) -> list[Item]:
    groups = report_groups(instances)
    by_id = {instance.id: instance for instance in instances}
    items: list[Item] = []
    for mode in modes:
        if mode == "explicit":
            for k in shots:
                items += [
                    Item(f"explicit-{k}shot", i.id, i, "explicit", groups[i.id], shots=k)
                    for i in instances
                ]
        elif mode in ("implicit", "tools"):
            items += [Item(mode, i.id, i, mode, groups[i.id]) for i in instances]
        elif mode == "explain":
            items += [
                Item("explain", i.id, i, "explain", groups[i.id])
                for i in instances
                if i.label == "incomplete"
            ]
        else:
            items += feedback_items(instances, by_id, groups)
    return items


def feedback_items(
    instances: Sequence[Instance],
    by_id: dict[str, Instance],
    groups: dict[str, tuple[str, ...]],
) -> list[Item]:
    items: list[Item] = []
    completes_done: set[str] = set()
    for incomplete in instances:
        complete = by_id.get(incomplete.twin_id or "")
        if incomplete.label != "incomplete" or complete is None:
            continue
        scenarios = scenarios_for(incomplete, complete)
        if complete.id not in completes_done and scenarios:
            completes_done.add(complete.id)
            extra = complete_scenario(complete)
            scenarios = scenarios + ([extra] if extra else [])
        for s in scenarios:
            items.append(
                Item(
                    "feedback",
                    f"{s.instance.id}#{s.name}",
                    s.instance,
                    "feedback",
                    groups[s.instance.id],
                    scenario=s,
                )
            )
    return items
