"""The solve loop of the ToolBench tasks: one prompt, one answer, one extracted action, scored.

Every one-call task (home_search, booking, open_weather, the_cat_api, google_sheets) solves a
sample with this helper, so their records and scores are exactly what they were when the runner
owned this path.
"""

from __future__ import annotations

from typing import Protocol

from toolbench.core.solve import Generate, SampleState, off_loop
from toolbench.core.task import Resources, TaskData
from toolbench.prompts.builder import Prompter
from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import GenerationRequest, Outcome, Sample


class QueryPrompt:
    """``Task.first_request`` of a task whose first prompt is the prompter's (API docs and
    demonstrations retrieved for the query, then the query): what ``solve_single_turn`` sends,
    and what ``show`` rebuilds."""

    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        return prompter.request(sample, epoch)


class OneCallTask(Protocol):
    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        """The one request (``Task.first_request``): solving sends exactly this."""
        ...

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
    request = task.first_request(resources.data, state.sample, state.epoch, resources.prompter)
    generation = await generate(request)
    state.prediction = generation.text
    text = generation.text
    action = await off_loop(task.extract_action, text, size=len(text), what="reading this reply")
    return await task.score(resources.data, state.sample, action, resources.sandbox)
