"""Turning a ``--model`` string into a ready model, wrapped with retries and the cache.

The wrapping lives here, not in the backends, so every backend gets the same retry policy and
cache semantics, and so a backend can be tested bare. Backends with heavy imports (the HF one,
the baseline) are imported only when asked for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from toolbench.errors import UserError
from toolbench.models.args import REPLICA_KEYS, ReplicaArgs, fingerprint, validate
from toolbench.models.base import Model, ModelOptions
from toolbench.models.cache import CachedModel
from toolbench.models.ray_replicas import ReplicaPool
from toolbench.models.registry import (
    AWARENESS,
    BUILTIN,
    FREE_TEXT,
    QUESTIONS,
    TOOL_TASKS,
    KnownModel,
    all_models,
    entry_of,
    lookup,
    make_bare_model,
    unknown,
)

__all__ = [
    "AWARENESS",
    "FREE_TEXT",
    "QUESTIONS",
    "TOOL_TASKS",
    "KnownModel",
    "check_model_args",
    "known_model",
    "looked_through",
    "make_bare_model",
    "make_model",
    "pool_stats",
    "preflight",
    "replica_count",
    "require",
    "unknown",
]


def known_model(spec: str) -> KnownModel | None:
    """The registry entry ``spec`` names, or None for a name the registry does not hold."""
    return lookup(spec.strip().partition(":")[0])


def require(spec: str, use: str, flag: str = "--model") -> None:
    """Refuse, before any work, a model that cannot answer ``use``'s question: a run of
    baseline on awareness questions would score every answer 'unparseable' and exit 0; an
    awareness floor in a tool-task run would answer Yes/No to every prompt. Names the
    registry does not hold are left for ``make_model`` to refuse."""
    model = known_model(spec)
    if model is None or use in model.answers:
        return
    able = ", ".join(m.spec for m in all_models() if use in m.answers)
    states = (
        ""
        if model in BUILTIN
        else " (an installed model states what it answers in a KnownModel's answers)"
    )
    raise UserError(
        f"{flag} {spec.strip()}: this model cannot answer {QUESTIONS[use]}{states}; "
        f"use one of {able}"
    )


def _wrap(model: Model, options: ModelOptions, entry: KnownModel) -> Model:
    if entry.retries:
        # deferred: retry imports openai (~700 modules); this module is on --help's path
        from toolbench.models.retry import RetryingModel, default_retry_budget

        budget = options.retry_budget_s
        if budget is None:
            budget = default_retry_budget(options.timeout_s)
        model = RetryingModel(model, max_retries=options.max_retries, budget_s=budget)
    if entry.cache and options.cache_path is not None and model.cacheable:
        model = CachedModel(model, options.cache_path)
    return model


#: Why replicas make no sense for a backend that does not run its model in this process.
_NOT_REPLICABLE = {
    "openai": "its model is served by its endpoints; give each with --base-url instead",
}


def replica_count(options: ModelOptions, backend: str = "") -> int:
    """How many Ray replicas ``options`` ask for (``--model-replicas``, ``--model-arg
    replicas=N``); 1: the model runs in this process. A value that is no count is the one-line
    ``UserError`` of ``args.validate``."""
    settings = validate(ReplicaArgs, _replica_part(options.model_args), backend or "replicas")
    return settings.replicas if settings is not None else 1


def _replica_part(given: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in given.items() if key in REPLICA_KEYS}


def _check_replicable(spec: str, entry: KnownModel, options: ModelOptions) -> ModelOptions:
    """``options`` for ``entry``: replicas asked of a backend that cannot have them are
    refused naming why (one copy, ``replicas=1``, is dropped: it is what every backend is)."""
    if entry.replicable or not _replica_part(options.model_args):
        return options
    count = replica_count(options, entry.name)
    if count > 1:
        why = _NOT_REPLICABLE.get(
            entry.name, "it does not run a model in this process (replicas are for hf:, smollm2)"
        )
        raise UserError(f"--model-replicas {count}: cannot replicate {spec}: {why}")
    given = {k: v for k, v in options.model_args.items() if k not in REPLICA_KEYS}
    return dataclasses.replace(options, model_args=given)


def check_model_args(spec: str, options: ModelOptions) -> dict[str, Any]:
    """Check the model args of ``spec``'s backend before any work, and return what of them
    goes into the run's fingerprint (``BackendArgs.fingerprint``)."""
    spec = spec.strip()
    entry, _ = entry_of(spec)
    options = _check_replicable(spec, entry, options)
    return fingerprint(entry.check_args(options.model_args))


def make_model(spec: str, options: ModelOptions) -> Model:
    """Build the model ``spec`` names (``toolbench list models``), wrapped as its registry
    entry says; ``UserError`` if the spec or its model args are wrong. ``replicas`` > 1: the
    model runs as that many Ray actors (``models.ray_replicas.ReplicaPool``), wrapped here
    like one."""
    spec = spec.strip()
    entry, argument = entry_of(spec)
    options = _check_replicable(spec, entry, options)
    entry.check_args(options.model_args)
    if replica_count(options) <= 1:
        return _wrap(entry.build(argument, options), options, entry)

    return _wrap(ReplicaPool(spec, options), options, entry)


def looked_through(model: Model | None, name: str) -> Any:
    """The attribute ``name`` of the model or of the first model it wraps that has it (cache,
    retries and other wrappers keep theirs in ``inner``); None if none has it."""
    seen: Any = model
    for _ in range(8):  # a few wrappers at most
        if seen is None:
            return None
        found = getattr(seen, name, None)
        if found is not None:
            return found
        seen = getattr(seen, "inner", None)
    return None


async def preflight(model: Model | None) -> None:
    """Check the model's endpoint before the run starts, if its backend can (see
    ``OpenAIModel.preflight``); wrappers (cache, retries) are looked through."""
    check = looked_through(model, "preflight")
    if callable(check):
        await check()


def pool_stats(model: Model | None) -> dict[str, Any]:
    """What a model served by a pool (endpoints, Ray replicas) did per member, as run.json
    fields (``{"endpoints": {url: {"calls", "errors", "latency_s", "mean_latency_s"}}}``);
    empty for a model served by one server."""
    stats = looked_through(model, "pool_stats")
    return dict(stats()) if callable(stats) else {}
