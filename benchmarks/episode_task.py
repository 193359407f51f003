"""A multi-turn episode on home_search's data, for ``engine_speed.py`` (never registered for
users: the benchmark adds it to ``TASKS`` in its own process).

Each turn the model writes a program; it runs in the sandbox on a fresh world of the sample,
and the world's state comes back as the next user message, so the transcript grows every turn
as a real episode's does. The benchmark's fake server answers every turn with the gold program
of the query in the first message, so each turn's sandbox work equals one single-turn
home_search call's: what differs from the single-turn run is the growing transcript (hashing,
request encoding, the run log's longer record) and the solve loop itself, which is what the
episode criterion is about.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import LiveOptions, Resources, TaskBase, TaskData, TaskDefaults
from toolbench.kinds.program_task import crash_outcome, sandbox_failure
from toolbench.kinds.scoring import best_match
from toolbench.prompts.builder import Prompter
from toolbench.sandbox import SandboxError
from toolbench.sandbox.memo import ProgramRunner
from toolbench.tasks.home_search import TASK as HOME
from toolbench.types import GenerationRequest, Outcome, Sample, Status

NAME = "home_episode"


@dataclass
class EpisodeTask(TaskBase):
    name: str = NAME
    summary: str = "home_search as an episode of --max-turns turns (benchmark only)"
    metrics: tuple[str, ...] = ("success_rate", "crash_rate", "f1")
    defaults: TaskDefaults = field(default_factory=TaskDefaults)

    def versions(self) -> list[str]:
        return HOME.versions()

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData:
        data = HOME.load(version, data_dir, live)
        samples = [dataclasses.replace(sample, task=self.name) for sample in data.samples]
        return dataclasses.replace(data, task=self.name, samples=samples)

    async def prepare(self, data: TaskData, sandbox: ProgramRunner) -> None:
        await HOME.prepare(data, sandbox)

    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        """Turn 1: the prompter's prompt as the opening chat message (what ``solve`` sends
        first, and what ``show`` rebuilds)."""
        first = prompter.request(sample, epoch)
        opening = first.messages or ({"role": "user", "content": first.prompt or ""},)
        return dataclasses.replace(first, prompt=None, messages=tuple(opening), step="turn-1")

    async def solve(self, state: SampleState, generate: Generate, resources: Resources) -> Outcome:
        """``max_turns`` turns, always all of them (a fixed number of calls per sample);
        the last turn's world is scored against the golds as home_search scores it."""
        first = self.first_request(resources.data, state.sample, state.epoch, resources.prompter)
        messages: list[Any] = list(first.messages or ())
        result = None
        for turn in range(1, resources.max_turns + 1):
            request = dataclasses.replace(first, messages=tuple(messages), step=f"turn-{turn}")
            reply = await generate(request)
            state.prediction = reply.text
            action = HOME.extract_action(reply.text)
            try:
                result = await resources.sandbox.arun(HOME.world, action)
            except SandboxError as exc:
                return sandbox_failure(exc)
            observation = json.dumps(result.state) if result.ok else result.error
            messages += [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": f"Observation: {observation}\nAction:"},
            ]
        if result is None or not result.ok:
            return crash_outcome(f"{getattr(result, 'kind', 'none')}: last action failed")
        predicted = result.state if isinstance(result.state, dict) else {}
        _index, (precision, recall, f1) = best_match(
            predicted, resources.data.gold[state.sample.id]
        )
        metrics = {"precision": precision, "recall": recall, "f1": f1}
        return Outcome(Status.SCORED, f1 == 1.0, metrics)

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return mean_metrics(outcomes, self.metrics)
