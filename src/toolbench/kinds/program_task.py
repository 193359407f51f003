"""Tasks whose action is a Python program run against a simulated API (home_search, booking).

The prediction and every gold program run in the sandbox on fresh worlds; the final world
states are compared key by key, so programs that reach the same state are the same answer.
Gold states are computed once, by ``prepare``, before any sample is solved. Its ``toolset``
makes the task run in ``--mode tools`` too: the model calls the API as native tools and the
program those calls make is scored the same way (``tool_calling.loop``), and an agent can
solve it over MCP (``agent_world``: the same calls, lines and judge).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.core.agent import AgentWorld
from toolbench.core.agent import ToolSpec as AgentToolSpec
from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import LiveOptions, Resources, TaskData, TaskDefaults, TaskGenerator
from toolbench.errors import UserError
from toolbench.kinds.folder import OfflineFolderTask, load_folder
from toolbench.kinds.scoring import best_match
from toolbench.kinds.single_turn import solve_single_turn
from toolbench.kinds.tool_calling import ToolSet, first_tools_request, solve_with_tools
from toolbench.kinds.tool_calling.agent_world import (
    ProgramAgentWorld,
    agent_tools,
    toolset_calls,
    toolset_line,
)
from toolbench.prompts.builder import Mode, Prompter
from toolbench.prompts.extract import extract_program
from toolbench.sandbox import SandboxError
from toolbench.sandbox.memo import ProgramRunner
from toolbench.sandbox.world import WorldFactory
from toolbench.types import GenerationRequest, Outcome, Sample, Status

PROGRAM_METRICS = ("success_rate", "crash_rate", "precision", "recall", "f1")


@dataclass
class ProgramTask(OfflineFolderTask):
    name: str
    summary: str
    world: WorldFactory
    package_dir: Path = field()  # the task's folder; its data lives in data/<version>/
    generator: TaskGenerator = field()  # ``toolbench data generate`` (``cli.data.Generates``)
    toolset: ToolSet = field()  # the API as native tools, for --mode tools and agents
    defaults: TaskDefaults = field(default_factory=TaskDefaults)
    metrics: tuple[str, ...] = PROGRAM_METRICS

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData[None]:
        self.refuse_live(live)
        return load_folder(self.name, self.package_dir, version, data_dir)

    async def prepare(self, data: TaskData, sandbox: ProgramRunner) -> None:
        data.gold = await asyncio.to_thread(self._run_golds, data.samples, sandbox)

    def _run_golds(self, samples: Sequence[Sample], sandbox: ProgramRunner) -> dict[str, list[Any]]:
        """Execute every gold program; any failure is a data error naming file:line."""
        jobs = [(s, i, label) for s in samples for i, label in enumerate(s.labels)]
        results = sandbox.run_many(self.world, [label for _, _, label in jobs])
        gold: dict[str, list[Any]] = {s.id: [] for s in samples}
        for (sample, index, _), result in zip(jobs, results, strict=True):
            if not result.ok:
                raise UserError(
                    f"{sample.source}: gold program {index + 1} fails in the {self.name} "
                    f"simulator ({result.error}); fix or remove this line"
                )
            gold[sample.id].append(result.state)
        return gold

    # -- solving and scoring -------------------------------------------------------------------

    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        """The prompter's request; in tools mode, turn 1 of the tool-calling loop."""
        if prompter.config.mode is Mode.TOOLS:
            return first_tools_request(self.toolset, sample, epoch, prompter)
        return prompter.request(sample, epoch)

    async def solve(self, state: SampleState, generate: Generate, resources: Resources) -> Outcome:
        if resources.prompter.config.mode is Mode.TOOLS:
            return await solve_with_tools(self, self.toolset, state, generate, resources)
        return await solve_single_turn(self, state, generate, resources)

    def extract_action(self, text: str) -> str:
        return extract_program(text)

    async def score(
        self, data: TaskData, sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome:
        if not action.strip():
            return crash_outcome("empty program: the model wrote no action")
        try:
            result = await sandbox.arun(self.world, action)
        except SandboxError as exc:
            return sandbox_failure(exc)
        if not result.ok:
            return crash_outcome(f"{result.kind}: {result.error}")
        golds = data.gold[sample.id]
        predicted = result.state if isinstance(result.state, dict) else {}
        index, (precision, recall, f1) = best_match(predicted, golds)
        return Outcome(
            status=Status.SCORED,
            success=f1 == 1.0,
            metrics={"precision": precision, "recall": recall, "f1": f1},
            details={"closest_label": index, "state": predicted},
        )

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return mean_metrics(outcomes, self.metrics)

    # -- agents over MCP -----------------------------------------------------------------------

    def agent_world(self, data: TaskData, sample: Sample, resources: Resources) -> AgentWorld:
        """Its tools mode's tools, for an agent: the same calls, the same lines, one judge."""
        return ProgramAgentWorld(
            task=self,
            data=data,
            sample=sample,
            sandbox=resources.sandbox,
            tools=_agent_tools(self.toolset),
            factory=self.world,
            line=toolset_line(self.toolset),
            calls_of=toolset_calls(self.toolset),
            crash=crash_outcome,
        )


@functools.cache
def _agent_tools(toolset: ToolSet) -> tuple[AgentToolSpec, ...]:
    """A toolset's agent tool specs, built once per toolset (toolsets are frozen values)."""
    return agent_tools(toolset)


def sandbox_failure(exc: SandboxError) -> Outcome:
    """The sandbox itself failed (a worker would not start): the harness's problem, kept out
    of the score and retried on resume, never the end of the run."""
    return Outcome(
        status=Status.INFRA_ERROR, message=f"sandbox: {' '.join(str(exc).split())}"[:500]
    )


def crash_outcome(message: str, metrics: Sequence[str] = ("precision", "recall", "f1")) -> Outcome:
    """A prediction that raised or was rejected: a failure the model is responsible for. It
    scores 0 on the task's own per-sample metrics (none for a task that defines none)."""
    return Outcome(
        status=Status.MODEL_ERROR,
        success=False,
        metrics={name: 0.0 for name in metrics},
        message=message,
    )
