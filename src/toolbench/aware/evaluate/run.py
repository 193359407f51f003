"""``toolbench aware run``: evaluate a model on an awareness dataset, into a run folder.

The folder is the same as a tool-task run's (``run.json`` + append-only ``samples.jsonl``), so
resume, infra-error retry and ``toolbench report`` work the same way; ``run.json`` says
``"kind": "aware"`` so the report knows to print the awareness tables.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolbench import __version__
from toolbench.aware.evaluate.baselines import AlwaysModel, RandomModel, SimilarityModel
from toolbench.aware.evaluate.demos import DemoPool
from toolbench.aware.evaluate.items import Item, build_items, evaluated
from toolbench.aware.evaluate.prompts import PROMPT_VERSION
from toolbench.aware.evaluate.solve import Settings, solve
from toolbench.aware.evaluate.summary import summary_metrics
from toolbench.aware.schema import Instance, read_instances
from toolbench.errors import UserError
from toolbench.models.base import Model, ModelOptions
from toolbench.runner.engine import SessionStats
from toolbench.runner.run import (
    RateColumn,
    RunResult,
    add_session,
    carried_totals,
    folder_for,
    open_run,
    record_log_check,
    redact_command,
    slug,
)
from toolbench.runner.store import RunStore, read_records

KIND = "aware"


@dataclass(frozen=True)
class AwareConfig:
    dataset: Path
    model: str
    modes: tuple[str, ...] = ("explicit",)
    shots: tuple[int, ...] = (0,)
    seed: int = 0
    demos: Path | None = None
    judge: str | None = None
    judge_labels: Path | None = None
    include_pending: bool = False
    max_tokens: int = 256
    temperature: float = 0.0
    limit: int | None = None
    concurrency: int = 8
    encoder: str | None = None
    use_cache: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    def settings(self) -> Settings:
        return Settings(max_tokens=self.max_tokens, temperature=self.temperature, seed=self.seed)


def file_digest(path: Path | None) -> str | None:
    return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()


def fingerprint(config: AwareConfig) -> str:
    """Everything that changes answers or scores; not the limit, concurrency or cache use."""
    material = {
        "kind": KIND,
        "prompt_version": PROMPT_VERSION,
        "dataset": file_digest(config.dataset),
        "demos": file_digest(config.demos),
        "judge_labels": file_digest(config.judge_labels),
        **{
            k: v
            for k, v in asdict(config).items()
            if k not in ("dataset", "demos", "judge_labels", "limit", "concurrency", "use_cache")
        },
    }
    text = json.dumps(material, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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
            raise UserError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
        if not (
            isinstance(obj, dict)
            and isinstance(obj.get("id"), str)
            and isinstance(obj.get("correct"), bool)
        ):
            raise UserError(f'{path}:{number}: expected {{"id": "...", "correct": true|false}}')
        labels[obj["id"]] = obj["correct"]
    return labels


@dataclass
class Prepared:
    instances: list[Instance]
    items: list[Item]
    demos: DemoPool
    model: Model
    judge: Model | None
    judge_labels: dict[str, bool]
    notes: dict[str, Any]


def _check_both_labels(
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


def prepare(config: AwareConfig, options: ModelOptions, cache_dir: Path | None) -> Prepared:
    """Everything checked and built before a run folder exists (bad input leaves nothing)."""
    from toolbench.models.spec import make_model

    everything = read_instances(config.dataset)
    instances = evaluated(everything, config.include_pending)
    if config.limit is not None:
        instances = limited_families(instances, config.limit)
    if not instances:
        raise UserError(
            f"{config.dataset}: no instances to evaluate (only accepted ones are, unless "
            "--include-pending; review with 'toolbench aware verify')"
        )
    _check_both_labels(config.dataset, everything, instances)
    pool = (
        evaluated(read_instances(config.demos), include_pending=False)
        if config.demos is not None
        else instances
    )
    demos = DemoPool(pool, config.seed)
    if "explicit" in config.modes:
        for k in config.shots:
            demos.check(k)
    if "explain" in config.modes and not config.judge:
        raise UserError("--mode explain needs --judge SPEC (the model that grades explanations)")
    labels = load_judge_labels(config.judge_labels)
    notes: dict[str, Any] = {}
    model = _baseline(config, pool, instances, cache_dir, notes) or make_model(
        config.model, options
    )
    judge = (
        make_model(config.judge, options) if "explain" in config.modes and config.judge else None
    )
    items = build_items(instances, config.modes, config.shots)
    return Prepared(instances, items, demos, model, judge, labels, notes)


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


def _baseline(
    config: AwareConfig,
    pool: list[Instance],
    instances: list[Instance],
    cache_dir: Path | None,
    notes: dict[str, Any],
) -> Model | None:
    spec = config.model.strip()
    if spec in ("always-yes", "always-no"):
        return AlwaysModel(spec == "always-yes")
    if spec == "random" or spec.startswith("random:"):
        seed_text = spec.partition(":")[2] or str(config.seed)
        try:
            return RandomModel(int(seed_text))
        except ValueError:
            raise UserError(f"--model {spec}: expected random or random:SEED") from None
    if spec == "similarity":
        from toolbench.aware.encoder import ApiEncoder

        with ApiEncoder(config.encoder, cache_dir=cache_dir, use_cache=config.use_cache) as enc:
            model = SimilarityModel.fit(enc, pool, instances)
        notes.update(model.fit_notes)
        notes["encoder"] = enc.identity
        return model
    return None


def execute_aware(
    config: AwareConfig,
    options: ModelOptions,
    out: Path | None,
    runs_dir: Path,
    cache_dir: Path | None,
    console: Console,
) -> RunResult:
    prepared = prepare(config, options, cache_dir)
    print_ = fingerprint(config)
    prefix = f"aware-{slug(config.dataset.stem)}-{slug(config.model)}-"
    folder = folder_for(prefix, print_, out, runs_dir)
    store, previous, done = open_run(folder, print_, console)
    info = _base_info(config, print_, prepared, previous)
    store.write_info(info)
    stats, status = SessionStats(), "failed"
    try:
        stats = asyncio.run(_run(prepared, config, set(done), store, console))
        status = "complete"
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
        raise
    finally:
        store.close()
        info = _finish_info(info, prepared, folder, stats, status)
        record_log_check(info, store, console)
        store.write_info(info)
    return RunResult(folder=folder, info=info, stats=stats)


async def _run(
    prepared: Prepared,
    config: AwareConfig,
    done: set[tuple[str, str, int]],
    store: RunStore,
    console: Console,
) -> SessionStats:
    stats = SessionStats()
    work = [i for i in prepared.items if (f"aware-{i.task}", i.id, 0) not in done]
    queue: asyncio.Queue[Item] = asyncio.Queue()
    for item in work:
        queue.put_nowait(item)
    start = time.perf_counter()
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        task_id = bar.add_task(
            "aware", total=len(prepared.items), completed=len(prepared.items) - len(work)
        )

        async def worker() -> None:
            while True:
                try:
                    item = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                record = await solve(
                    item, prepared.model, prepared.judge, prepared.demos, config.settings()
                )
                store.append(record)
                _count(stats, record)
                bar.advance(task_id)

        workers = [
            asyncio.create_task(worker()) for _ in range(min(config.concurrency, len(work)) or 1)
        ]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            stats.elapsed_s = time.perf_counter() - start
            await prepared.model.aclose()
            if prepared.judge is not None:
                await prepared.judge.aclose()
    return stats


def _count(stats: SessionStats, record: dict[str, Any]) -> None:
    stats.done += 1
    stats.counts[record["status"]] += 1
    if record["latency_s"] is not None:
        stats.model_calls += 1
        stats.cached_calls += int(record["cached"])
    stats.prompt_tokens += record["prompt_tokens"]
    stats.completion_tokens += record["completion_tokens"]


def _base_info(
    config: AwareConfig, print_: str, prepared: Prepared, previous: dict[str, Any]
) -> dict[str, Any]:
    cfg = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
    return {
        "toolbench_version": __version__,
        "kind": KIND,
        "status": "running",
        "fingerprint": print_,
        "command": redact_command(sys.argv),
        "config": {**cfg, "epochs": 1, "prompt_version": PROMPT_VERSION},
        "data": {
            "dataset": str(config.dataset),
            "digest": file_digest(config.dataset),
            "n_instances": len(prepared.instances),
            "n_items": len(prepared.items),
            "demos": str(config.demos) if config.demos else "(the evaluated dataset)",
        },
        "baseline": prepared.notes,
        "judge_labels": prepared.judge_labels,
        **carried_totals(previous),
    }


def _finish_info(
    info: dict[str, Any], prepared: Prepared, folder: Path, stats: SessionStats, status: str
) -> dict[str, Any]:
    info = dict(info)
    wanted = {(f"aware-{i.task}", i.id) for i in prepared.items}
    records = [r for r in read_records(folder) if (r["task"], r["id"]) in wanted]
    info["metrics"], info["counts"] = summary_metrics(records)
    add_session(info, stats)
    finished = sum(1 for r in records if r["status"] != "infra_error")
    if status == "complete" and finished < len(prepared.items):
        status = "incomplete"
    info["status"] = status
    return info
