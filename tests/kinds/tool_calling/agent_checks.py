"""Checks every program task's AgentWorld must pass (the acceptance of issue 30), shared by
the per-task test modules: gold calls score full marks, a wrong argument does not, anything
wrong the agent sends is an error reply that changes nothing, and the tool list is valid."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

import jsonschema

from toolbench.core.agent import AgentWorld, ToolCall, Untranslatable
from toolbench.core.task import Resources, Task, TaskData
from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import Sample, Status


def resources(data: TaskData, sandbox: ProgramRunner) -> Resources:
    """What ``agent_world`` reads (the data and the sandbox; no prompter is used)."""
    return Resources(data=data, sandbox=sandbox, prompter=cast(Any, None))


def world_of(task: Task, data: TaskData, sample: Sample, sandbox: ProgramRunner) -> AgentWorld:
    return task.agent_world(data, sample, resources(data, sandbox))


async def replay(world: AgentWorld, calls: Sequence[ToolCall]) -> list[str]:
    """Make each call; the error replies (none expected for a gold's calls)."""
    errors = []
    for call in calls:
        reply = await world.call(call.name, call.arguments)
        if reply.is_error:
            errors.append(f"{call.name}({dict(call.arguments)}): {reply.text}")
    return errors


def check_golds(
    task: Task,
    data: TaskData,
    samples: Sequence[Sample],
    sandbox: ProgramRunner,
    full_marks: Mapping[str, float],
) -> None:
    """Every sample's gold calls run without an error and score success with ``full_marks``."""

    async def one(sample: Sample) -> None:
        world = world_of(task, data, sample, sandbox)
        try:
            calls = await world.gold_calls()
            assert calls, sample.id
            errors = await replay(world, calls)
            assert not errors, (sample.id, errors)
            outcome = await world.outcome()
            assert outcome.status is Status.SCORED, (sample.id, outcome.message)
            assert outcome.success is True, (sample.id, outcome.details)
            for metric, value in full_marks.items():
                assert outcome.metrics[metric] == value, (sample.id, metric)
        finally:
            await world.close()

    async def all_samples() -> None:
        for sample in samples:
            await one(sample)

    asyncio.run(all_samples())


def perturbed(calls: Sequence[ToolCall]) -> list[ToolCall]:
    """The calls with one argument value changed (the first string or number found)."""
    changed = list(calls)
    for index, call in enumerate(calls):
        for key, value in call.arguments.items():
            if isinstance(value, bool):
                continue
            if isinstance(value, str):
                new: Any = value + "x"
            elif isinstance(value, (int, float)):
                new = value + 1
            else:
                continue
            changed[index] = ToolCall(call.name, {**call.arguments, key: new})
            return changed
    raise AssertionError("no argument to change")


def check_wrong_argument(
    task: Task, data: TaskData, sample: Sample, sandbox: ProgramRunner
) -> None:
    async def run() -> None:
        world = world_of(task, data, sample, sandbox)
        calls = perturbed(await world.gold_calls())
        await replay(world, calls)
        outcome = await world.outcome()
        assert outcome.success is False, outcome
        await world.close()

    asyncio.run(run())


def check_refusals(
    task: Task,
    data: TaskData,
    sample: Sample,
    sandbox: ProgramRunner,
    bad_calls: Sequence[tuple[Any, Any]],
) -> None:
    """Each bad call is an error reply, never a raise, and leaves the world as it was: after
    the gold's calls and the bad ones, the outcome is still the gold's."""

    async def run() -> None:
        world = world_of(task, data, sample, sandbox)
        calls = await world.gold_calls()
        assert not await replay(world, calls)
        before = await world.outcome()
        for name, arguments in bad_calls:
            reply = await world.call(name, arguments)
            assert reply.is_error, (name, arguments, reply)
            assert reply.text.strip()
        after = await world.outcome()
        assert after.success is True and before.success is True
        assert after.metrics == before.metrics
        await world.close()
        await world.close()  # idempotent

    asyncio.run(run())


def check_failed(task: Task, data: TaskData, sample: Sample, sandbox: ProgramRunner) -> None:
    outcome = world_of(task, data, sample, sandbox).failed("the agent crashed")
    assert outcome.status is Status.MODEL_ERROR
    assert outcome.success is False
    assert "crashed" in (outcome.message or "")
    assert all(value == 0 for value in outcome.metrics.values())


def check_untranslatable(
    task: Task, data: TaskData, sample: Sample, sandbox: ProgramRunner, actions: Sequence[str]
) -> None:
    async def run() -> None:
        world = world_of(task, data, sample, sandbox)
        for action in actions:
            try:
                await world.translate(action)
            except Untranslatable as exc:
                assert str(exc)
            else:
                raise AssertionError(f"translated {action!r}")

    asyncio.run(run())


def check_tools(world: AgentWorld) -> None:
    names = [tool.name for tool in world.tools]
    assert names and len(names) == len(set(names))
    for tool in world.tools:
        assert tool.description.strip(), tool.name
        schema = dict(tool.input_schema)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        assert schema.get("additionalProperties") is False
        json.dumps(schema)
    assert world.request.strip()
