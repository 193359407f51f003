"""The built-in scripted models (``oracle``, ``replay:FILE``) behind the reference agent.

These models do not call tools: the oracle knows the sample's gold, a replay file holds a
prediction per sample, and both are the task's NATIVE action (a program, a curl command, a
plan). To play them as an agent, the reference agent builds the sample's world itself, only
to translate (``AgentWorld.translate``; the oracle takes ``AgentWorld.gold_calls``, as an
episode such as web_shop has no single gold text), then makes those calls over MCP on the
harness's world, which is the one that is judged. The local world is never judged and its
golds are never executed.

This is the one place the reference agent knows anything beyond the request and the tools:
it reads which sample it is solving from the contract's environment (``TOOLBENCH_TASK``,
``TOOLBENCH_SAMPLE_ID``, ``TOOLBENCH_EPOCH``, ``TOOLBENCH_DATA_VERSION``,
``TOOLBENCH_DATA_DIR``) and hands the sample to the model (``GenerationRequest.sample``) so the
oracle and replay can look it up. A real model gets neither. Task options given to the run
(``--option``) are not in that environment: the local world uses the task's defaults.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from toolbench.core.agent import AgentWorld, ToolCall, Untranslatable
from toolbench.core.bounded import bounded_text
from toolbench.errors import UserError
from toolbench.models.base import Model
from toolbench.types import GenerationRequest, Sample

if TYPE_CHECKING:
    from toolbench.agents.reference import Brief, Tools


async def scripted_attempt(brief: Brief, kind: str, model: Model, tools: Tools) -> str:
    """Make the calls of the scripted model's action on the served world; the final message
    is the action's text (the oracle's: the first gold label, where there is one). A reply
    that is no action the task can read makes no calls, and the agent ends normally: the
    untouched world is judged, as the task judges a reply that does nothing (a program task's
    "empty program" crash, virtual_home's empty plan)."""
    from toolbench.agents.reference import SYSTEM_PROMPT

    async with local_world(brief) as (world, sample):
        if kind == "oracle":
            calls = await world.gold_calls()
            final = sample.labels[0] if sample.labels else ""
        else:
            request = GenerationRequest(
                messages=(
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": brief.request},
                ),
                sample=sample,
                epoch=brief.epoch,
            )
            final = (await model.generate(request)).text or ""
            try:
                calls = await world.translate(final)
            except Untranslatable as why:  # no action: the world is judged as left, untouched
                print(f"reference agent: the reply makes no tool calls ({why})", file=sys.stderr)
                calls = []
    await make_calls(tools, calls)
    return final


async def make_calls(tools: Tools, calls: list[ToolCall]) -> None:
    """The calls in order over MCP; a refused call is logged (stderr) and the next is made,
    as the same action would go on in the task's own executor only where it can: the world's
    judge decides what the refusal costs."""
    for call in calls:
        reply = await tools.call(call.name, dict(call.arguments))
        if reply.is_error:
            print(
                f"reference agent: {call.name} refused: {bounded_text(reply.text, 300)}",
                file=sys.stderr,
            )


@contextlib.asynccontextmanager
async def local_world(brief: Brief) -> AsyncIterator[tuple[AgentWorld, Sample]]:
    """A fresh world of the brief's sample, built as the harness builds it but without golds
    (only ``translate`` and ``gold_calls`` are asked of it), and the sample itself."""
    from toolbench.core.task import Resources
    from toolbench.prompts.builder import PromptConfig, Prompter
    from toolbench.sandbox.pool import SandboxPool
    from toolbench.tasks.registry import get_task

    if not brief.task or not brief.sample_id:
        raise UserError(
            "the oracle and replay models need TOOLBENCH_TASK and TOOLBENCH_SAMPLE_ID (set by "
            "`toolbench run`); a real model needs neither"
        )
    task = get_task(brief.task)
    version = brief.data_version or task.versions()[-1]
    data = task.load(version, Path(brief.data_dir) if brief.data_dir else None)
    sample = next((s for s in data.samples if s.id == brief.sample_id), None)
    if sample is None:
        raise UserError(f"TOOLBENCH_SAMPLE_ID {brief.sample_id}: no such sample in {data.source}")
    with SandboxPool(workers=1) as pool:
        resources = Resources(data, pool, Prompter(data.context, PromptConfig()))
        world = task.agent_world(data, sample, resources)
        try:
            yield world, sample
        finally:
            await world.close()
            data.close()
