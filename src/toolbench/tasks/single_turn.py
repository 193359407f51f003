"""The solve loop of the ToolBench tasks: one prompt, one answer, one extracted action, scored.

Every one-call task (home_search, booking, open_weather, the_cat_api, google_sheets) solves a
sample with this helper, so their records and scores are exactly what they were when the runner
owned this path.
"""

from __future__ import annotations

from typing import Protocol

from toolbench.runner.solve import Generate, SampleState
from toolbench.sandbox.memo import ProgramRunner
from toolbench.tasks.base import Resources, TaskData
from toolbench.types import Outcome, Sample


class OneCallTask(Protocol):
    def extract_action(self, text: str) -> str:
        """The action to execute from a model's raw reply (completion or chat)."""
        ...

    async def score(
        self, data: TaskData, sample: Sample, action: str, sandbox: ProgramRunner
    ) -> Outcome: ...


async def solve_single_turn(
    task: OneCallTask, state: SampleState, generate: Generate, resources: Resources
) -> Outcome:
    """Ask once (step ``answer``), then extract the action from the reply and score it."""
    request = resources.prompter.request(state.sample, state.epoch)
    generation = await generate(request)
    state.prediction = generation.text
    action = task.extract_action(generation.text)
    return await task.score(resources.data, state.sample, action, resources.sandbox)
