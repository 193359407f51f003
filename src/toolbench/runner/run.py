"""Setting up, resuming and finishing a run (the ``toolbench run`` command's body).

Everything a user can get wrong (task names, model spec, data files) is checked before the
run folder is created, so bad input leaves nothing half-written behind.
"""

from __future__ import annotations

import dataclasses
import functools
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.config import RunConfig, fingerprint_of, fingerprint_parts
from toolbench.core.agent import ContainedAgent
from toolbench.core.capabilities import option_defaults, resolved_options
from toolbench.core.subject import AgentSubject, Subject
from toolbench.core.task import Resources, Task
from toolbench.models.base import Model, ModelOptions
from toolbench.models.spec import pool_stats, preflight, replica_count
from toolbench.package import __version__
from toolbench.runner.capabilities import AddsRunInfo, KeepsModelNotes, Summarizes
from toolbench.runner.donekeys import DoneKeys
from toolbench.runner.engine import Executor, LocalExecutor, PreparedTask, SampleWork
from toolbench.runner.fingerprint import content_digest
from toolbench.runner.invocation import recorded_command, redact_command
from toolbench.runner.lifecycle import RunPlan, RunResult, execute_plan, slug
from toolbench.runner.metrics import EpochMetrics
from toolbench.runner.model_files import model_files
from toolbench.runner.ray_executor import RayExecutor
from toolbench.runner.validate import check_run, with_model_args
from toolbench.runner.work import (
    WorkRecipe,
    open_work,
    prepare_tasks,
    prompt_config_for,
)
from toolbench.tables.runs import add_count, empty_counts
from toolbench.tasks.registry import parse_task_list

__all__ = [
    "RunResult",
    "WorkRecipe",
    "execute",
    "open_work",
    "prepare_tasks",
    "prompt_config_for",
    "redact_command",
]


def execute(
    config: RunConfig,
    options: ModelOptions,
    out: Path | None,
    runs_dir: Path,
    cache_dir: Path | None,
    console: Console,
    sandbox_workers: int | None = None,
    allow_missing: bool = False,
    *,
    tasks: Sequence[Task] | None = None,
    subject: Subject | None = None,
) -> RunResult:
    """Run ``config`` into a run folder. ``tasks`` and ``subject``: objects to use instead of
    the registry's (``config.tasks`` and ``config.model`` should then carry their names)."""
    chosen = list(tasks) if tasks is not None else parse_task_list(",".join(config.tasks))
    check_run(config, chosen, subject)  # the same checks for the command line and the API
    config = with_model_args(config, options, subject)  # the backend's, in the fingerprint
    if replica_count(options) > 1 and options.replica_group is None:  # one name for them all
        options = dataclasses.replace(options, replica_group=uuid.uuid4().hex[:12])
    recipe = WorkRecipe(config, options, cache_dir, sandbox_workers, tasks, subject, allow_missing)
    executor = make_executor(config, recipe)  # Ray missing or unreachable: refused before loading
    with open_work(recipe) as opened:
        plan = task_plan(config, opened.work, opened.roles)
        if opened.model_notes is not None:
            plan.info["model_notes"] = opened.model_notes
            plan.info.update(
                {
                    p.task.model_notes_key: opened.model_notes
                    for p in opened.work.prepared
                    if isinstance(p.task, KeepsModelNotes) and p.task.model_notes_key
                }
            )
        plan.extra_final["isolation"] = opened.isolation  # what kept model code in
        under_test = opened.work.subject
        if isinstance(under_test, AgentSubject) and isinstance(under_test.agent, ContainedAgent):
            plan.info["agent_isolation"] = dict(under_test.agent.isolation)  # what kept it in
        plan.executor = executor
        more = getattr(plan.executor, "final_info", None)
        if callable(more):  # e.g. what each node did, its models' pools merged
            plan.final_info.append(more)
        return execute_plan(plan, out, runs_dir, console)


def make_executor(config: RunConfig, recipe: WorkRecipe) -> Executor:
    """``--executor``: this process (local), or a Ray cluster (each node builds the work from
    the recipe). Ray is imported only when asked for: local runs never need it."""
    if config.executor == "local":
        return LocalExecutor()
    return RayExecutor(recipe, address=config.ray_address)


def task_plan(config: RunConfig, work: SampleWork, roles: Mapping[str, Model]) -> RunPlan:
    """The run of ``config`` over the prepared work, as the lifecycle runs it."""
    prepared = work.prepared
    parts = fingerprint_parts(config, {p.task.name: _task_part(p) for p in prepared})
    files = {"model": model_files(config.model)}
    files.update({f"role {role}": model_files(spec) for role, spec in config.roles.items()})
    if any(files.values()):  # only then: the fingerprints of runs that name no file stay
        parts["model_files"] = {who: named for who, named in files.items() if named}
    models = [m for m in (work.model, *roles.values()) if m is not None]
    return RunPlan(
        prefix=f"{slug('+'.join(config.tasks))}-{slug(config.model)}-",
        fingerprint=fingerprint_of(parts),
        selection={"limit": config.limit, "epochs": config.epochs},
        info=_base_info(config, prepared, parts),
        work=work,
        finish=lambda info, records: finish_info(info, prepared, records),
        concurrency=config.concurrency,
        closers=[work.subject.aclose, *(m.aclose for m in roles.values())],
        preflight=[functools.partial(preflight, m) for m in models],
        on_folder=[functools.partial(_set_run_dir, p.resources) for p in prepared],
        fingerprint_parts=parts,
        final_info=[lambda info: pool_stats(work.model)],
    )


def _task_part(p: PreparedTask) -> dict[str, Any]:
    """One task's share of the fingerprint: the digest of its data as loaded (computed here,
    not taken from the task), the task's own digest of its files, its scoring version and
    its options."""
    return {
        "data": content_digest(p.data),
        "files": p.data.digest,
        "scoring_version": p.task.scoring_version,
        "options": resolved_options(p.task),
    }


def _set_run_dir(resources: Resources[Any], folder: Path) -> None:
    resources.run_dir = folder


def _base_info(
    config: RunConfig, prepared: list[PreparedTask], parts: dict[str, Any]
) -> dict[str, Any]:
    config_json = config.model_dump(mode="json")
    config_json["task_options"] = {
        p.task.name: resolved_options(p.task) for p in prepared if option_defaults(p.task)
    }
    info: dict[str, Any] = {
        "toolbench_version": __version__,
        "command": recorded_command(),
        "config": config_json,
        "data": {
            p.task.name: {
                "version": p.data.version,
                "source": p.data.source,
                "digest": p.data.digest,
                "n_samples": len(p.data.samples),
                "n_selected": len(p.samples),
            }
            for p in prepared
        },
        "metric_names": {p.task.name: list(p.task.metrics) for p in prepared},
        "fingerprint_parts": parts,
    }
    for p in prepared:
        if isinstance(p.task, AddsRunInfo):
            info.update(p.task.run_info(p.data))
    return info


def finish_info(
    info: dict[str, Any], prepared: list[PreparedTask], records: Iterable[dict[str, Any]]
) -> tuple[dict[str, Any], int]:
    """Metrics and counts per task over the selected samples and epochs of the whole log;
    and how many of those ended scored or as model errors. A task with its own ``summarize``
    (it runs alone) gives run.json's metrics and counts itself (it is handed its records);
    the others average outcomes per epoch.

    ``records`` is read once as it streams from the log: what is kept is per sample (an index
    of the selection) and per epoch (``EpochMetrics``), never the records of a whole run."""
    info = dict(info)
    epochs = int(info["config"]["epochs"])
    tallies = [_TaskTally(p) for p in prepared]
    index = {(s.task, s.id): (t, n) for t in tallies for n, s in enumerate(t.prepared.samples)}
    for record in records:
        found = index.get((record["task"], record["id"]))
        epoch = record["epoch"]
        if found is not None and 0 <= epoch < epochs:
            found[0].add(epoch, found[1], record)
    info["metrics"], info["metrics_spread"], info["counts"] = {}, {}, {}
    finished = 0
    for tally in tallies:
        task = tally.prepared.task
        listed = tally.listed()
        summary = (
            task.summarize(listed)
            if isinstance(task, Summarizes) and tally.listing is not None
            else None
        )
        if summary is not None:
            info["metrics"], info["counts"] = summary["metrics"], summary["counts"]
            del info["metrics_spread"]
            finished += sum(1 for r in listed if r["status"] != "infra_error")
            continue
        tally.unlist()  # a summarize that gave nothing: outcomes per epoch after all
        means, spread = tally.metrics.result()
        info["metrics"][task.name] = means
        if epochs > 1:
            info["metrics_spread"][task.name] = spread
        info["counts"][task.name] = tally.counts
        finished += tally.counts["scored"] + tally.counts["model_error"]
    return info, finished


class _TaskTally:
    """One task's share of ``finish_info``'s pass: counts and per-epoch metrics; the records
    themselves only for a task with its own ``summarize`` (its metrics need them all)."""

    def __init__(self, prepared: PreparedTask) -> None:
        self.prepared = prepared
        self.metrics = EpochMetrics(prepared.task, len(prepared.samples))
        self.counts = empty_counts()
        self.seen = DoneKeys()
        own = isinstance(prepared.task, Summarizes)
        self.listing: dict[tuple[int, int], dict[str, Any]] | None = {} if own else None

    def add(self, epoch: int, position: int, record: dict[str, Any]) -> None:
        if self.listing is not None:
            self.listing[(epoch, position)] = record  # last one wins if a key repeats
            return
        self.metrics.add(epoch, position, record)
        if self.seen.add((record["task"], str(record["id"]), epoch)):
            add_count(self.counts, record)

    def listed(self) -> list[dict[str, Any]]:
        """The records of a task that summarizes itself, epoch by epoch in sample order."""
        listing = self.listing or {}
        return [listing[key] for key in sorted(listing)]

    def unlist(self) -> None:
        """Count the listed records as any other task's (its ``summarize`` gave None)."""
        listing, self.listing = self.listing, None
        for (epoch, position), record in sorted((listing or {}).items()):
            self.add(epoch, position, record)
