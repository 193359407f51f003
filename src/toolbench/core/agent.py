"""When the thing under test is an agent: one sample's world as tools, and how it is judged.

A model is asked by the harness and its answer (a program, a curl command, a plan) is run and
scored by the task. An agent is a process with its own loop that reaches the task's tools
itself (over MCP, ``toolbench.agents``). Both end in the same record and the same judge: a
task that can be solved by an agent gives, per sample, an ``AgentWorld`` — a fresh world
of that sample whose API is a list of tools — and the world, once the agent is done, is
scored by ``AgentWorld.outcome`` with the task's own scorer, as a model's action would be.

Everything an agent sends is hostile input: ``call`` never raises for what the agent sends
(an unknown tool, wrong types, a refused action are ``ToolReply(is_error=True)`` in the API's
own words), only for the harness's own trouble (``InfraError``). ``solve_with_agent`` is the
one place an agent's attempt becomes an outcome: the runner calls it instead of the task's
``solve`` when the subject under test is an agent (``core.subject.AgentSubject``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from toolbench.core.bounded import bounded_text
from toolbench.core.solve import SampleState
from toolbench.core.task import Resources, Task, TaskData
from toolbench.errors import UserError
from toolbench.types import Outcome, Sample

#: The most tool calls one sample's agent may make; later calls are refused (an error reply).
MAX_TOOL_CALLS = 200
#: One tool call's reply as the record's trace keeps it (the agent gets the whole reply).
MAX_TRACE_REPLY_CHARS = 500
#: One tool call's arguments as the trace keeps them (JSON text).
MAX_TRACE_ARGUMENTS_CHARS = 1_000
#: An agent's final message as the record keeps it (``prediction``).
MAX_FINAL_MESSAGE_CHARS = 20_000


@dataclass(frozen=True)
class ToolSpec:
    """One tool of a world, as MCP lists it: a name, what it does (from the same docs the
    model reads), and a JSON Schema (``type: object``) for its arguments."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolReply:
    """What a tool call answers: the text the agent reads, and whether it is an error (MCP's
    ``isError``: the call was refused or failed, in the API's own words)."""

    text: str
    is_error: bool = False


@dataclass(frozen=True)
class ToolCall:
    """A call an agent could make: a tool's name and its arguments (JSON values)."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


class Untranslatable(Exception):
    """A task action (a gold label, a model's reply) that cannot be made as tool calls."""


class AgentWorld(Protocol):
    """One sample's fresh world, reachable as tools (see module doc). Built by
    ``HasAgentWorld.agent_world``; nothing is scored until ``outcome``."""

    @property
    def tools(self) -> Sequence[ToolSpec]:
        """Every tool of the task's API, the same for every sample of the task."""
        ...

    @property
    def request(self) -> str:
        """What the user asks: the text the agent is handed (the sample's query; for an
        episode, its instruction)."""
        ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        """Run one call on this world. Never raises for what the agent sent; raises
        ``InfraError`` (or ``SandboxError``) only when the harness itself failed."""
        ...

    async def outcome(self) -> Outcome:
        """The task's judge on the world as it stands (and on the calls' answers where the
        task scores answers): the outcome the same actions written as the task's native
        action would get. Changes nothing; may be called more than once."""
        ...

    def failed(self, message: str) -> Outcome:
        """The outcome of a sample whose agent failed (crashed, ran out of time, flooded its
        output): the task's model_error with its own per-sample metrics at 0."""
        ...

    async def translate(self, action: str) -> list[ToolCall]:
        """The calls that do what ``action`` (the task's native action: a gold label, a
        model's reply) does, in order; ``Untranslatable`` naming why when it cannot be made
        as calls. The gold's calls are ``translate(sample.labels[0])``."""
        ...

    async def gold_calls(self) -> list[ToolCall]:
        """The calls of the sample's first gold: ``translate(sample.labels[0])`` for most
        tasks, an episode's ideal path where the gold is not one action text. Scored by
        ``outcome``, they reach the task's full marks (the oracle behind an agent makes them)."""
        ...

    async def close(self) -> None:
        """Release what the world holds (sandbox sessions, browsers); idempotent."""
        ...


@runtime_checkable
class HasAgentWorld(Protocol):
    """A task an agent can solve over MCP (``--model agent:COMMAND``, ``serve --mcp``): per
    sample, a fresh world whose API is tools, judged by the task's own scorer. Used by
    ``solve_with_agent`` (here), the runner's checks (an agent run of a task without it is
    refused) and ``toolbench serve --mcp``. The task's name is the brief's ``task``."""

    name: str

    def agent_world(
        self, data: TaskData[Any], sample: Sample, resources: Resources[Any]
    ) -> AgentWorld:
        """A fresh world of ``sample``. Builds only: golds are read from ``data.gold`` when
        the world is judged, not here."""
        ...


@dataclass(frozen=True)
class AgentBrief:
    """What the harness knows of the attempt: what the agent is told (task, sample id, epoch,
    request, data version), and what stays on the harness's side: the folders it must never
    see (``data_dir``, ``run_dir``), and for the harness's own scripted agents (``oracle``,
    ``replay:``) the sample and a maker of a second world of it to translate actions on."""

    task: str
    sample_id: str
    epoch: int
    request: str
    data_version: str
    data_dir: str | None = None
    run_dir: str | None = None
    sample: Sample | None = field(default=None, compare=False, repr=False)
    fresh_world: Callable[[], AgentWorld] | None = field(default=None, compare=False, repr=False)


@dataclass
class AgentEnd:
    """How an agent's attempt ended: its final message, and, when it failed (crashed, timed
    out, flooded its output), why, in one line."""

    final_message: str
    failure: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    """The thing under test when it is an agent (``--model agent:COMMAND``): it solves one
    sample by calling ``world``'s tools however it likes, and says how it ended."""

    name: str

    async def attempt(self, world: AgentWorld, brief: AgentBrief) -> AgentEnd:
        """Solve one sample through ``world``'s tools and say how it ended. The agent may be
        told ``brief``'s task, sample id, epoch, request and data version, never its folders or
        sample (see ``AgentBrief``). Its own failure (a crash, a timeout, flooded output) is an
        ``AgentEnd`` with ``failure`` set, the sample's model_error; raise only for the
        harness's trouble (``InfraError``), which leaves the sample to be retried."""
        ...

    async def aclose(self) -> None:
        """Release what the agent holds across samples (servers, scratch folders, a replay's
        model); the runner calls it when the run ends."""
        ...


@runtime_checkable
class ContainedAgent(Protocol):
    """An agent whose attempts run in an OS layer (``agents.contain``): what kept it in is
    recorded in run.json (``agent_isolation``) and shown by the report."""

    @property
    def isolation(self) -> Mapping[str, Any]:
        """What kept the agent in (the OS layer and its limits) as JSON values: run.json's
        ``agent_isolation``, so a reader can tell a contained run from a bare one."""
        ...


class RecordingWorld:
    """The world as the agent sees it: every call is recorded on the sample's state (its
    ``trace``: tool, arguments, reply, error, latency, all bounded), calls run one at a time
    (an agent's parallel calls reach the world in the order they arrive), and calls past
    ``MAX_TOOL_CALLS`` are refused."""

    def __init__(self, world: AgentWorld, state: SampleState) -> None:
        """Wrap ``world`` for one attempt, recording into ``state``'s trace (``calls`` counts
        the calls made so far, for the record's ``tool_calls``)."""
        self.world, self.state = world, state
        self.calls = 0
        self._lock = asyncio.Lock()

    @property
    def tools(self) -> Sequence[ToolSpec]:
        """The wrapped world's tools, unchanged: recording adds none."""
        return self.world.tools

    @property
    def request(self) -> str:
        """The wrapped world's request, unchanged."""
        return self.world.request

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        """Run one call on the wrapped world after any call still running, and add it to the
        trace; past ``MAX_TOOL_CALLS`` an error reply that never reaches the world."""
        async with self._lock:
            if self.calls >= MAX_TOOL_CALLS:
                return ToolReply(
                    f"call refused: an agent may make at most {MAX_TOOL_CALLS} tool calls "
                    "per sample",
                    is_error=True,
                )
            self.calls += 1
            started = time.perf_counter()
            reply = await self.world.call(name, arguments)
            self.state.trace.append(_trace_entry(name, arguments, reply, started))
            return reply

    async def outcome(self) -> Outcome:
        """The wrapped world's judge: the world is judged, not the trace recorded here."""
        return await self.world.outcome()

    def failed(self, message: str) -> Outcome:
        """The wrapped world's outcome for an agent that failed (its task's model_error)."""
        return self.world.failed(message)

    async def translate(self, action: str) -> list[ToolCall]:
        """The wrapped world's translation; nothing is recorded, as no call is made."""
        return await self.world.translate(action)

    async def gold_calls(self) -> list[ToolCall]:
        """The wrapped world's gold calls; nothing is recorded, as no call is made."""
        return await self.world.gold_calls()

    async def close(self) -> None:
        """Close the wrapped world (idempotent, as the world's ``close`` is)."""
        await self.world.close()


def _trace_entry(
    name: str, arguments: Mapping[str, Any], reply: ToolReply, started: float
) -> dict[str, Any]:
    try:
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):  # not JSON (a world called directly): as text
        shown = repr(arguments)
    return {
        "step": "tool",
        "tool": bounded_text(str(name), 200),
        "arguments": bounded_text(shown, MAX_TRACE_ARGUMENTS_CHARS),
        "reply": bounded_text(reply.text, MAX_TRACE_REPLY_CHARS),
        "error": reply.is_error,
        "latency_s": round(time.perf_counter() - started, 4),
    }


def agent_world_of(task: Task) -> HasAgentWorld:
    """``task`` as a task with agent worlds; a ``UserError`` for one without (the runner's
    checks refuse such a run before any work, so this is for direct callers)."""
    if not isinstance(task, HasAgentWorld):
        raise UserError(f"task {task.name} cannot be solved by an agent (it has no tools to serve)")
    return task


async def solve_with_agent(
    task: Task, state: SampleState, resources: Resources[Any], agent: Agent
) -> Outcome:
    """One sample solved by ``agent`` on a fresh world of ``task``, judged by the task: the
    agent's final message is the record's prediction, its tool calls the trace; an agent
    that failed is the sample's model_error (the world is not judged)."""
    able = agent_world_of(task)
    world = able.agent_world(resources.data, state.sample, resources)
    recording = RecordingWorld(world, state)
    brief = AgentBrief(
        task=task.name,
        sample_id=state.sample.id,
        epoch=state.epoch,
        request=world.request,
        data_version=resources.data.version,
        data_dir=resources.data.source,
        run_dir=str(resources.run_dir) if resources.run_dir is not None else None,
        sample=state.sample,
        fresh_world=lambda: able.agent_world(resources.data, state.sample, resources),
    )
    try:
        end = await agent.attempt(recording, brief)
        state.prediction = bounded_text(end.final_message, MAX_FINAL_MESSAGE_CHARS)
        agent_details = {"tool_calls": recording.calls, **end.details}
        if end.failure is not None:
            outcome = world.failed(end.failure)
        else:
            outcome = await world.outcome()
        outcome.details = {**outcome.details, "agent": agent_details}
        return outcome
    finally:
        await world.close()
