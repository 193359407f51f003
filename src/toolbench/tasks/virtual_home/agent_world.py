"""virtual_home as tools: one tool per household action, the plan built from the calls.

A model writes the plan as text, one ``Agent.Action(object[, object])`` per line. An agent
calls one tool per action instead (``walk_to``, ``grab``, ``put``, ...; the names are the
actions' in snake case), with the objects as named string arguments (``object``, or
``object1`` and ``object2``, as the docs name them). The tools are made from the docs the
model reads (``functions/``: the description) and the allow-lists they list (the enums).

Which calls count: a call is checked against the allow-lists (grounding) and then run in the
sample's household; only a call that passes both is accepted, appended to the plan, and
answered with what happened. A refused call is an error reply in the simulator's own words
and leaves the plan and the household as they were — so the agent can try, read why, and
try again, as a robot in a house could. ``outcome`` scores the accepted calls, written as the
plan lines a model would write (``Agent.Put(milk, fridge)``), with the task's own ``score``:
the original's grounding and LCS over the golds, then the household run and its goals. So a
plan with a refused step scores as the same plan without it; an agent's detours cost LCS.

For a record without a stored scene (an original-layout folder) the household is derived
from the golds, as ``prepare`` does; where the first gold cannot run there, the world
metrics are undefined and calls are checked by grounding alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from toolbench.core.agent import ToolCall, ToolReply, ToolSpec, Untranslatable
from toolbench.tasks.virtual_home.actions import apply
from toolbench.tasks.virtual_home.derive import derive_scene
from toolbench.tasks.virtual_home.grounding import AllowLists, ground, ground_line
from toolbench.tasks.virtual_home.household import Runtime
from toolbench.tasks.virtual_home.metrics import model_error_metrics
from toolbench.tasks.virtual_home.world import Failure, Scene, State, parse_call, run_plan
from toolbench.types import Outcome, Sample, Status

if TYPE_CHECKING:
    from toolbench.core.task import Resources, TaskData
    from toolbench.sandbox.memo import ProgramRunner


class PlanJudge(Protocol):
    """What the world needs of its task (``VirtualHomeTask``), handed in by the task that
    builds it: the task's own judge of a plan."""

    async def score(
        self, data: TaskData[Runtime], sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome: ...


_ACTION_KEY = re.compile(r"Agent\.(\w{1,64})")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Argument names per arity, as the allow-lists and the docs' call lines name them.
_PARAMS = {0: (), 1: ("object",), 2: ("object1", "object2")}
_MAX_VALUE_CHARS = 200  # an object name; longer is refused unread
_MAX_LISTED = 30  # unknown-tool replies list at most this many tool names


@dataclass(frozen=True)
class _Tool:
    spec: ToolSpec
    action: str  # "Put"
    params: tuple[str, ...]
    allowed: tuple[frozenset[str], ...]  # per parameter


_TOOLS: dict[str, dict[str, _Tool]] = {}  # data digest -> tool name -> tool


def tool_name(action: str) -> str:
    """``PutOn`` -> ``put_on``: the tool an action is served as."""
    return _CAMEL.sub("_", action).lower()


def _description(action: str, docs: Mapping[str, str], params: Sequence[str]) -> str:
    """The action's doc as the model reads it (its comment lines), and the plan line."""
    text = docs.get(action) or docs.get(f"Agent.{action}", "")  # ours, or named by the key
    said = " ".join(line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#"))
    line = f"Agent.{action}({', '.join(params)})"
    return f"{said} (plan line: {line})" if said else f"Adds the plan line {line}."


def tools_for(data: TaskData[Runtime]) -> dict[str, _Tool]:
    """The task's tools for this data (its docs and allow-lists), built once per data."""
    cached = _TOOLS.get(data.digest)
    if cached is not None:
        return cached
    runtime = data.runtime
    docs = {doc.name: doc.text for doc in data.context.functions}
    tools: dict[str, _Tool] = {}
    for key, entry in runtime.allow.items():
        match = _ACTION_KEY.fullmatch(key)
        if match is None or len(entry) not in _PARAMS:
            continue  # not a call a plan line could make
        action, params = match.group(1), _PARAMS[len(entry)]
        name = tool_name(action)
        if name in tools:
            continue
        properties: dict[str, Any] = {}
        for param in params:
            schema: dict[str, Any] = {"type": "string", "description": f"the action's {param}"}
            if entry[param]:
                schema["enum"] = sorted(set(entry[param]))
            properties[param] = schema
        spec = ToolSpec(
            name=name,
            description=_description(action, docs, params),
            input_schema={
                "type": "object",
                "properties": properties,
                "required": list(params),
                "additionalProperties": False,
            },
        )
        allowed = tuple(frozenset(entry[p]) for p in params)
        tools[name] = _Tool(spec, action, params, allowed)
    _TOOLS[data.digest] = tools
    return tools


def _household(sample: Sample, runtime: Runtime) -> Scene | None:
    """The sample's household, or None where the task leaves the world metrics undefined
    (as ``task._world_gold`` decides it, from the record's labels, never ``data.gold``)."""
    scene = runtime.scenes.get(sample.id)
    if scene is not None:
        return scene
    derived = derive_scene(sample.labels, runtime.allow)
    labels = runtime.labels.get(sample.id, ())
    if labels and not run_plan(derived, labels[0]).ok:
        return None
    return derived


class VirtualHomeWorld:
    """One sample's household; the accepted calls are its plan (see module doc)."""

    def __init__(
        self,
        task: PlanJudge,
        data: TaskData[Runtime],
        sample: Sample,
        resources: Resources[Runtime],
    ) -> None:
        self.task, self.data, self.sample, self.resources = task, data, sample, resources
        runtime = data.runtime
        self._allow: AllowLists = runtime.allow
        self._tools = tools_for(data)
        self._scene = _household(sample, runtime)
        self._state = State.start(self._scene) if self._scene is not None else None
        self.lines: list[str] = []

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    @property
    def request(self) -> str:
        return self.sample.query

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            known = ", ".join(list(self._tools)[:_MAX_LISTED])
            return ToolReply(f"unknown tool {str(name)[:100]!r}; the tools are: {known}", True)
        line_or_error = self._line(tool, arguments)
        if isinstance(line_or_error, ToolReply):
            return line_or_error
        return self._run(line_or_error)

    def _line(self, tool: _Tool, arguments: Mapping[str, Any]) -> str | ToolReply:
        """The plan line the call stands for, or the error reply saying what is wrong."""
        if not isinstance(arguments, Mapping):
            return ToolReply(f"{tool.spec.name}: arguments must be an object", True)
        extra = sorted(str(k)[:50] for k in arguments if k not in tool.params)
        if extra:
            return ToolReply(f"{tool.spec.name}: unexpected argument(s) {extra}", True)
        values: list[str] = []
        for param, allowed in zip(tool.params, tool.allowed, strict=True):
            if param not in arguments:
                return ToolReply(f"{tool.spec.name}: missing argument {param!r}", True)
            value = arguments[param]
            if not isinstance(value, str):
                kind = type(value).__name__
                return ToolReply(f"{tool.spec.name}: {param!r} must be a string, not {kind}", True)
            if value not in allowed:
                shown = value[:_MAX_VALUE_CHARS]
                return ToolReply(
                    f"Agent.{tool.action} cannot take {shown!r} as {param} (not one of its "
                    "objects in valid_object_lists.json)",
                    True,
                )
            values.append(value)
        line = f"Agent.{tool.action}({', '.join(values)})"
        cleaned, executable = ground_line(line, self._allow)
        if not executable or cleaned != line:  # an allow-list entry that cannot be a line
            return ToolReply(f"{line} fails grounding against valid_object_lists.json", True)
        return line

    def _run(self, line: str) -> ToolReply:
        """Run the line in the household; on a refusal the state is rebuilt from the plan."""
        if self._state is None:
            self.lines.append(line)
            return ToolReply(f"done: {line}")
        parsed = parse_call(line)
        assert parsed is not None  # made by _line in the call format
        try:
            apply(self._state, *parsed)
        except Failure as exc:
            self._state = _replay(self._state.scene, self.lines)
            return ToolReply(f"refused: {line}: {exc}; nothing changed", True)
        self.lines.append(line)
        return ToolReply(f"done: {line}. {_describe(self._state)}")

    @property
    def plan(self) -> str:
        """The accepted calls as the plan a model would have written."""
        return "\n".join(self.lines)

    async def outcome(self) -> Outcome:
        return await self.task.score(self.data, self.sample, self.plan, self.resources.sandbox)

    def failed(self, message: str) -> Outcome:
        return Outcome(status=Status.MODEL_ERROR, metrics=model_error_metrics(), message=message)

    async def translate(self, action: str) -> list[ToolCall]:
        return translate_plan(action, self._allow, self._tools)

    async def gold_calls(self) -> list[ToolCall]:
        if not self.sample.labels:
            raise Untranslatable("the sample has no gold plan")
        return await self.translate(self.sample.labels[0])

    async def close(self) -> None:
        return None


def _replay(scene: Scene, lines: Sequence[str]) -> State:
    result = run_plan(scene, lines)
    assert result.ok, "accepted lines always run"
    return result.state


def _describe(state: State) -> str:
    """What the agent now knows of itself: where it is, what it is at, what it holds."""
    parts = [f"You are in the {state.room}"]
    if state.near:
        parts.append(f"next to the {state.near}")
    held = state.held
    parts.append(f"holding {', '.join(held)}" if held else "with empty hands")
    if state.sitting:
        parts.append(f"sitting on the {state.sitting}")
    return "; ".join(parts) + "."


def translate_plan(action: str, allow: AllowLists, tools: Mapping[str, _Tool]) -> list[ToolCall]:
    """The calls of a plan's lines, as the scorer reads them (grounding's cleaning, up to a
    ``Task:`` line); a line that is no ``Agent.Action(...)`` call of a known tool is
    Untranslatable. A call whose object is not allowed is kept: it is refused when made, as
    the line fails grounding when scored."""
    by_action = {tool.action: tool for tool in tools.values()}
    calls: list[ToolCall] = []
    for line in ground(action, allow).lines:
        parsed = parse_call(line)
        tool = by_action.get(parsed[0]) if parsed is not None else None
        if parsed is None or tool is None:
            raise Untranslatable(f"line {line[:200]!r} is not a call of a virtual_home action")
        args = parsed[1]
        if len(args) != len(tool.params):
            raise Untranslatable(
                f"line {line[:200]!r}: Agent.{tool.action} takes {len(tool.params)} object(s)"
            )
        calls.append(ToolCall(tool.spec.name, dict(zip(tool.params, args, strict=True))))
    return calls
