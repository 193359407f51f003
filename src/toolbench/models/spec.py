"""Turning a ``--model`` string into a ready model, wrapped with retries and the cache.

The wrapping lives here, not in the backends, so every backend gets the same retry policy and
cache semantics, and so a backend can be tested bare. Backends with heavy imports (the HF one,
the baseline) are imported only when asked for.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.errors import UserError, did_you_mean
from toolbench.models.base import Model, ModelOptions

#: (spec pattern, one-line description) for ``toolbench list models``.
KNOWN_MODELS: list[tuple[str, str]] = [
    ("baseline", "built-in heuristic model (no service needed); a floor every model should beat"),
    ("oracle", "answers with the gold label; checks the harness (every sample should pass)"),
    ("replay:FILE", "scores predictions from a JSON-lines file of {id, prediction[, task, epoch]}"),
    (
        "openai:MODEL",
        "OpenAI or any OpenAI-compatible server (vLLM, SGLang, TGI, Ollama) via --base-url",
    ),
    ("hf:PATH_OR_NAME", "local Hugging Face causal LM via transformers (needs toolbench[hf])"),
]

_BARE = ("baseline", "oracle")
_PREFIXED = ("replay", "openai", "hf")


def _unknown(spec: str) -> UserError:
    _, colon, rest = spec.partition(":")
    if colon:
        # Suggest the whole corrected spec: "openia:gpt-4o" -> "openai:gpt-4o".
        hint = did_you_mean(spec, [f"{p}:{rest}" for p in _PREFIXED])
    else:
        hint = did_you_mean(spec, [*_BARE, *_PREFIXED])
    if not hint.startswith(" (did you mean"):
        hint = f" (choose from: {', '.join(pattern for pattern, _ in KNOWN_MODELS)})"
    return UserError(f"unknown model '{spec}'{hint}")


def _wrap(model: Model, options: ModelOptions, *, retry: bool) -> Model:
    if retry:
        from toolbench.models.retry import RetryingModel

        model = RetryingModel(model, max_retries=options.max_retries)
    if options.cache_path is not None and model.cacheable:
        from toolbench.models.cache import CachedModel

        model = CachedModel(model, options.cache_path)
    return model


def make_model(spec: str, options: ModelOptions) -> Model:
    """Build the model named by ``spec`` (see ``KNOWN_MODELS``); ``UserError`` if it is wrong."""
    spec = spec.strip()
    prefix, colon, rest = spec.partition(":")
    if not colon:
        if spec == "baseline":
            from toolbench.models.baseline import BaselineModel

            return BaselineModel()
        if spec == "oracle":
            from toolbench.models.builtin import OracleModel

            return OracleModel()
        if spec in _PREFIXED:
            pattern = next(p for p, _ in KNOWN_MODELS if p.startswith(spec + ":"))
            raise UserError(f"model '{spec}' needs an argument: {pattern}")
        raise _unknown(spec)
    if prefix in _PREFIXED and not rest:
        pattern = next(p for p, _ in KNOWN_MODELS if p.startswith(prefix + ":"))
        raise UserError(f"model '{spec}' needs an argument: {pattern}")
    if prefix == "replay":
        from toolbench.models.builtin import ReplayModel

        path = Path(rest).expanduser()
        if not path.is_file():
            raise UserError(f"replay file not found: {path}")
        return ReplayModel(path)
    if prefix == "openai":
        from toolbench.models.openai_compat import OpenAIModel

        return _wrap(OpenAIModel(rest, options), options, retry=True)
    if prefix == "hf":
        from toolbench.models.hf import HFModel

        return _wrap(HFModel(rest, options), options, retry=False)
    raise _unknown(spec)
