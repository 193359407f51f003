"""What the report says of the environments its runs were made in (run.json's
``environment``): one line per run, and a warning wherever runs set side by side differ in a
way that can change their numbers (toolbench's commit, a task's scoring version, a model
backend's version), or a run was resumed under another environment than it began in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbench.runner.environment import differences, summary

__all__ = ["environment_lines", "environment_warnings"]


def environment_lines(infos: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """``environment: toolbench 0.1.0 (abc1234); Python 3.11.7; ...`` for each run (label:
    run.json) that recorded one; a run made before the record existed gets none."""
    lines = []
    for label, info in infos.items():
        record = info.get("environment")
        if isinstance(record, Mapping):
            prefix = "environment" if len(infos) == 1 else f"environment of {label}"
            lines.append(f"{prefix}: {summary(record)}")
    return lines


def environment_warnings(infos: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per difference that matters: between the first run and each other one, and
    within a run resumed under another environment."""
    warnings = []
    for label, info in infos.items():
        for change in _listed(info.get("environment_changes")):
            warnings.append(f"{label} was resumed under another environment ({change})")
    labelled = [(label, info) for label, info in infos.items()]
    if len(labelled) < 2:
        return warnings
    first_label, first = labelled[0]
    for label, info in labelled[1:]:
        for change in _compared(first, info):
            warnings.append(f"{first_label} and {label} were made differently: {change}")
    return warnings


def _compared(first: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    old, new = first.get("environment"), other.get("environment")
    changes = []
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        changes.extend(differences(old, new))
    old_versions, new_versions = _scoring_versions(first), _scoring_versions(other)
    for task in sorted(set(old_versions) & set(new_versions)):
        if old_versions[task] != new_versions[task]:
            changes.append(f"{task} scoring version {old_versions[task]} -> {new_versions[task]}")
    return changes


def _scoring_versions(info: Mapping[str, Any]) -> dict[str, Any]:
    parts = info.get("fingerprint_parts")
    tasks = parts.get("tasks") if isinstance(parts, Mapping) else None
    if not isinstance(tasks, Mapping):
        return {}
    return {
        name: part.get("scoring_version")
        for name, part in tasks.items()
        if isinstance(part, Mapping) and "scoring_version" in part
    }


def _listed(value: Any) -> Sequence[str]:
    return [str(item) for item in value] if isinstance(value, list) else []
