"""The tools-mode solve loop of a program task: native tool calls, run in the sandboxed world.

Each turn the model gets the conversation so far and the task's tools. Every tool call of its
reply, in order, becomes a program line (``convert.call_line``) appended to the program built
so far, and that program runs in the sandbox on a fresh world of the task. A call that runs
keeps its line; a call the simulator refuses, or one we cannot convert (bad JSON, wrong types,
an unknown tool), leaves the program as it was and its error goes back as the call's ``tool``
message, so the model may correct itself. Because the simulators check before they change
anything, dropping a refused call's line gives exactly the world a real API would be in.

The loop ends when the model answers without a tool call, or after ``resources.max_turns``
model calls (the last reply's calls are still run). Either way the sample is scored like a
program-mode prediction, by ``ProgramTask.score`` on the program that was executed: the state
reached is what counts, so a home_search episode that never calls ``search()`` is scored on
the criteria without ``search()``'s defaults, as a program without the call would be, and one
that hits the turn limit keeps whatever it had reached (its message says the limit was hit).
A model that never calls a tool has written an empty program: a crash, as in the other modes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import Resources, TaskData
from toolbench.kinds.tool_calling.convert import BadCall, call_line, gold_calls
from toolbench.kinds.tool_calling.schema import ToolSet
from toolbench.prompts.builder import Prompter
from toolbench.sandbox.memo import ProgramRunner
from toolbench.sandbox.world import WorldFactory
from toolbench.types import GenerationRequest, Outcome, Sample

MAX_CALLS_PER_REPLY = 32  # calls of one reply beyond this are answered with an error, not run
MAX_PROGRAM_LINES = 100  # executed calls per sample; later calls are refused
MAX_RESULT_CHARS = 500  # one tool message
MAX_TRACE_CHARS = 300  # one call's name/arguments in the trace


class ToolsTask(Protocol):
    """What the loop needs from a program task."""

    @property
    def world(self) -> WorldFactory: ...

    async def score(
        self, data: TaskData, sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome: ...


@dataclass
class Episode:
    """The program built so far and the counts the sample's details report."""

    lines: list[str] = field(default_factory=list)
    calls: int = 0
    errors: int = 0

    @property
    def program(self) -> str:
        return "\n".join(self.lines)


def oracle_calls(toolset: ToolSet, sample: Sample) -> tuple[dict[str, Any], ...] | None:
    """The first gold's calls as tool calls in the OpenAI shape, or None when the gold is not
    in a shape we can turn into calls (the oracle then answers nothing and crashes visibly)."""
    try:
        calls = gold_calls(toolset, sample.labels[0]) if sample.labels else None
    except (ValueError, SyntaxError):
        return None
    if calls is None:
        return None
    return tuple(
        {
            "id": f"call_gold_{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        for i, (name, arguments) in enumerate(calls, 1)
    )


def _call_parts(call: Mapping[str, Any]) -> tuple[Any, Any, str]:
    """(name, arguments, id) of a tool call in the OpenAI shape, whatever is missing."""
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    ident = call.get("id")
    return function.get("name"), function.get("arguments"), ident if isinstance(ident, str) else ""


def _assistant_message(text: str, calls: Sequence[Mapping[str, Any]], turn: int) -> dict[str, Any]:
    """The model's reply as the conversation keeps it, every call with a unique id (a server
    that sends none or repeats one would otherwise leave tool messages unmatched)."""
    echoed, seen = [], set()
    for i, call in enumerate(calls, 1):
        name, arguments, ident = _call_parts(call)
        if not ident or ident in seen:
            ident = f"call_{turn}_{i}"
        seen.add(ident)
        echoed.append(
            {
                "id": ident,
                "type": "function",
                "function": {
                    "name": name if isinstance(name, str) else "",
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
                },
            }
        )
    return {"role": "assistant", "content": text or None, "tool_calls": echoed}


async def _run_call(
    task: ToolsTask,
    toolset: ToolSet,
    episode: Episode,
    call: Mapping[str, Any],
    resources: Resources,
) -> tuple[str | None, str]:
    """Convert and run one call: (the line it added or None, the result for the model)."""
    name, arguments, _ = _call_parts(call)
    try:
        line = call_line(toolset, name, arguments)
    except BadCall as exc:
        return None, f"error: {exc}"
    if len(episode.lines) >= MAX_PROGRAM_LINES:
        return None, f"error: more than {MAX_PROGRAM_LINES} calls in one task"
    result = await resources.sandbox.arun(task.world, "\n".join([*episode.lines, line]))
    if not result.ok:
        return None, f"error: {result.error or result.kind}"[:MAX_RESULT_CHARS]
    episode.lines.append(line)
    return line, "ok"


def _bounded(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= MAX_TRACE_CHARS else text[:MAX_TRACE_CHARS] + "..."


async def _run_reply(
    task: ToolsTask,
    toolset: ToolSet,
    episode: Episode,
    calls: list[dict[str, Any]],
    step: str,
    state: SampleState,
    resources: Resources,
) -> list[dict[str, Any]]:
    """Run a reply's calls in order; the tool messages answering them."""
    messages = []
    for index, call in enumerate(calls):
        if index < MAX_CALLS_PER_REPLY:
            line, result = await _run_call(task, toolset, episode, call, resources)
        else:
            line, result = None, f"error: more than {MAX_CALLS_PER_REPLY} calls in one reply"
        episode.calls += 1
        episode.errors += line is None
        name, arguments, ident = _call_parts(call)
        state.trace.append(
            {
                "step": step,
                "tool": _bounded(name),
                "arguments": _bounded(arguments),
                "line": line,
                "result": result,
            }
        )
        messages.append({"role": "tool", "tool_call_id": ident, "content": result})
    return messages


def first_tools_request(
    toolset: ToolSet, sample: Sample, epoch: int, prompter: Prompter
) -> GenerationRequest:
    """Turn 1's request (the task's ``first_request`` in tools mode): the chat prompt with the
    tools. The oracle makes all the gold's calls at once here, then answers without a call."""
    base = prompter.request(sample, epoch)
    gold = oracle_calls(toolset, sample)
    return dataclasses.replace(
        base,
        messages=tuple(base.messages or ()),
        tools=toolset.openai(),
        step="turn-1",
        ideal=None if gold else "",
        ideal_tool_calls=gold or (),
    )


async def solve_with_tools(
    task: ToolsTask, toolset: ToolSet, state: SampleState, generate: Generate, resources: Resources
) -> Outcome:
    """Ask, run the calls, answer with their results, until the model stops calling tools or
    the turn limit; then score the program that ran (see the module docstring)."""
    first = first_tools_request(toolset, state.sample, state.epoch, resources.prompter)
    messages: list[Mapping[str, Any]] = list(first.messages or ())
    episode, finished = Episode(), False
    for turn in range(1, resources.max_turns + 1):
        request = first
        if turn > 1:
            request = dataclasses.replace(
                first, messages=tuple(messages), step=f"turn-{turn}", ideal="", ideal_tool_calls=()
            )
        generation = await generate(request)
        if not generation.tool_calls:
            finished = True
            break
        assistant = _assistant_message(generation.text, generation.tool_calls, turn)
        messages.append(assistant)
        results = await _run_reply(
            task, toolset, episode, assistant["tool_calls"], f"turn-{turn}", state, resources
        )
        messages.extend(results)
    state.prediction = episode.program
    outcome = await task.score(resources.data, state.sample, episode.program, resources.sandbox)
    outcome.details.update(
        {"tool_calls": episode.calls, "tool_errors": episode.errors, "finished": finished}
    )
    if not finished:
        limit = f"turn limit: the model was still calling tools after {resources.max_turns} turns"
        outcome.message = f"{limit}; {outcome.message}" if outcome.message else limit
    return outcome
