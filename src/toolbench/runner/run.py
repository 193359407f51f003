"""Setting up, resuming and finishing a run (the ``toolbench run`` command's body).

Everything a user can get wrong (task names, model spec, data files) is checked before the
run folder is created, so bad input leaves nothing half-written behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench import __version__
from toolbench.config import RunConfig
from toolbench.core.task import LiveOptions, Resources, Task
from toolbench.errors import UserError
from toolbench.models.base import Model, ModelOptions
from toolbench.models.builtin import ReplayModel, check_replay
from toolbench.models.spec import make_model, preflight
from toolbench.prompts.builder import PromptConfig, Prompter
from toolbench.runner.engine import PreparedTask, sample_work
from toolbench.runner.invocation import recorded_command, redact_command
from toolbench.runner.lifecycle import RunPlan, RunResult, execute_plan, slug
from toolbench.runner.metrics import counts_of, task_metrics
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.memo import MemoizedSandbox, ProgramRunner
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.registry import parse_task_list

__all__ = ["RunResult", "execute", "prepare_tasks", "prompt_config_for", "redact_command"]


def prompt_config_for(task: Task, config: RunConfig) -> PromptConfig:
    d = task.defaults
    return PromptConfig(
        mode=config.mode,
        retriever=config.retriever,
        top_k_api=d.top_k_api if config.top_k_api is None else config.top_k_api,
        top_k_example=d.top_k_example if config.top_k_example is None else config.top_k_example,
        max_tokens=d.max_tokens if config.max_tokens is None else config.max_tokens,
        temperature=config.temperature,
        seed=config.seed,
    )


def prepare_tasks(
    config: RunConfig, sandbox: ProgramRunner, cache_dir: Path | None
) -> list[PreparedTask]:
    """Load every task's data and build its prompts, then execute the golds (a failing gold
    is a ``UserError`` naming file:line, raised before any run folder exists)."""
    data_dir = Path(config.data_dir) if config.data_dir else None
    live = LiveOptions(cache_dir=cache_dir if config.use_cache else None) if config.live else None
    tasks = [_with_options(task, config) for task in parse_task_list(",".join(config.tasks))]
    if config.fix_corner_name and not any(hasattr(task, "fix_corner_name") for task in tasks):
        raise UserError("--fix-corner-name is for tabletop: add tabletop to the tasks or drop it")
    loaded = [task.load(config.version, data_dir, live) for task in tasks]

    async def run_golds() -> None:
        for task, data in zip(tasks, loaded, strict=True):
            await task.prepare(data, sandbox)

    asyncio.run(run_golds())
    prepared = []
    for task, data in zip(tasks, loaded, strict=True):
        samples = data.samples[: config.limit] if config.limit else data.samples
        prompter = Prompter(data.context, prompt_config_for(task, config), cache_dir)
        prompter.prepare(samples)
        resources = Resources(
            data, sandbox, prompter, max_turns=config.max_turns, history=config.history
        )
        prepared.append(PreparedTask(task=task, resources=resources, samples=samples))
    return prepared


def _with_options(task: Task, config: RunConfig) -> Task:
    """The task with the run's task-specific options (tabletop's ``--fix-corner-name``)."""
    if config.fix_corner_name and hasattr(task, "fix_corner_name"):
        return dataclasses.replace(task, fix_corner_name=True)  # type: ignore[type-var]
    return task


def execute(
    config: RunConfig,
    options: ModelOptions,
    out: Path | None,
    runs_dir: Path,
    cache_dir: Path | None,
    console: Console,
    sandbox_workers: int | None = None,
    allow_missing: bool = False,
) -> RunResult:
    limits = Limits(wall_s=config.sandbox_wall_s, memory_mb=config.sandbox_memory_mb)
    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(SandboxPool(workers=sandbox_workers, limits=limits))
        sandbox: ProgramRunner = pool
        if config.use_cache and cache_dir is not None:
            memo = MemoizedSandbox(pool, cache_dir / "executions.sqlite", limits)
            stack.callback(memo.close)
            sandbox = memo
        model = make_model(config.model, options)
        prepared = prepare_tasks(config, sandbox, cache_dir)
        if isinstance(model, ReplayModel):
            _check_replay(model, prepared, allow_missing)
        for task in prepared:  # e.g. a live task's scratch resources, released when the run ends
            close = getattr(task.data.runtime, "close", None)
            if callable(close):
                stack.callback(close)
        plan = task_plan(config, prepared, model)
        plan.extra_final["isolation"] = pool.isolation  # what kept model code in
        return execute_plan(plan, out, runs_dir, console)


def _check_replay(model: ReplayModel, prepared: list[PreparedTask], allow_missing: bool) -> None:
    """A replay file that does not fit the data is refused before anything runs (exit 2);
    with --allow-missing the run goes on, samples without a prediction score as crashes, and
    one line on stderr says what was found."""
    known = {p.task.name: {s.id for s in p.data.samples} for p in prepared}
    wanted = {p.task.name: {s.id for s in p.samples} for p in prepared}
    problems = check_replay(model, known, wanted)
    if not problems:
        return
    text = "; ".join(problems)
    if not allow_missing:
        raise UserError(
            f"--model replay:{model.path}: {text}; fix the file, or pass --allow-missing to "
            "score samples without a prediction as crashes"
        )
    print(f"toolbench: warning: replay file {model.path}: {text}", file=sys.stderr)


def task_plan(config: RunConfig, prepared: list[PreparedTask], model: Model) -> RunPlan:
    """The run of ``config`` over the prepared tasks, as the lifecycle runs it."""
    digests = {p.task.name: p.data.digest for p in prepared}
    return RunPlan(
        prefix=f"{slug('+'.join(config.tasks))}-{slug(config.model)}-",
        fingerprint=config.fingerprint(digests),
        selection={"limit": config.limit, "epochs": config.epochs},
        info=_base_info(config, prepared),
        work=sample_work(prepared, config.epochs, model),
        finish=lambda info, records: finish_info(info, prepared, records),
        concurrency=config.concurrency,
        closers=[model.aclose],
        preflight=[lambda: preflight(model)],
        on_folder=[functools.partial(_set_run_dir, p.resources) for p in prepared],
    )


def _set_run_dir(resources: Resources, folder: Path) -> None:
    resources.run_dir = folder


def _base_info(config: RunConfig, prepared: list[PreparedTask]) -> dict[str, Any]:
    return {
        "toolbench_version": __version__,
        "command": recorded_command(),
        "config": config.model_dump(mode="json"),
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
    }


def finish_info(
    info: dict[str, Any], prepared: list[PreparedTask], records: list[dict[str, Any]]
) -> tuple[dict[str, Any], int]:
    """Metrics and counts per task over the selected samples and epochs of the whole log;
    and how many of those ended scored or as model errors."""
    info = dict(info)
    epochs = int(info["config"]["epochs"])
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_task[record["task"]].append(record)
    info["metrics"], info["metrics_spread"], info["counts"] = {}, {}, {}
    for p in prepared:
        selected = {s.id for s in p.samples}
        task_records = [
            r for r in by_task[p.task.name] if r["id"] in selected and r["epoch"] < epochs
        ]
        means, spread = task_metrics(p.task, task_records)
        info["metrics"][p.task.name] = means
        if epochs > 1:
            info["metrics_spread"][p.task.name] = spread
        info["counts"][p.task.name] = counts_of(task_records)
    finished = sum(c["scored"] + c["model_error"] for c in info["counts"].values())
    return info, finished
