"""The harness's own scripted agents: ``--model agent:oracle`` and ``agent:replay:FILE``.

They check the agent path end to end (a contained process, MCP, the world's judge) with known
answers: the oracle's gold, a replay file's predictions. Those answers are the task's NATIVE
action (a program, a curl command, a plan), not tool calls, so the harness translates them
itself, on a second world of the sample that is never judged (``AgentWorld.gold_calls`` for
the oracle, since an episode such as web_shop has no single gold text, ``translate`` of the
prediction for a replay), and hands the resulting calls to the reference agent's player
(``python -m toolbench.agents.reference --script``) on stdin. The player makes them over MCP
on the served world, the one judged, in the same OS layer as any agent.

So the gold travels only from the harness to its own player, never through anything a user's
agent can read: agent processes see neither the data folders nor the sample beyond its
request. A prediction that is no action makes no calls: the untouched world is judged, as the
task judges a reply that does nothing.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from toolbench.agents.process import AgentSettings, ProcessAgent
from toolbench.agents.reference import SYSTEM_PROMPT
from toolbench.core.agent import AgentBrief, AgentEnd, AgentWorld, ToolCall, Untranslatable
from toolbench.errors import UserError
from toolbench.models.spec import make_model
from toolbench.types import GenerationRequest

if TYPE_CHECKING:
    from toolbench.models.base import Model, ModelOptions

#: The player: the reference agent reading its calls from stdin.
PLAYER = ("-m", "toolbench.agents.reference", "--script")


def make_scripted(spec: str, options: ModelOptions, settings: AgentSettings) -> ScriptedAgent:
    """``oracle`` or ``replay:FILE`` behind the player (the replay file is checked now)."""
    model = None
    if spec.startswith("replay:"):
        if not spec[len("replay:") :].strip():
            raise UserError("--model agent:replay:FILE: name the replay file")
        model = make_model(spec, options)
    player = ProcessAgent(spec, [sys.executable, *PLAYER], settings)
    return ScriptedAgent(spec, model, player)


class ScriptedAgent:
    """The harness's scripted agent (see module doc)."""

    def __init__(self, spec: str, model: Model | None, player: ProcessAgent) -> None:
        self.name = f"agent:{spec}"
        self.model = model
        self.player = player

    @property
    def isolation(self) -> dict[str, Any]:
        return self.player.isolation

    async def aclose(self) -> None:
        await self.player.aclose()
        if self.model is not None:
            await self.model.aclose()

    async def attempt(self, world: AgentWorld, brief: AgentBrief) -> AgentEnd:
        if brief.fresh_world is None:
            return AgentEnd("", failure="a scripted agent needs the harness's sample world")
        local = brief.fresh_world()
        try:
            calls, final, note = await self._script(local, brief)
        except Untranslatable as why:
            return AgentEnd("", failure=f"the oracle has no calls for this sample: {why}")
        finally:
            await local.close()
        script = {
            "request": brief.request,
            "calls": [{"name": c.name, "arguments": dict(c.arguments)} for c in calls],
            "final": final,
            "note": note,
        }
        return await self.player.attempt_with(world, brief, json.dumps(script))

    async def _script(
        self, local: AgentWorld, brief: AgentBrief
    ) -> tuple[list[ToolCall], str, str]:
        """The calls to make, the final message to print, and a note for the player's log."""
        if self.model is None:  # the oracle
            sample = brief.sample
            final = sample.labels[0] if sample is not None and sample.labels else ""
            return await local.gold_calls(), final, ""
        request = GenerationRequest(
            messages=(
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": brief.request},
            ),
            sample=brief.sample,
            epoch=brief.epoch,
        )
        final = (await self.model.generate(request)).text or ""
        try:
            return await local.translate(final), final, ""
        except Untranslatable as why:  # no action: the world is judged as left, untouched
            return [], final, f"the reply makes no tool calls ({why})"
