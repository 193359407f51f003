"""What a record does not hold, recovered from the task data the run used.

A run record keeps the prediction, the scored state and ``closest_label`` but not the query,
the gold programs or the prompt (only its hash): records stay small, and the data is in the
task folder anyway. ``run.json`` says which task, data version, data folder and prompt
settings the run used, so ``show`` and the HTML report re-load the data (reading only),
rebuild the prompt of the sample's first model call with the task's own ``first_request``
(the code its solve loop sends that call with) and, where a diff of world states is wanted,
execute the golds in the sandbox as the run did. The data's digest is compared with the
run's, so a changed data folder is said, not silently shown.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.config import RunConfig
from toolbench.core.capabilities import BuildsFirstRequest
from toolbench.core.solve import prompt_hash
from toolbench.core.task import prepare
from toolbench.errors import UserError
from toolbench.prompts.builder import Prompter, shown_text
from toolbench.report.summary import LoadedRun
from toolbench.runner.work import prompt_config_for
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.registry import find_task
from toolbench.types import Sample


@dataclass
class SampleView:
    """A sample as the model was asked it: query, prompt, gold programs and (when executed)
    the gold world states."""

    query: str
    prompt: str
    prompt_matches: bool | None  # the rebuilt prompt's hash equals the record's (None: unknown)
    labels: tuple[str, ...]
    gold_states: list[Any] | None = None


@dataclass
class TaskSource:
    """One task's data as a run used it, or why it could not be loaded."""

    task: str
    samples: dict[str, Sample] = field(default_factory=dict)
    prompter: Prompter | None = None
    golds: dict[str, list[Any]] = field(default_factory=dict)
    data: Any = None  # the loaded TaskData
    problem: str = ""  # non-empty: the data could not be loaded (shown instead of the query)
    warning: str = ""  # e.g. the data changed since the run


def _config(run: LoadedRun) -> RunConfig | None:
    raw = run.info.get("config")
    if not isinstance(raw, dict):
        return None
    try:
        return RunConfig.model_validate(raw)
    except ValueError:
        return None


def load_source(run: LoadedRun, task_name: str, cache_dir: Path | None) -> TaskSource:
    """The task's data as ``run.json`` describes it (reading only; nothing executes)."""
    source = TaskSource(task_name)
    config = _config(run)
    task = find_task(task_name)
    if run.info.get("kind") == "aware":
        source.problem = "an awareness instance: its dialogue and APIs are in the details"
        return source
    if task is None or config is None:
        source.problem = (
            f"task {task_name!r} is not registered here"
            if task is None
            else "run.json holds no readable config"
        )
        return source
    recorded = (run.info.get("data") or {}).get(task_name) or {}
    data_dir = Path(config.data_dir) if config.data_dir else None
    try:
        data = task.load(str(recorded.get("version") or config.version), data_dir)
    except (UserError, OSError, ValueError) as exc:
        source.problem = f"cannot load the {task_name} data the run used: {exc}"[:500]
        return source
    if recorded.get("digest") and recorded["digest"] != data.digest:
        source.warning = (
            f"the {task_name} data at {data.source} changed since this run "
            f"(digest {data.digest}, run {recorded['digest']}): query and gold may not match"
        )
    source.samples = {s.id: s for s in data.samples}
    source.prompter = Prompter(data.context, prompt_config_for(task, config), cache_dir)
    source.data = data
    return source


def execute_golds(source: TaskSource, ids: Iterable[str]) -> None:
    """Run the golds of these samples (as ``prepare`` does for a run) for their world states.
    Only tasks whose records hold a state need this; any failure leaves the golds unknown."""
    data = source.data
    task = find_task(source.task)
    wanted = [source.samples[i] for i in dict.fromkeys(ids) if i in source.samples]
    if data is None or task is None or not wanted:
        return
    subset = dataclasses.replace(data, samples=wanted, gold={})
    try:
        with SandboxPool(workers=1) as pool:
            asyncio.run(prepare(task, subset, pool))
    except (UserError, OSError, RuntimeError) as exc:
        source.warning = f"golds could not be executed: {exc}"[:500]
        return
    source.golds.update(subset.gold)


def view_of(source: TaskSource, sample_id: str, record: dict[str, Any]) -> SampleView | None:
    """The sample behind a record, with the prompt of its first model call rebuilt for the
    record's epoch by the task's own ``first_request`` (the code its solve loop sends it
    with), so the hash comparison says whether the data or settings changed, nothing else."""
    sample = source.samples.get(sample_id)
    task = find_task(source.task)
    if sample is None or source.prompter is None or source.data is None or task is None:
        return None
    raw_epoch = record.get("epoch")
    epoch = raw_epoch if isinstance(raw_epoch, int) else 0
    try:
        if not isinstance(task, BuildsFirstRequest):  # e.g. a third-party task without one
            raise ValueError(f"task {source.task} declares no first_request")
        request = task.first_request(source.data, sample, epoch, source.prompter)
    except (UserError, OSError, ValueError, LookupError, TypeError) as exc:
        # The reader is told; the rest of the record is still shown.
        prompt, matches = f"(the prompt could not be rebuilt: {exc})"[:500], None
    else:
        prompt = shown_text(request)
        recorded = record.get("prompt_hash")
        matches = (prompt_hash(request) == recorded) if isinstance(recorded, str) else None
    golds = source.golds.get(sample_id)
    return SampleView(sample.query, prompt, matches, tuple(sample.labels), golds)


def closest_label(record: dict[str, Any], labels: tuple[str, ...]) -> int | None:
    """``details.closest_label`` when it names one of the labels."""
    details = record.get("details")
    index = details.get("closest_label") if isinstance(details, dict) else None
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(labels):
        return index
    return 0 if labels else None


def as_list(value: Any) -> list[Any]:
    """A record field that should be a list, or [] (records are read, not trusted)."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    """A record field that should be an object, or {}."""
    return value if isinstance(value, dict) else {}


def state_of(value: Any) -> dict[str, Any] | None:
    """A world state as a flat mapping, where the task has one (program tasks)."""
    if isinstance(value, dict):
        return value
    state = getattr(value, "state", None)
    return state if isinstance(state, dict) else None
