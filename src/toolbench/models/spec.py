"""Turning a ``--model`` string into a ready model, wrapped with retries and the cache.

The wrapping lives here, not in the backends, so every backend gets the same retry policy and
cache semantics, and so a backend can be tested bare. Backends with heavy imports (the HF one,
the baseline) are imported only when asked for.
"""

from __future__ import annotations

from typing import Any

from toolbench.errors import UserError, did_you_mean
from toolbench.models.base import Model, ModelOptions
from toolbench.models.registry import (
    AWARENESS,
    BUILTIN,
    FREE_TEXT,
    QUESTIONS,
    TOOL_TASKS,
    KnownModel,
    all_models,
    lookup,
)

__all__ = [
    "AWARENESS",
    "FREE_TEXT",
    "QUESTIONS",
    "TOOL_TASKS",
    "KnownModel",
    "known_model",
    "looked_through",
    "make_bare_model",
    "make_model",
    "pool_stats",
    "preflight",
    "require",
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


def _unknown(spec: str) -> UserError:
    models = all_models()
    _, colon, rest = spec.partition(":")
    if colon:
        # Suggest the whole corrected spec: "openia:gpt-4o" -> "openai:gpt-4o".
        taking = [f"{m.name}:{rest}" for m in models if m.argument != "none"]
        hint = did_you_mean(spec, taking)
    else:
        hint = did_you_mean(spec, [m.name for m in models])
    if not hint.startswith(" (did you mean"):
        hint = f" (choose from: {', '.join(m.spec for m in models)})"
    return UserError(f"unknown model '{spec}'{hint}")


def _wrap(model: Model, options: ModelOptions, entry: KnownModel) -> Model:
    if entry.retries:
        from toolbench.models.retry import RetryingModel, default_retry_budget

        budget = options.retry_budget_s
        if budget is None:
            budget = default_retry_budget(options.timeout_s)
        model = RetryingModel(model, max_retries=options.max_retries, budget_s=budget)
    if entry.cache and options.cache_path is not None and model.cacheable:
        from toolbench.models.cache import CachedModel

        model = CachedModel(model, options.cache_path)
    return model


#: Backends that run the model in this process, so that ``--model-replicas`` can run copies
#: of it as Ray actors (``models.ray_replicas``). Others are served elsewhere or are the
#: harness's own: why replicas make no sense for them, by backend.
REPLICABLE = frozenset({"hf", "smollm2"})
_NOT_REPLICABLE = {
    "openai": "its model is served by its endpoints; give each with --base-url instead",
}


def _entry_of(spec: str) -> tuple[KnownModel, str | None]:
    """The registry entry ``spec`` names and its argument; ``UserError`` if the spec is wrong."""
    prefix, colon, rest = spec.partition(":")
    entry = lookup(prefix)
    if entry is None:
        raise _unknown(spec)
    if entry.argument == "none" and colon:
        raise UserError(f"model '{spec}': {entry.name} takes no argument; write {entry.name}")
    if entry.argument == "required" and not rest:
        raise UserError(f"model '{spec}' needs an argument: {entry.spec}")
    return entry, rest if colon else None


def make_bare_model(spec: str, options: ModelOptions) -> Model:
    """The model ``spec`` names as its backend builds it, in this process: no retries, no
    cache, no replicas (what each Ray replica holds)."""
    entry, argument = _entry_of(spec.strip())
    return entry.build(argument, options)


def make_model(spec: str, options: ModelOptions) -> Model:
    """Build the model ``spec`` names (``toolbench list models``), wrapped as its registry
    entry says; ``UserError`` if the spec is wrong. ``options.replicas`` > 1: the model runs
    as that many Ray actors (``models.ray_replicas.ReplicaPool``), wrapped here like one."""
    spec = spec.strip()
    entry, argument = _entry_of(spec)
    if options.replicas <= 1:
        return _wrap(entry.build(argument, options), options, entry)
    if entry.name not in REPLICABLE:
        why = _NOT_REPLICABLE.get(
            entry.name, "it does not run a model in this process (replicas are for hf:, smollm2)"
        )
        raise UserError(f"--model-replicas {options.replicas}: cannot replicate {spec}: {why}")
    from toolbench.models.ray_replicas import ReplicaPool

    return _wrap(ReplicaPool(spec, options), options, entry)


def looked_through(model: Model, name: str) -> Any:
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


async def preflight(model: Model) -> None:
    """Check the model's endpoint before the run starts, if its backend can (see
    ``OpenAIModel.preflight``); wrappers (cache, retries) are looked through."""
    check = looked_through(model, "preflight")
    if callable(check):
        await check()


def pool_stats(model: Model) -> dict[str, Any]:
    """What a model served by a pool (endpoints, Ray replicas) did per member, as run.json
    fields (``{"endpoints": {url: {"calls", "errors", "latency_s", "mean_latency_s"}}}``);
    empty for a model served by one server."""
    stats = looked_through(model, "pool_stats")
    return dict(stats()) if callable(stats) else {}
