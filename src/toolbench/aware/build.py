"""``toolbench aware build``: load sources, apply manipulations, write one dataset.

The dataset holds, for every complete instance that got at least one incomplete twin, the
complete instance followed by its twins (so a file is balanced and each pair sits together).
Sources that are incomplete already (BFCL irrelevance) are imported as they are. Instances a
manipulation could not handle are reported, never silently dropped; model failures (after
retries) are reported as failures and a rerun fills them in from the response cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.aware.encoder import ApiEncoder
from toolbench.aware.manipulate.api_replacement import (
    ReplacementOptions,
    build_pool,
    replace_relevant_apis,
)
from toolbench.aware.manipulate.replacement_checks import (
    DEFAULT_CEILING,
    CheckOptions,
    CheckTally,
)
from toolbench.aware.manipulate.replacement_judge import ROUNDS, judge_all
from toolbench.aware.manipulate.slot_removal import remove_slots
from toolbench.aware.manipulate.tool_removal import remove_tools
from toolbench.aware.manipulate.utterance_removal import (
    parse_removal_kind,
    remove_utterances,
)
from toolbench.aware.schema import MANIPULATIONS, Instance, Verification
from toolbench.aware.sources import SOURCES
from toolbench.aware.sources.stabletoolbench import load_api_pool
from toolbench.aware.sources.tasks import load_task
from toolbench.errors import UserError, did_you_mean

SOURCE_KINDS = ("apibank", "toolbench", "bfcl", "task")
Progress = Callable[[int], None]


@dataclass(frozen=True)
class BuildSettings:
    manipulations: tuple[str, ...]
    seed: int
    model: Any = None  # a toolbench Model, for utterance removal
    encoder_path: str | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    pool_paths: tuple[Path, ...] = ()
    rank: int = 1
    choose_from: int = 1
    min_similarity: float | None = None
    max_similarity: float | None = None
    similarity_ceiling: float | None = DEFAULT_CEILING
    verify_model: Any = None  # a toolbench Model that judges replacement twins (optional)
    removal_kind: str = "missing_argument"  # utterance_removal: or "unclear_request"
    concurrency: int = 4
    #: ``(n, total)``: n more of ``total`` texts embedded (API replacement's long first phase).
    encoding_progress: Callable[[int, int], None] | None = None


@dataclass
class BuildOutcome:
    instances: list[Instance] = field(default_factory=list)
    #: (instance id, manipulation, why) for instances a manipulation could not make a twin of.
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    #: (instance id, message) for model calls that failed after retries.
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: API replacement's pre-verification: candidates (and twins) each check turned down.
    checks: CheckTally = field(default_factory=CheckTally)


def parse_source(spec: str) -> tuple[str, str]:
    """``kind:PATH`` (or ``task:NAME``) -> (kind, rest), with a one-line error otherwise."""
    kind, colon, rest = spec.partition(":")
    if not colon or not rest:
        raise UserError(
            f"--source {spec!r}: expected KIND:PATH with KIND one of {', '.join(SOURCE_KINDS)} "
            "(e.g. apibank:level-1-api.json or task:home_search)"
        )
    if kind not in SOURCE_KINDS:
        raise UserError(
            f"--source {spec!r}: unknown kind '{kind}'{did_you_mean(kind, SOURCE_KINDS)}"
        )
    return kind, rest


def parse_manipulations(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    for name in names:
        if name not in MANIPULATIONS:
            raise UserError(f"--manipulation '{name}'{did_you_mean(name, MANIPULATIONS)}")
    return names or ("none",)


def load_source(spec: str) -> list[Instance]:
    kind, rest = parse_source(spec)
    if kind == "task":
        return load_task(rest)
    path = Path(rest).expanduser()
    if not path.exists():
        raise UserError(f"--source {spec!r}: {path} does not exist")
    return SOURCES[kind](path)


def _extra_pool(paths: Sequence[Path]) -> list[Any]:
    pool = []
    for path in paths:
        if not path.exists():
            raise UserError(f"--pool {path}: does not exist")
        pool.extend(load_api_pool(path))
    return pool


def _replace(
    complete: list[Instance], settings: BuildSettings, progress: Progress | None
) -> tuple[list[Instance], list[tuple[str, str]], CheckTally, list[tuple[str, str]]]:
    options = ReplacementOptions(
        seed=settings.seed,
        rank=settings.rank,
        choose_from=settings.choose_from,
        min_similarity=settings.min_similarity,
        max_similarity=settings.max_similarity,
        checks=CheckOptions(ceiling=settings.similarity_ceiling),
    )
    pool = build_pool(complete, _extra_pool(settings.pool_paths))
    encoder = ApiEncoder(
        settings.encoder_path, cache_dir=settings.cache_dir, use_cache=settings.use_cache
    )
    with encoder:
        result = replace_relevant_apis(
            complete, pool, encoder, options, progress=progress, encoding=settings.encoding_progress
        )
        if settings.verify_model is None:
            return list(result.instances), list(result.skipped), result.checks, []
        return _judged_replacements(complete, result, pool, encoder, options, settings)


def _judged_replacements(
    complete: list[Instance],
    first: Any,
    pool: list[Any],
    encoder: Any,
    options: Any,
    settings: BuildSettings,
) -> tuple[list[Instance], list[tuple[str, str]], CheckTally, list[tuple[str, str]]]:
    """Ask the verify model about every twin; a twin it judges still servable is rebuilt from
    the next-ranked candidate that passes (``replacement_judge``), at most ``ROUNDS`` times.
    One event loop for every round: the model's HTTP client belongs to the loop it was made in.
    """
    model = settings.verify_model
    by_id = {i.id: i for i in complete}
    kept: dict[str, Instance] = {}
    failed: list[tuple[str, str]] = []
    exclude: dict[str, set[str]] = {}
    skipped, tally = list(first.skipped), first.checks

    async def rounds() -> None:
        nonlocal skipped
        result = first
        try:
            for round_number in range(1, ROUNDS + 1):
                verdicts = await judge_all(result.instances, model, settings.concurrency)
                retry = []
                for twin in result.instances:
                    verdict, original = verdicts[twin.id], twin.twin_id or ""
                    if isinstance(verdict, str):
                        failed.append((twin.id, verdict))
                    elif verdict.serves and round_number < ROUNDS:
                        used = {r.replacement for r in twin.provenance.replacements}
                        exclude.setdefault(original, set()).update(used)
                        retry.append(by_id[original])
                    else:
                        kept[original] = _with_verdict(twin, verdict, model.name)
                if not retry:
                    return
                result = replace_relevant_apis(retry, pool, encoder, options, exclude=exclude)
                skipped += result.skipped
                tally.merge(result.checks)
        finally:
            await model.aclose()

    asyncio.run(rounds())
    twins = [kept[i.id] for i in complete if i.id in kept]
    return twins, skipped, tally, failed


def _with_verdict(twin: Instance, verdict: Any, model_name: str) -> Instance:
    """The twin with the judge's verdict in provenance; auto-rejected if it still serves."""
    notes = {**twin.provenance.notes, "judge": verdict.as_note(model_name)}
    update: dict[str, Any] = {"provenance": twin.provenance.model_copy(update={"notes": notes})}
    if verdict.serves:
        update["verification"] = Verification(
            status="rejected",
            reasons=[f"alternative_api: judged by {model_name}: {verdict.reasoning[:200]}"],
            by="auto",
        )
    return twin.model_copy(update=update)


def _remove_utterances(
    complete: list[Instance], settings: BuildSettings, progress: Progress | None
) -> tuple[list[Instance], list[tuple[str, str]], list[tuple[str, str]]]:
    model = settings.model
    if model is None:
        raise UserError("--manipulation utterance_removal needs --model SPEC (the rewriting model)")

    async def rewrite_all() -> Any:
        try:
            return await remove_utterances(
                complete,
                model,
                seed=settings.seed,
                concurrency=settings.concurrency,
                progress=progress,
                kind=parse_removal_kind(settings.removal_kind),
            )
        finally:
            await model.aclose()  # also flushes the response cache to disk

    result = asyncio.run(rewrite_all())
    return list(result.instances), list(result.skipped), list(result.failed)


def manipulate(
    manipulation: str,
    complete: list[Instance],
    settings: BuildSettings,
    outcome: BuildOutcome,
    progress: Progress | None,
) -> list[Instance]:
    """Twins of ``complete`` made by one manipulation; skips and failures go to ``outcome``."""
    if manipulation == "api_replacement":
        twins, skipped, checks, failed = _replace(complete, settings, progress)
        outcome.checks.merge(checks)
        outcome.failed.extend(failed)
    elif manipulation == "utterance_removal":
        twins, skipped, failed = _remove_utterances(complete, settings, progress)
        outcome.failed.extend(failed)
    else:
        remove = remove_slots if manipulation == "slot_removal" else remove_tools
        result = remove(complete, seed=settings.seed, progress=progress)
        twins, skipped = result.instances, result.skipped
    outcome.skipped.extend((iid, manipulation, why) for iid, why in skipped)
    return twins


def work_units(instances: Sequence[Instance], settings: BuildSettings) -> int:
    """How many progress steps a build takes (one per complete instance per manipulation)."""
    complete = sum(1 for i in instances if i.label == "complete" and i.manipulation == "none")
    steps = [m for m in settings.manipulations if m != "none"]
    return complete * len(steps)


def build(
    loaded: Sequence[Instance], settings: BuildSettings, progress: Progress | None = None
) -> BuildOutcome:
    """Apply every requested manipulation; pair each complete instance with its twins."""
    outcome = BuildOutcome()
    manipulations = [m for m in settings.manipulations if m != "none"]
    complete = [i for i in loaded if i.label == "complete" and i.manipulation == "none"]
    if not manipulations:
        outcome.instances = list(loaded)
        return outcome
    twins_of: dict[str, list[Instance]] = {}
    for manipulation in manipulations:
        for twin in manipulate(manipulation, complete, settings, outcome, progress):
            assert twin.twin_id is not None
            twins_of.setdefault(twin.twin_id, []).append(twin)
    # Source instances that arrived incomplete (BFCL) keep their own pairs, untouched.
    linked = {i.twin_id for i in loaded if i.twin_id is not None}
    for instance in loaded:
        if instance.label == "incomplete" or instance.id in linked or instance.id in twins_of:
            outcome.instances.append(instance)
        outcome.instances.extend(twins_of.get(instance.id, []))
    return outcome
