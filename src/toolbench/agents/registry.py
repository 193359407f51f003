"""Every agent ``--model`` can name, and the one place a spec becomes the thing under test.

``--model`` names either a model (``models.registry``: the harness builds the prompt and asks
it) or an agent (here: a process that reaches the task's tools itself). The two registries
know nothing of each other below this layer; ``make_subject`` asks this one first, so that an
agent spec is never built as a model, and hands anything else to the model registry. What it
returns is a ``Subject`` of its kind (``core.subject``), and the runner dispatches on that kind.

The built-in agent is ``agent:COMMAND`` (any program; ``agent:oracle`` and
``agent:replay:FILE`` are the harness's scripted ones). Other packages add agents through the
``toolbench.agents`` entry-point group, as models are added::

    [project.entry-points."toolbench.agents"]
    myagent = "myagent_pkg:AGENT"

The entry point's name is the spec's prefix (``--model myagent[:ARG]``) and may be neither a
built-in agent's nor a built-in model's. Its object is a ``KnownAgent`` (or an object with
its fields), or a factory called as ``factory(argument, options)`` returning an ``Agent``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from toolbench.agents import contain, require_mcp
from toolbench.agents.contain import AgentLimits
from toolbench.agents.process import AgentSettings, ProcessAgent, parse_command
from toolbench.agents.scripted import make_scripted
from toolbench.core.agent import Agent
from toolbench.core.subject import AgentSubject, ModelSubject, Subject
from toolbench.errors import UserError
from toolbench.models import registry as models
from toolbench.models.args import BackendArgs, fingerprint, operational, validate
from toolbench.models.base import ModelOptions
from toolbench.models.registry import TOOL_TASKS, KnownModel
from toolbench.models.spec import check_model_args, known_model, make_model, require
from toolbench.plugins import (
    Installed,
    PluginError,
    call_plugin,
    cannot_load,
    installed,
    problem_lines,
    unusable,
)

#: The entry-point group other packages register their agents in.
GROUP = "toolbench.agents"

AgentFactory = Callable[[str | None, ModelOptions], Agent]


class AgentArgs(BackendArgs):
    """``agent:COMMAND``'s options (``--model-arg KEY=VALUE``; the ``--agent-*`` flags are
    aliases). None changes how an attempt is judged, so none is in the fingerprint (as
    before: a rerun with a longer timeout resumes the same run)."""

    timeout: float = operational(
        300.0, "seconds of wall time one attempt may take before all it started is killed", gt=0
    )
    network: Literal["host", "none"] = operational(
        "host", "host (it may call remote model APIs) or none (only its sample's MCP endpoint)"
    )
    memory: int = operational(
        8192, "MB of address space of each of its processes (0: unlimited)", ge=0
    )
    env: tuple[str, ...] = operational(
        (), "further variables of your environment passed to it by name (comma-separated)"
    )

    @field_validator("env", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, str):  # --model-arg env=A,B
            return tuple(name.strip() for name in value.split(",") if name.strip())
        return value


def make_agent(argument: str | None, options: ModelOptions) -> Agent:
    """The factory of ``agent:COMMAND`` (and the harness's own ``agent:oracle`` and
    ``agent:replay:FILE``): refuses, before any work, a command that cannot be run, a
    missing MCP SDK (every sample would fail the same way), and ``TOOLBENCH_ISOLATION=full``
    where agents cannot be contained."""
    command = (argument or "").strip()
    require_mcp(f"--model agent:{command}")
    args = options.args(AgentArgs)
    limits = AgentLimits(
        memory_mb=args.memory,
        network=contain.check_network(args.network),
        passed_env=tuple(args.env),
    )
    cache = options.cache_path.parent if options.cache_path is not None else None
    settings = AgentSettings(float(args.timeout), limits, cache)
    if command == "oracle" or command.startswith("replay:"):
        return make_scripted(command, options.without_model_args(), settings)
    return ProcessAgent(command, parse_command(command), settings)


@dataclass(frozen=True)
class KnownAgent:
    """One entry of the agent registry, as ``toolbench list models`` shows it."""

    spec: str  # "name:ARG", "name[:ARG]" or "name", as for models
    what: str
    needs: str
    factory: AgentFactory
    options: type[BaseModel] | None = None  # its --model-arg schema; None: it takes none

    #: Agents solve tool tasks only: they need a world of tools.
    answers = frozenset({TOOL_TASKS})
    runs = "run"

    @property
    def name(self) -> str:
        return self.spec.partition(":")[0].partition("[")[0]

    @property
    def argument(self) -> str:
        if ":" not in self.spec:
            return "none"
        return "optional" if "[:" in self.spec else "required"

    def build(self, argument: str | None, options: ModelOptions) -> Agent:
        validate(self.options, options.model_args, self.name)
        return self.factory(argument, options)


BUILTIN_AGENTS: tuple[KnownAgent, ...] = (
    KnownAgent(
        "agent:COMMAND",
        "any agent process, run once per sample, contained; it reaches the task's tools "
        "over MCP (agent:oracle, agent:replay:FILE: the harness's scripted agents)",
        "pip install 'toolbench[mcp]' and the agent's command",
        make_agent,
        AgentArgs,
    ),
)

_BY_NAME = {entry.name: entry for entry in BUILTIN_AGENTS}


def builtin_subjects() -> list[KnownModel | KnownAgent]:
    """Every built-in thing ``--model`` can name, in listing order: the models that answer
    tool tasks, then the agents, then the models that answer only other questions (read when
    asked: a layer above adds built-in models with ``models.registry.provide``)."""
    return [
        *(m for m in models.BUILTIN if TOOL_TASKS in m.answers),
        *BUILTIN_AGENTS,
        *(m for m in models.BUILTIN if TOOL_TASKS not in m.answers),
    ]


def lookup(name: str) -> KnownAgent | None:
    """The agent whose spec starts with ``name`` (built-in, else installed), or None; an
    installed one that cannot be used is a ``UserError`` saying why."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    return _installed().find(name, _from_entry_point)


def lookup_any(name: str) -> KnownModel | KnownAgent | None:
    """What ``--model NAME[:ARG]`` names: an agent (asked first), else a model, else None."""
    return lookup(name) or models.lookup(name)


def all_agents() -> list[KnownAgent]:
    """Every usable agent: the built-ins, then the installed ones by name."""
    loaded = [_from_entry_point(point) for point in _installed().points.values()]
    return [*BUILTIN_AGENTS, *(entry for entry in loaded if isinstance(entry, KnownAgent))]


def listing() -> list[KnownModel | KnownAgent]:
    """Every usable model and agent, in ``builtin_subjects``' order, the installed ones after."""
    every = models.all_models()
    return [
        *(m for m in every if m in models.BUILTIN and TOOL_TASKS in m.answers),
        *all_agents(),
        *(m for m in every if m in models.BUILTIN and TOOL_TASKS not in m.answers),
        *(m for m in every if m not in models.BUILTIN),
    ]


def problems() -> list[str]:
    """Why each installed agent that cannot be used is left out, one line each."""
    return problem_lines(_installed(), _from_entry_point)


def agent_entry(spec: str) -> tuple[KnownAgent, str | None] | None:
    """The agent ``spec`` names and its argument, or None when it names no agent."""
    prefix, colon, rest = spec.strip().partition(":")
    entry = lookup(prefix)
    if entry is None:
        return None
    if entry.argument == "none" and colon:
        raise UserError(f"model '{spec}': {entry.name} takes no argument; write {entry.name}")
    if entry.argument == "required" and not rest:
        raise UserError(f"model '{spec}' needs an argument: {entry.spec}")
    return entry, rest if colon else None


def is_agent_spec(spec: str) -> bool:
    """Whether ``spec`` names an agent (built-in or installed)."""
    return lookup(spec.strip().partition(":")[0]) is not None


def make_subject(spec: str, options: ModelOptions) -> Subject:
    """The thing ``--model spec`` puts under test: an agent when the agent registry knows the
    spec, else a model from the model registry (``UserError`` naming the closest of both)."""
    found = agent_entry(spec)
    if found is not None:
        entry, argument = found
        return AgentSubject(entry.build(argument, options))
    _known_somewhere(spec)
    return ModelSubject(make_model(spec, options))


def check_subject_args(spec: str, options: ModelOptions) -> dict[str, Any]:
    """Check ``--model-arg`` against the backend ``spec`` names, before any work; what of the
    options goes into the run's fingerprint comes back."""
    found = agent_entry(spec)
    if found is not None:
        entry, _ = found
        return fingerprint(validate(entry.options, options.model_args, entry.name))
    _known_somewhere(spec)
    return check_model_args(spec, options)


def backend_keys(spec: str) -> frozenset[str]:
    """The option keys the backend ``spec`` names takes (empty for a backend without options,
    or a spec no registry knows: that is refused when the run starts)."""
    found = agent_entry(spec)
    if found is not None:
        schema = found[0].options
    else:
        entry = known_model(spec)
        schema = entry.options if entry is not None else None
    return frozenset(schema.model_fields) if schema is not None else frozenset()


def require_subject(spec: str, use: str, flag: str = "--model") -> None:
    """``spec.require`` for agents too: an agent answers tool tasks only."""
    entry = agent_entry(spec)
    if entry is None:
        require(spec, use, flag)
        return
    if use not in KnownAgent.answers:
        able = ", ".join(m.spec for m in listing() if use in m.answers)
        raise UserError(
            f"{flag} {spec.strip()}: an agent cannot answer {models.QUESTIONS[use]}; "
            f"use one of {able}"
        )


def _known_somewhere(spec: str) -> None:
    """Refuse a spec neither registry knows, suggesting from both."""
    if known_model(spec) is None:
        raise models.unknown(spec.strip(), all_agents())


def _installed() -> Installed:
    builtin = {*_BY_NAME, *(m.name for m in models.BUILTIN)}
    return installed(GROUP, builtin, "agent")


@functools.cache
def _from_entry_point(point: EntryPoint) -> KnownAgent | PluginError:
    """Load an installed agent's entry once; what goes wrong is its one-line error."""
    try:
        loaded = call_plugin(point.load)
    except PluginError as exc:
        return cannot_load(point, "agent", exc)
    entry = _entry(point, loaded)
    if entry is None:
        return unusable(
            point,
            f"{type(loaded).__name__} is neither an agent factory nor a KnownAgent; see "
            "toolbench.agents.registry for the contract",
        )
    if entry.name != point.name:
        return unusable(point, f"its spec {entry.spec!r} must start with {point.name!r}")
    return entry


def _entry(point: EntryPoint, loaded: object) -> KnownAgent | None:
    if isinstance(loaded, KnownAgent):
        return loaded
    if callable(loaded):
        doc = (loaded.__doc__ or "").strip().splitlines()
        dist = point.dist.name if point.dist is not None else "an unknown distribution"
        return KnownAgent(
            f"{point.name}[:ARG]",
            doc[0] if doc else f"installed agent from {dist}",
            f"the {dist} package",
            loaded,
        )
    return None
