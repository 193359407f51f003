"""``toolbench aware run``: evaluate a model on an awareness dataset, into a run folder.

The folder is the same as a tool-task run's (``run.json`` + append-only ``samples.jsonl``), so
resume, infra-error retry and ``toolbench report`` work the same way; ``run.json`` says
``"kind": "aware"`` so the report knows to print the awareness tables.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console

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
from toolbench.runner.engine import WorkItem
from toolbench.runner.invocation import recorded_command
from toolbench.runner.lifecycle import RunPlan, RunResult, execute_plan, slug

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


def prepare(config: AwareConfig, options: ModelOptions, cache_dir: Path | None) -> Prepared:
    """Everything checked and built before a run folder exists (bad input leaves nothing)."""
    import sys

    from toolbench.models.spec import AWARENESS, FREE_TEXT, make_model, require

    require(config.model, AWARENESS)  # 'baseline' would answer 660 items unparseably
    if config.judge and "explain" in config.modes:
        require(config.judge, FREE_TEXT, "--judge")
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
    for line in pending_warnings(config.dataset, everything, config.include_pending):
        print(f"warning: {line}", file=sys.stderr)
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
    from toolbench.models.spec import preflight

    models = [m for m in (prepared.model, prepared.judge) if m is not None]
    closers: list[Callable[[], Awaitable[None]]] = [m.aclose for m in models]
    checks: list[Callable[[], Awaitable[None]]] = [partial(preflight, m) for m in models]
    plan = RunPlan(
        prefix=f"aware-{slug(config.dataset.stem)}-{slug(config.model)}-",
        fingerprint=fingerprint(config),
        selection={"limit": config.limit},
        info=_base_info(config, prepared),
        work=[_work_item(item, prepared, config) for item in prepared.items],
        finish=lambda info, records: _finish_info(info, prepared, records),
        concurrency=config.concurrency,
        closers=closers,
        preflight=checks,
    )
    return execute_plan(plan, out, runs_dir, console)


def _work_item(item: Item, prepared: Prepared, config: AwareConfig) -> WorkItem:
    async def run() -> dict[str, Any]:
        return await solve(item, prepared.model, prepared.judge, prepared.demos, config.settings())

    return WorkItem((f"aware-{item.task}", item.id, 0), "aware", run)


def _base_info(config: AwareConfig, prepared: Prepared) -> dict[str, Any]:
    cfg = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
    return {
        "toolbench_version": __version__,
        "kind": KIND,
        "command": recorded_command(),
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
    }


def _finish_info(
    info: dict[str, Any], prepared: Prepared, records: list[dict[str, Any]]
) -> tuple[dict[str, Any], int]:
    info = dict(info)
    wanted = {(f"aware-{i.task}", i.id) for i in prepared.items}
    records = [r for r in records if (r["task"], r["id"]) in wanted]
    info["metrics"], info["counts"] = summary_metrics(records)
    finished = sum(1 for r in records if r["status"] != "infra_error")
    return info, finished
