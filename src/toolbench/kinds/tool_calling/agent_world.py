"""A program task's sample as an ``AgentWorld``: each tool call becomes a program line.

An agent solving a program task (home_search, booking, google_sheets) calls the task's API
methods as tools. Each call is validated and turned into one program line we build ourselves
(never text the agent wrote pasted as code); the program built so far plus that line runs in
the sandbox on a fresh world of the sample. A call that runs keeps its line; a call that cannot
be converted, or that the simulator refuses, leaves the program as it was and is answered with
an error reply in the API's own words — the same rules as ``--mode tools`` (``loop.py``),
because the simulators check before they change anything.

Which calls count: every call that ran, in order. ``outcome`` scores the program of those lines
with the task's own ``score`` (the judge a model's program gets), so an agent and a model that
make the same calls get the same outcome; an agent that made no successful call has written an
empty program, which the task scores as a crash. Nothing is scored, and no gold is read, until
``outcome``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from toolbench.core.agent import ToolCall, ToolReply, ToolSpec, Untranslatable
from toolbench.core.bounded import bounded_text
from toolbench.core.task import TaskData
from toolbench.kinds.tool_calling.convert import BadCall, call_line, gold_calls
from toolbench.kinds.tool_calling.loop import MAX_PROGRAM_LINES
from toolbench.kinds.tool_calling.schema import ToolSet
from toolbench.sandbox.memo import ProgramRunner
from toolbench.sandbox.pool import ExecResult
from toolbench.sandbox.world import WorldFactory
from toolbench.types import Outcome, Sample

MAX_REPLY_CHARS = 20_000  # one tool reply's text
MAX_SHOWN_PROGRAM_CHARS = 5_000  # the program in the outcome's details


class ScoredProgramTask(Protocol):
    """What the world needs of its task: the task's own judge of a program."""

    @property
    def name(self) -> str: ...

    def extract_action(self, text: str) -> str: ...

    async def score(
        self, data: TaskData, sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome: ...


def agent_tools(toolset: ToolSet) -> tuple[ToolSpec, ...]:
    """A task's ``ToolSet`` (its docs' methods) as the agent protocol's tool specs: the same
    schemas ``--mode tools`` sends a model."""
    specs = []
    for tool in toolset.openai():
        function = tool["function"]
        specs.append(ToolSpec(function["name"], function["description"], function["parameters"]))
    return tuple(specs)


class ProgramAgentWorld:
    """One sample's world for an agent (see module doc).

    ``line`` turns a call into a program line (``BadCall`` for one it cannot); ``reply`` makes
    the text of a call that ran from the sandbox's result (``"ok"`` for APIs whose methods
    answer nothing); ``calls_of`` turns a native program into calls (``Untranslatable`` when it
    cannot); ``factory`` is the world the program-so-far runs in (the task's own, or one that
    also reports what the last call returned); ``crash`` is the task's model_error outcome.
    """

    def __init__(
        self,
        *,
        task: ScoredProgramTask,
        data: TaskData,
        sample: Sample,
        sandbox: ProgramRunner,
        tools: Sequence[ToolSpec],
        factory: WorldFactory,
        line: Callable[[str, Mapping[str, Any]], str],
        calls_of: Callable[[str], Any],
        crash: Callable[[str], Outcome],
        reply: Callable[[ExecResult], str] | None = None,
    ) -> None:
        self.task, self.data, self.sample, self.sandbox = task, data, sample, sandbox
        self._tools, self._factory, self._line = tuple(tools), factory, line
        self._calls_of, self._crash = calls_of, crash
        self._reply = reply or (lambda result: "ok")
        self.lines: list[str] = []

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return self._tools

    @property
    def request(self) -> str:
        return self.sample.query

    @property
    def program(self) -> str:
        """The program of the calls that ran, in order: what ``outcome`` scores."""
        return "\n".join(self.lines)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        if not isinstance(arguments, Mapping):
            return ToolReply("the arguments must be a JSON object", is_error=True)
        try:
            line = self._line(name, arguments)
        except BadCall as exc:
            return ToolReply(bounded_text(str(exc), MAX_REPLY_CHARS), is_error=True)
        if len(self.lines) >= MAX_PROGRAM_LINES:
            return ToolReply(f"more than {MAX_PROGRAM_LINES} calls in one task", is_error=True)
        result = await self.sandbox.arun(self._factory, "\n".join([*self.lines, line]))
        if not result.ok:
            return ToolReply(bounded_text(result.error or result.kind, MAX_REPLY_CHARS), True)
        self.lines.append(line)
        return ToolReply(bounded_text(self._reply(result), MAX_REPLY_CHARS))

    async def outcome(self) -> Outcome:
        program = self.program
        outcome = await self.task.score(self.data, self.sample, program, self.sandbox)
        outcome.details = {
            **outcome.details,
            "program": bounded_text(program, MAX_SHOWN_PROGRAM_CHARS),
        }
        return outcome

    def failed(self, message: str) -> Outcome:
        return self._crash(message)

    async def translate(self, action: str) -> list[ToolCall]:
        """The calls of the program the task reads in ``action`` (its own extraction first:
        a reply's code fences and prose go as they go when the reply is scored)."""
        return list(await self._calls_of(self.task.extract_action(action)))

    async def gold_calls(self) -> list[ToolCall]:
        if not self.sample.labels:
            raise Untranslatable(f"sample {self.sample.id} has no gold program")
        return await self.translate(self.sample.labels[0])

    async def close(self) -> None:
        self.lines = []


def toolset_line(toolset: ToolSet) -> Callable[[str, Mapping[str, Any]], str]:
    """``call_line`` for one ``ToolSet`` (the ``API.method(...)`` tasks)."""

    def line(name: str, arguments: Mapping[str, Any]) -> str:
        return call_line(toolset, name, dict(arguments))

    return line


def toolset_calls(toolset: ToolSet) -> Callable[[str], Any]:
    """A gold program's calls, parsed (never run): ``API.method(literal, ...)`` lines and
    ``x = Loc(...)`` / ``Date(...)`` names; any other shape is ``Untranslatable``."""

    async def calls_of(action: str) -> list[ToolCall]:
        try:
            calls = gold_calls(toolset, action)
        except (ValueError, SyntaxError, RecursionError, MemoryError) as exc:
            raise Untranslatable(f"not a program of API calls: {exc}") from None
        return [ToolCall(name, arguments) for name, arguments in calls]

    return calls_of


def json_reply(value: Any) -> str:
    """A structured answer as JSON text (``str`` of what JSON cannot say)."""
    return json.dumps(value, ensure_ascii=False, default=str)
