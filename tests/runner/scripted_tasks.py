"""Two scripted tasks that exercise the engine's solve loop (tests only, never registered for
users).

``counter``: an episode. Each turn the model is told the running total and the target and says
how much to add; the episode ends when the total reaches the target or the turn limit is hit.
``plan``: nested calls. The model first writes a plan (one ``pick(<description>)`` per line);
while the plan "runs", each line asks the model again which object the description names
(step ``parse_obj_name``, numbered by the recorder), as tabletop's programs will.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import LiveOptions, Resources, TaskBase, TaskData, TaskDefaults
from toolbench.prompts.builder import Prompter
from toolbench.sandbox.memo import ProgramRunner
from toolbench.types import GenerationRequest, Outcome, Sample, Status, TaskContext

COUNTER_TARGETS = (1, 4, 5, 7, 9, 2)
PLANS = (
    ("the red block", "the small bowl"),
    ("a green cube",),
    ("the blue one", "the yellow bowl", "the red block"),
)


def _data(name: str, samples: list[Sample]) -> TaskData:
    return TaskData(name, "v0", samples, TaskContext((), ()), "<tests>", f"{name}-v0")


def ask(content: str, step: str, ideal: str) -> GenerationRequest:
    return GenerationRequest(
        messages=({"role": "user", "content": content},), max_tokens=8, step=step, ideal=ideal
    )


def counter_turn(target: int, total: int, turn: int) -> GenerationRequest:
    """One turn of the counter episode; turn 1 is the task's ``first_request``."""
    content = f"target {target}; total {total}; how much to add?"
    return ask(content, f"turn-{turn}", str(min(3, target - total)))


@dataclass
class CounterTask(TaskBase):
    name: str = "counter"
    summary: str = "scripted episode (tests)"
    metrics: tuple[str, ...] = ("success_rate", "crash_rate", "turns")
    defaults: TaskDefaults = field(default_factory=TaskDefaults)
    # Raised from inside the solve loop of the sample with this target, once (a Ctrl-C).
    interrupt_at: int | None = None

    def versions(self) -> list[str]:
        return ["v0"]

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData:
        samples = [
            Sample(id=str(i), task=self.name, query=f"reach {t}", labels=(str(t),))
            for i, t in enumerate(COUNTER_TARGETS)
        ]
        return _data(self.name, samples)

    async def prepare(self, data: TaskData, sandbox: ProgramRunner) -> None:
        return None

    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        return counter_turn(int(sample.labels[0]), 0, 1)

    async def solve(self, state: SampleState, generate: Generate, resources: Resources) -> Outcome:
        target, total = int(state.sample.labels[0]), 0
        for turn in range(1, resources.max_turns + 1):
            reply = await generate(counter_turn(target, total, turn))
            if self.interrupt_at == target:
                self.interrupt_at = None
                raise KeyboardInterrupt
            state.prediction = reply.text
            try:
                total += int(reply.text.strip())
            except ValueError:
                message = f"turn {turn}: not a number"
                return Outcome(Status.MODEL_ERROR, metrics={"turns": float(turn)}, message=message)
            state.trace.append({"step": f"turn-{turn}", "total": total})
            if total >= target:
                return Outcome(Status.SCORED, total == target, {"turns": float(turn)})
        return Outcome(Status.SCORED, False, {"turns": float(resources.max_turns)}, "turn limit")

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return mean_metrics(outcomes, self.metrics)


@dataclass
class PlanTask(TaskBase):
    name: str = "plan"
    summary: str = "scripted nested calls (tests)"
    metrics: tuple[str, ...] = ("success_rate", "crash_rate")
    defaults: TaskDefaults = field(default_factory=TaskDefaults)

    def versions(self) -> list[str]:
        return ["v0"]

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData:
        samples = [
            Sample(
                id=str(i),
                task=self.name,
                query=" then ".join(plan),
                labels=("\n".join(f"pick({d})" for d in plan),),
            )
            for i, plan in enumerate(PLANS)
        ]
        return _data(self.name, samples)

    async def prepare(self, data: TaskData, sandbox: ProgramRunner) -> None:
        return None

    def first_request(
        self, data: TaskData, sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        return ask(f"plan: {sample.query}", "plan", sample.labels[0])

    async def solve(self, state: SampleState, generate: Generate, resources: Resources) -> Outcome:
        sample = state.sample
        first = self.first_request(resources.data, sample, state.epoch, resources.prompter)
        plan = await generate(first)
        state.prediction = plan.text
        picked: list[str] = []
        for line in plan.text.splitlines():
            description = line.strip().removeprefix("pick(").removesuffix(")")
            # The running plan asks the model again, mid-execution.
            name = await generate(
                ask(f"which object is {description}?", "parse_obj_name", _object(description))
            )
            picked.append(name.text.strip())
            state.trace.append({"step": "pick", "object": name.text.strip()})
        expected = [_object(line[5:-1]) for line in sample.labels[0].splitlines()]
        return Outcome(Status.SCORED, picked == expected, details={"picked": picked})

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        return mean_metrics(outcomes, self.metrics)


def _object(description: str) -> str:
    """The object a description names, as the scripted server and the oracle say it."""
    words = [w for w in description.split() if w not in ("the", "a", "one", "small")]
    return "_".join(words) or "unknown"


def counter_reply(body: dict[str, Any]) -> str:
    """What a good model answers to a counter turn (for the fake server)."""
    content = body["messages"][-1]["content"]
    if content.startswith("plan: "):
        return "\n".join(f"pick({d})" for d in content[6:].split(" then "))
    if content.startswith("which object is "):
        return _object(content[len("which object is ") : -1])
    target = int(content.split(";")[0].split()[1])
    total = int(content.split(";")[1].split()[1])
    return str(min(3, target - total))
