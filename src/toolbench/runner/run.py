"""Setting up, resuming and finishing a run (the ``toolbench run`` command's body).

Everything a user can get wrong (task names, model spec, data files) is checked before the
run folder is created, so bad input leaves nothing half-written behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Task as ProgressTask
from rich.text import Text

from toolbench import __version__
from toolbench.config import RunConfig
from toolbench.models.base import Model, ModelOptions
from toolbench.models.spec import make_model
from toolbench.prompts.builder import PromptConfig, Prompter
from toolbench.runner.engine import PreparedTask, SessionStats, run_all
from toolbench.runner.metrics import counts_of, task_metrics
from toolbench.runner.store import RunStore, read_records, read_run_info
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.memo import MemoizedSandbox, ProgramRunner
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.base import LiveOptions, Task
from toolbench.tasks.registry import parse_task_list


class RateColumn(ProgressColumn):
    """Samples per second, the number users watch when tuning --concurrency."""

    def render(self, task: ProgressTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:7.1f}/s" if speed else "      -/s", style="progress.data.speed")


@dataclass
class RunResult:
    folder: Path
    info: dict[str, Any]
    stats: SessionStats


SECRET_FLAGS = ("--api-key",)


def redact_command(argv: list[str]) -> list[str]:
    """The command line as recorded in run.json, with secrets replaced: run folders get shared."""
    redacted: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            redacted.append("***")
            hide_next = False
        elif arg in SECRET_FLAGS:
            redacted.append(arg)
            hide_next = True
        elif arg.startswith(tuple(f"{flag}=" for flag in SECRET_FLAGS)):
            redacted.append(arg.split("=", 1)[0] + "=***")
        else:
            redacted.append(arg)
    return redacted


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
    data_dir = Path(config.data_dir) if config.data_dir else None
    live = LiveOptions(cache_dir=cache_dir if config.use_cache else None) if config.live else None
    prepared = []
    for task in parse_task_list(",".join(config.tasks)):
        data = task.load(config.version, data_dir, sandbox, live)
        samples = data.samples[: config.limit] if config.limit else data.samples
        prompter = Prompter(data.context, prompt_config_for(task, config), cache_dir)
        prompter.prepare(samples)
        prepared.append(PreparedTask(task=task, data=data, prompter=prompter, samples=samples))
    return prepared


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80]


def choose_folder(config: RunConfig, fingerprint: str, out: Path | None, runs_dir: Path) -> Path:
    """--out if given; else the newest unfinished run of this config (resume); else a new one."""
    prefix = f"{slug('+'.join(config.tasks))}-{slug(config.model)}-"
    return folder_for(prefix, fingerprint, out, runs_dir)


def folder_for(prefix: str, fingerprint: str, out: Path | None, runs_dir: Path) -> Path:
    """--out if given; else the newest unfinished run with this prefix and fingerprint; else a
    new ``<prefix><timestamp>`` folder."""
    if out is not None:
        return out
    if runs_dir.is_dir():
        for folder in sorted(runs_dir.glob(prefix + "*"), reverse=True):
            try:
                info = read_run_info(folder)
            except Exception:
                continue
            if info.get("fingerprint") == fingerprint and info.get("status") != "complete":
                return folder
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return runs_dir / f"{prefix}{stamp}"


def execute(
    config: RunConfig,
    options: ModelOptions,
    out: Path | None,
    runs_dir: Path,
    cache_dir: Path | None,
    console: Console,
    sandbox_workers: int | None = None,
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
        for task in prepared:  # e.g. a live task's scratch resources, released when the run ends
            close = getattr(task.data.runtime, "close", None)
            if callable(close):
                stack.callback(close)
        digests = {p.task.name: p.data.digest for p in prepared}
        fingerprint = config.fingerprint(digests)
        folder = choose_folder(config, fingerprint, out, runs_dir)
        store, previous, done = open_run(folder, fingerprint, console)
        info = _base_info(config, fingerprint, prepared, previous)
        store.write_info(info)
        stats = SessionStats()
        status = "failed"
        try:
            stats = _run_with_progress(config, prepared, set(done), model, sandbox, store, console)
            status = "complete"
        except (KeyboardInterrupt, asyncio.CancelledError):
            status = "interrupted"
            raise
        finally:
            store.close()
            info = finish_info(info, prepared, folder, stats, status)
            info["isolation"] = pool.isolation  # what kept model code in (see sandbox README)
            record_log_check(info, store, console)
            store.write_info(info)
        return RunResult(folder=folder, info=info, stats=stats)


def _run_with_progress(
    config: RunConfig,
    prepared: list[PreparedTask],
    done: set[tuple[str, str, int]],
    model: Model,
    sandbox: ProgramRunner,
    store: RunStore,
    console: Console,
) -> SessionStats:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(
        *columns, console=console, transient=False, disable=not console.is_terminal
    ) as bar:
        bars = {}
        for p in prepared:
            total = len(p.samples) * config.epochs
            finished = sum(1 for (t, _, e) in done if t == p.task.name and e < config.epochs)
            bars[p.task.name] = bar.add_task(p.task.name, total=total, completed=finished)

        def advance(task_name: str) -> None:
            bar.advance(bars[task_name])

        async def main() -> SessionStats:
            try:
                return await run_all(
                    prepared,
                    config.epochs,
                    done,
                    model,
                    sandbox,
                    store,
                    config.concurrency,
                    advance,
                )
            finally:
                await model.aclose()

        return asyncio.run(main())


def _base_info(
    config: RunConfig, fingerprint: str, prepared: list[PreparedTask], previous: dict[str, Any]
) -> dict[str, Any]:
    return {
        "toolbench_version": __version__,
        "status": "running",
        "fingerprint": fingerprint,
        "command": redact_command(sys.argv),
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
        **carried_totals(previous),
    }


def finish_info(
    info: dict[str, Any],
    prepared: list[PreparedTask],
    folder: Path,
    stats: SessionStats,
    status: str,
) -> dict[str, Any]:
    info = dict(info)
    records = read_records(folder)
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
    add_session(info, stats)
    total = sum(len(p.samples) for p in prepared) * epochs
    finished = sum(c["scored"] + c["model_error"] for c in info["counts"].values())
    if status == "complete" and finished < total:
        status = "incomplete"  # infra errors remain; rerun the command to retry them
    info["status"] = status
    return info


def open_run(
    folder: Path, fingerprint: str, console: Console
) -> tuple[RunStore, dict[str, Any], dict[tuple[str, str, int], dict[str, Any]]]:
    """The run folder's store, its previous run.json (empty if new) and the finished records;
    a folder holding another configuration is refused (``UserError``)."""
    store = RunStore(folder)
    previous: dict[str, Any] = {}
    if store.exists():
        store.check_fingerprint(fingerprint)
        previous = read_run_info(folder)
    done = store.prepare_resume()
    if done:
        console.print(f"[dim]resuming {folder}: {len(done)} records already done[/dim]")
    return store, previous, done


def record_log_check(info: dict[str, Any], store: RunStore, console: Console) -> None:
    """Check the log against the chain this process wrote, before run.json is finalised:
    ``"log_verified"`` in run.json, and one warning line if the log changed under the run
    (e.g. a program that escaped the sandbox rewrote it). In place; never raises."""
    check = store.verify()
    info["log_verified"] = check.ok
    info.pop("log_problem", None)
    if not check.ok:
        info["log_problem"] = check.describe(store.samples_file)
        console.print(
            f"warning: {info['log_problem']}", style="bold red", markup=False, soft_wrap=True
        )


def carried_totals(previous: dict[str, Any]) -> dict[str, Any]:
    """The run.json totals a resumed run continues from (fresh ones for a new run)."""
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    timing = previous.get("timing", {})
    return {
        "timing": {
            "started": timing.get("started", now),
            "sessions": timing.get("sessions", 0) + 1,
            "elapsed_s": timing.get("elapsed_s", 0.0),
        },
        "tokens": previous.get("tokens", {"prompt": 0, "completion": 0}),
        "model_calls": previous.get("model_calls", {"live": 0, "cached": 0}),
    }


def add_session(info: dict[str, Any], stats: SessionStats) -> None:
    """Add this session's time, tokens and model calls to the run's totals (in place)."""
    timing = dict(info["timing"])
    timing["finished"] = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    timing["elapsed_s"] = round(float(timing.get("elapsed_s", 0.0)) + stats.elapsed_s, 3)
    timing["last_session_samples_per_s"] = (
        round(stats.done / stats.elapsed_s, 2) if stats.elapsed_s > 0 else None
    )
    info["timing"] = timing
    info["tokens"] = {
        "prompt": info["tokens"]["prompt"] + stats.prompt_tokens,
        "completion": info["tokens"]["completion"] + stats.completion_tokens,
    }
    info["model_calls"] = {
        "live": info["model_calls"]["live"] + stats.model_calls - stats.cached_calls,
        "cached": info["model_calls"]["cached"] + stats.cached_calls,
    }
