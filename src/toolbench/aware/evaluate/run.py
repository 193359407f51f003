"""Which instances an awareness run evaluates, and what is checked before its folder exists.

Only reviewed instances are scored unless pending ones are asked for; ``--limit`` keeps whole
families (an original with its twins) so every metric stays defined; a dataset that would
score one class only is refused, and a large share of pending instances is warned about. Hand
labels of explanations are read here too. Everything here raises ``UserError`` (exit 2)
before any run folder is made.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from toolbench.aware.evaluate.items import evaluated
from toolbench.aware.schema import Instance, read_instances
from toolbench.errors import UserError, json_problem


def load_judge_labels(path: Path | None) -> dict[str, bool]:
    """Hand labels for explanations: JSON lines of ``{"id": instance id, "correct": bool}``."""
    if path is None:
        return {}
    labels: dict[str, bool] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UserError(f"--judge-labels {path}: cannot read it ({exc.strerror})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: invalid JSON ({json_problem(exc)})") from None
        if not (
            isinstance(obj, dict)
            and isinstance(obj.get("id"), str)
            and isinstance(obj.get("correct"), bool)
        ):
            raise UserError(f'{path}:{number}: expected {{"id": "...", "correct": true|false}}')
        labels[obj["id"]] = obj["correct"]
    return labels


def check_both_labels(
    dataset: Path, everything: Sequence[Instance], chosen: Sequence[Instance]
) -> None:
    """Refuse a run that would score one class only: with no incomplete instance (all still
    pending review, as right after ``aware build``) F1 is 0.000 over nothing, which reads like
    a result. Says how many of the missing label wait for review."""
    present = {instance.label for instance in chosen}
    for label in ("incomplete", "complete"):
        if label in present:
            continue
        pending = sum(
            1 for i in everything if i.label == label and i.verification.status == "pending"
        )
        why = (
            f"all {pending} {label} instances are pending review; review them with "
            "'toolbench aware verify' or pass --include-pending"
            if pending
            else f"it has no {label} instance that can be evaluated"
        )
        raise UserError(f"{dataset}: nothing to score awareness on: {why}")


#: A label whose instances are pending review at least this often makes the scores rest on a
#: reviewer's first picks (pending left out) or on unreviewed twins (pending included).
PENDING_WARN_SHARE = 0.2


def pending_warnings(
    dataset: Path, everything: Sequence[Instance], include_pending: bool
) -> list[str]:
    """One line per label with a large pending share, with the counts and the flag that
    changes it (rejected instances are never scored, so they are not counted)."""
    lines = []
    for label in ("incomplete", "complete"):
        statuses = [i.verification.status for i in everything if i.label == label]
        pending = statuses.count("pending")
        total = pending + statuses.count("accepted")
        if not pending or pending < PENDING_WARN_SHARE * total:
            continue
        share = f"{pending} of {total} {label} instances are pending review"
        if include_pending:
            lines.append(
                f"{dataset}: {share} and are scored unreviewed (--include-pending); review "
                "them with 'toolbench aware verify', or drop --include-pending to leave them out"
            )
        else:
            lines.append(
                f"{dataset}: {share} and are left out, so the {label} scores rest on "
                f"{total - pending} accepted; review them with 'toolbench aware verify', or "
                "pass --include-pending to score them unreviewed"
            )
    return lines


def limited_families(instances: list[Instance], limit: int) -> list[Instance]:
    """The first ``limit`` families in file order (a complete instance with its twins, or a
    twinless instance): pairs are never split, so every metric stays defined."""
    order: list[str] = []
    for instance in instances:
        key = instance.twin_id or instance.id
        if key not in order:
            order.append(key)
    kept = set(order[:limit])
    return [i for i in instances if (i.twin_id or i.id) in kept]


def chosen_instances(dataset: Path, include_pending: bool, families: int | None) -> list[Instance]:
    """The instances a run evaluates, after the checks above; the warnings about pending
    instances go to stderr."""
    everything = read_instances(dataset)
    instances = evaluated(everything, include_pending)
    if families is not None:
        instances = limited_families(instances, families)
    if not instances:
        raise UserError(
            f"{dataset}: no instances to evaluate (only accepted ones are, unless "
            "--include-pending; review with 'toolbench aware verify')"
        )
    check_both_labels(dataset, everything, instances)
    for line in pending_warnings(dataset, everything, include_pending):
        print(f"warning: {line}", file=sys.stderr)
    return instances
