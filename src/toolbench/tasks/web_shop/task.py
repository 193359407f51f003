"""The web_shop task: a shopping episode per goal id, one model call per turn, scored by the
purchase reward.

``load`` reads ``test.jsonl`` (lines ``{"id": <goal index>}``, integers as the original
requires), the API docs and the demonstrations, and the committed shop. ``solve`` runs the
episode as SambaNova's evaluator did: up to 25 turns; each turn the prompt shows the current
page only (``--history K`` adds the last K actions and pages) with demonstrations retrieved
for that page; the stripped reply is the action; the episode ends at the purchase. Each call
is step ``turn-N`` and carries the expert's action for that page as ``ideal`` (the oracle's
answer). A reply the store cannot use is a no-op that costs the turn, as in the original; a
failed model call ends the sample as a crash (``model_error``) or an infra error.
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from toolbench.core.agent import AgentWorld
from toolbench.core.capabilities import DataclassOptions
from toolbench.core.metrics import mean_metrics
from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import LiveOptions, Resources, TaskData, TaskDefaults
from toolbench.data.layout import digest_folder, read_docs
from toolbench.errors import UserError, json_problem
from toolbench.kinds.folder import OfflineFolderTask, resolve_folder
from toolbench.prompts.builder import Prompter
from toolbench.tasks.web_shop import catalogue
from toolbench.tasks.web_shop.agent_world import WebShopWorld
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.judging import MAX_STEPS, episode_outcome
from toolbench.tasks.web_shop.shopper import Shopper
from toolbench.tasks.web_shop.world import Session, StepResult, Store
from toolbench.types import GenerationRequest, Outcome, Sample, TaskContext

METRICS = ("success_rate", "reward", "purchase_match_rate", "crash_rate", "mean_turns")
MAX_TRACE_ACTION_CHARS = 300
_ID_FORMAT = 'each line must be {"id": <goal index>} with an integer id'


@dataclass(frozen=True)
class Runtime:
    store: Store
    layout: str


@dataclass
class WebShopTask(DataclassOptions, OfflineFolderTask):
    name: str
    summary: str
    package_dir: Path = field()
    defaults: TaskDefaults = field(default_factory=TaskDefaults)
    metrics: tuple[str, ...] = METRICS
    # How many earlier actions and pages each turn's prompt shows (0: only the current page,
    # as the original); a task option (``--history K``).
    history: int = 0
    option_defaults = MappingProxyType({"history": 0})
    # The built-in baseline's rule-following shopper, remembering each episode's clicks.
    shopper: Shopper = field(default_factory=Shopper, init=False, repr=False, compare=False)

    def load(
        self, version: str, data_dir: Path | None, live: LiveOptions | None = None
    ) -> TaskData[Runtime]:
        self.refuse_live(live)
        if version not in self.versions():
            raise UserError(
                f"task {self.name} has no version {version!r} (it sets the page layout); "
                f"use --version {' or '.join(self.versions())}"
            )
        folder = resolve_folder(self.name, self.package_dir, version, data_dir)
        ours = self.package_dir / "data" / version
        functions_dir = (
            folder / "functions" if (folder / "functions").is_dir() else ours / "functions"
        )
        examples_dir = folder / "examples" if (folder / "examples").is_dir() else ours / "examples"
        store = Store.load()
        samples = read_ids(folder / "test.jsonl", self.name, store, version)
        context = TaskContext(functions=read_docs(functions_dir), examples=read_docs(examples_dir))
        files = [folder / "test.jsonl", *_files(functions_dir), *_files(examples_dir)]
        files += [
            catalogue.SHOP_DIR / catalogue.PRODUCTS_FILE,
            catalogue.SHOP_DIR / catalogue.GOALS_FILE,
        ]
        return TaskData(
            task=self.name, version=version, samples=samples, context=context,
            source=str(folder), digest=digest_folder(files), runtime=Runtime(store, version),
        )  # fmt: skip

    def agent_world(
        self, data: TaskData[Runtime], sample: Sample, resources: Resources[Runtime]
    ) -> AgentWorld:
        """The sample's episode as ``search`` / ``click`` tools (``agent_world.py``); no gold is
        read: the oracle's path is the expert's, played on demand."""
        runtime = data.runtime
        return WebShopWorld(runtime.store, int(sample.id), runtime.layout)

    def baseline_reply(self, request: GenerationRequest) -> str | None:
        """The shopper's action on the page the request shows: an episode of pages, not a
        program, so the baseline has no demonstration to re-fill."""
        return self.shopper.reply(request)

    def first_request(
        self, data: TaskData[Runtime], sample: Sample, epoch: int, prompter: Prompter
    ) -> GenerationRequest:
        """Turn 1 of the episode: the goal's start page, with nothing earlier to show."""
        runtime = data.runtime
        session = runtime.store.new_session(int(sample.id), runtime.layout)
        return turn_request(prompter, sample, epoch, 1, session, ())

    async def solve(
        self, state: SampleState, generate: Generate, resources: Resources[Runtime]
    ) -> Outcome:
        runtime = resources.data.runtime
        session = runtime.store.new_session(int(state.sample.id), runtime.layout)
        earlier: deque[tuple[str, str]] = deque(maxlen=self.history)
        for turn in range(1, MAX_STEPS + 1):
            page_text = session.observation
            request = turn_request(
                resources.prompter, state.sample, state.epoch, turn, session, earlier
            )
            generation = await generate(request)
            action = generation.text.strip()
            state.prediction = generation.text
            result = session.step(action)
            state.trace.append(_trace(turn, action, result))
            if earlier.maxlen:
                earlier.append((page_text, action))
            if result.done:
                return episode_outcome(session, turn)
        return episode_outcome(session, MAX_STEPS)

    def aggregate(self, outcomes: Sequence[Outcome]) -> dict[str, float]:
        """Means over scored samples and model errors (a crash bought nothing: 0); the mean
        number of turns is over scored episodes only (a crash's length is not an episode's)."""
        result = mean_metrics(outcomes, [m for m in METRICS if m != "mean_turns"])
        turns = [o.metrics["mean_turns"] for o in outcomes if "mean_turns" in o.metrics]
        if turns:
            result["mean_turns"] = sum(turns) / len(turns)
        return result


def turn_request(
    prompter: Prompter,
    sample: Sample,
    epoch: int,
    turn: int,
    session: Session,
    earlier: Sequence[tuple[str, str]],
) -> GenerationRequest:
    """One turn's request: demonstrations retrieved for the current page, the page (after the
    earlier pages and actions, if any) as the task, and the expert's action as ``ideal``."""
    page_text = session.observation
    shown = with_history(earlier, page_text) if earlier else None
    turn_sample = dataclasses.replace(sample, query=page_text)
    request = prompter.request(turn_sample, epoch, shown=shown)
    return dataclasses.replace(request, step=f"turn-{turn}", ideal=ideal_action(session))


def with_history(earlier: Sequence[tuple[str, str]], page_text: str) -> str:
    """The task text with the last actions and pages (oldest first), then the current page."""
    lines = ["Earlier pages and the actions taken on them, oldest first:"]
    for number, (page, action) in enumerate(earlier, start=1):
        lines += [f"[{number}] Page: {page.strip()}", f"[{number}] Action: {action}"]
    lines.append(f"Current page: {page_text}")
    return "\n".join(lines)


def _trace(turn: int, action: str, result: StepResult) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "step": f"turn-{turn}",
        "action": action[:MAX_TRACE_ACTION_CHARS],
        "valid": result.info["valid"],
        "page": result.page.kind,
    }
    if "reason" in result.info:
        entry["reason"] = result.info["reason"]
    if result.done and "reward_parts" in result.info:
        entry["reward"] = result.reward
        entry["bought"] = result.info["bought"]
    return entry


def read_ids(path: Path, task: str, store: Store, version: str) -> list[Sample]:
    """test.jsonl: one ``{"id": k}`` per line, k an integer goal index (a string id would
    make the original draw a random goal, so it is refused here)."""
    if not path.is_file():
        raise UserError(f"{path}: file not found; a task folder needs a test.jsonl")
    samples: list[Sample] = []
    seen: set[int] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        where = f"{path}:{number}"
        goal_id = _goal_id(line, where, len(store.goals))
        if goal_id in seen:
            raise UserError(f"{where}: duplicate id {goal_id}; ids must be unique")
        seen.add(goal_id)
        start = store.new_session(goal_id, version).observation
        samples.append(Sample(str(goal_id), task, start, (), {"goal": goal_id}, where))
    if not samples:
        raise UserError(f"{path}: no samples; the file is empty")
    return samples


def _goal_id(line: str, where: str, count: int) -> int:
    if not line.strip():
        raise UserError(f"{where}: empty line; remove it (every line must be one sample)")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: invalid JSON ({json_problem(exc)}); {_ID_FORMAT}") from None
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deeply; {_ID_FORMAT}") from None
    raw = record.get("id") if isinstance(record, dict) else None
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise UserError(f"{where}: 'id' is {raw!r}; {_ID_FORMAT}")
    if not 0 <= raw < count:
        raise UserError(f"{where}: id {raw} is not a goal (0..{count - 1}); {_ID_FORMAT}")
    return raw


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
