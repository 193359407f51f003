"""The one run configuration, and what its fingerprint is made of.

Every run folder (tool tasks, the awareness evaluation, a person's web_shop episodes) holds
records made under one ``RunConfig`` and one fingerprint. The fingerprint covers everything
that can change a sample's result and nothing that cannot (epochs, limit, concurrency, output
folder, cache use): the settings below, each task's options and scoring version, the content
of its data as the runner loaded it, and the models of the run's roles. Its parts are kept in
``run.json`` so that a refused resume can say what changed (``changed_parts``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from toolbench.prompts.builder import Mode
from toolbench.sandbox.limits import DEFAULT_MEMORY_MB, DEFAULT_WALL_S

# Settings that say how much of the work to do, or how fast: never part of the fingerprint.
OPERATIONAL = frozenset(
    {
        "epochs",
        "limit",
        "concurrency",
        "use_cache",
        "data_dir",
        "executor",
        "ray_address",
    }
)


class RunConfig(BaseModel):
    tasks: list[str]
    model: str
    version: str = "v0"
    data_dir: str | None = None
    # The server's identity in the fingerprint: its URL, or for a pool of endpoints serving one
    # model (--base-url repeated) the URLs sorted and joined by spaces.
    base_url: str | None = None
    mode: Mode = Mode.COMPLETION
    retriever: str = "bm25"
    top_k_api: int | None = None  # None: the task's default
    top_k_example: int | None = None
    max_tokens: int | None = None
    # Stop sequences for every request of the run instead of each task's and mode's own
    # (``prompts.builder.default_stops``); None keeps the defaults, [] sends none.
    stop: list[str] | None = None
    # The instruction of chat and tools prompts instead of each mode's own (--system-prompt).
    system_prompt: str | None = None
    # The backend's own options that can change a result (``--model-arg``, checked by its
    # schema: hf's dtype, its chat template's digest...), as the runner found them: set by
    # the runner from the backend (``validate.with_model_args``), never by hand.
    model_args: dict[str, Any] = Field(default_factory=dict)
    temperature: float = 0.0
    seed: int | None = 0
    epochs: int = Field(default=1, ge=1)
    limit: int | None = None
    concurrency: int = Field(default=8, ge=1)
    sandbox_wall_s: float = DEFAULT_WALL_S
    sandbox_memory_mb: int = DEFAULT_MEMORY_MB
    use_cache: bool = True
    live: bool = False  # HTTP tasks: the real APIs instead of the simulators
    max_turns: int = Field(default=10, ge=1)  # model calls a multi-turn solve loop may make
    # Task name -> option values (``Task.option_defaults`` says which a task has).
    task_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # Role -> model spec: further models a task's solve loop uses (the awareness judge).
    roles: dict[str, str] = Field(default_factory=dict)
    # Where samples are solved: "local" (this process) or "ray" (a Ray cluster at
    # ``ray_address``; None: a local one Ray starts, or $RAY_ADDRESS). Operational: a run
    # resumes across executors, and its records are the same.
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None

    def settings(self) -> dict[str, Any]:
        """The settings that can change a result, as plain JSON data."""
        return self.model_dump(mode="json", exclude=set(OPERATIONAL) | {"task_options"})


def fingerprint_parts(config: RunConfig, tasks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What the fingerprint hashes: the settings, and per task what the runner found
    (``{"data": computed digest, "files": the task's own digest, "scoring_version": ...,
    "options": resolved options}``)."""
    return {
        "settings": config.settings(),
        "tasks": {name: dict(tasks[name]) for name in sorted(tasks)},
    }


def fingerprint_of(parts: Mapping[str, Any]) -> str:
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


_PART_NAMES = {
    "data": "its samples or prompt context",
    "files": "its data files",
    "scoring_version": "its scoring version",
    "options": "its options",
}


def changed_parts(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Readable differences between two runs' fingerprint parts, e.g. ``"home_search: its
    samples or prompt context changed"`` or ``"temperature: 0.0 -> 0.7"``."""
    lines: list[str] = []
    old_settings, new_settings = old.get("settings", {}), new.get("settings", {})
    for key in sorted(set(old_settings) | set(new_settings)):
        if old_settings.get(key) != new_settings.get(key):
            lines.append(
                f"{key}: {_short(old_settings.get(key))} -> {_short(new_settings.get(key))}"
            )
    lines.extend(_changed_model_files(old.get("model_files", {}), new.get("model_files", {})))
    old_tasks, new_tasks = old.get("tasks", {}), new.get("tasks", {})
    for name in sorted(set(old_tasks) | set(new_tasks)):
        before, after = old_tasks.get(name), new_tasks.get(name)
        if before is None or after is None:
            lines.append(f"task {name} {'added' if before is None else 'removed'}")
            continue
        for part, what in _PART_NAMES.items():
            if before.get(part) == after.get(part):
                continue
            if part in ("scoring_version", "options"):
                what += f" ({_short(before.get(part))} -> {_short(after.get(part))})"
            lines.append(f"{name}: {what} changed")
    return lines


def _changed_model_files(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``"model file agent.py changed"``: the files a model spec runs (``model_files``: per
    model of the run, ``{path: digest}``), compared between two runs."""
    lines = []
    for who in sorted(set(old) | set(new)):
        before, after = old.get(who) or {}, new.get(who) or {}
        label = "model file" if who == "model" else f"{who} model file"
        for name in sorted(set(before) | set(after)):
            if name not in before:
                lines.append(f"{label} {name} added")
            elif name not in after:
                lines.append(f"{label} {name} no longer found")
            elif before[name] != after[name]:
                lines.append(f"{label} {name} changed")
    return lines


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
