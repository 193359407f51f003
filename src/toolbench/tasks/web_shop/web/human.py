"""A person's web_shop episodes, recorded into a run folder that ``toolbench report`` reads
like a model's (``toolbench web_shop human``).

WebShop reported human experts at 59% success; this is how to measure people on our store.
The person shops in the HTML store (``app.py``); when an episode ends (a purchase, or 25
turns), its actions are replayed through the task's own solve loop (``WebShopTask.solve``,
with a stand-in model that answers each turn with the person's action), and the engine's
``make_record`` turns the outcome into the record. So the record has the very schema, trace,
metrics and prompt hashes of a model's record for the same goal, computed by the same code;
the replay must reach the reward the person saw, or it is a harness bug and is raised.
Records also keep ``pages``: the text of each page the person acted on, in the layout a model
reads.

The goals are the first ``--n`` of the version's test ids, in order, as ``toolbench run
web_shop --limit N`` evaluates them, so ``toolbench report runs/human runs/model`` pairs them.
The run folder is the runner's: the same ``RunStore`` (append-only, chained log), resume (a
restart keeps the episodes already recorded and serves the rest; an episode left half-done is
started again), and the same run.json totals and metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolbench.core.bounded import bounded_text
from toolbench.core.solve import Recorder, SampleState
from toolbench.models.base import ModelOutputError
from toolbench.runner.engine import PreparedTask, SessionStats, guarded_solve, make_record
from toolbench.runner.store import RunStore, read_run_info
from toolbench.tasks.web_shop.web.episode import Episode, Turn
from toolbench.types import Generation, GenerationRequest, Status

MAX_PAGE_CHARS = 8_000  # one recorded page; the store's pages are far shorter


class PlayedModel:
    """A stand-in model answering each turn of the task's solve loop with the person's
    action for it (and the seconds they took as its latency)."""

    name = "human"
    cacheable = False

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._turns = list(turns)
        self.used = 0

    async def generate(self, request: GenerationRequest) -> Generation:
        if self.used >= len(self._turns):
            raise ModelOutputError(f"the person took no action at {request.step}")
        turn = self._turns[self.used]
        self.used += 1
        return Generation(text=turn.action, latency_s=turn.seconds, finish_reason="human")

    async def aclose(self) -> None:
        return None


async def episode_record(prepared: PreparedTask, episode: Episode, person: str) -> dict[str, Any]:
    """The run-log record of a finished episode, made by the task's solve loop."""
    sample = next(s for s in prepared.samples if s.id == str(episode.goal_id))
    state = SampleState(sample=sample, epoch=0)
    played = PlayedModel(episode.turns)
    outcome = await guarded_solve(
        lambda: prepared.task.solve(state, Recorder(played, state), prepared.resources), state
    )
    reward = outcome.metrics.get("reward", 0.0)
    if (
        outcome.status is not Status.SCORED
        or played.used != len(episode.turns)
        or reward != episode.reward
    ):
        raise RuntimeError(
            f"goal {episode.goal_id}: replaying the person's {len(episode.turns)} actions gave "
            f"{outcome.status.value} with reward {reward} after {played.used} actions, not the "
            f"reward {episode.reward} the store showed ({outcome.message})"
        )
    record = make_record(state, outcome)
    record["person"] = person
    record["pages"] = [bounded_text(turn.page, MAX_PAGE_CHARS) for turn in episode.turns]
    return record


class HumanRecording:
    """The goal order, the run log and progress of one person's recording; the web app's
    goal picker and ``on_over`` hook."""

    reuse_open = True  # reloading / returns to the episode in progress

    def __init__(
        self, prepared: PreparedTask, store: RunStore, done: set[str], person: str
    ) -> None:
        self.prepared = prepared
        self.store = store
        self.person = person
        self.order = [s.id for s in prepared.samples]
        self.done = {i for i in done if i in set(self.order)}
        self.stats = SessionStats()

    @property
    def complete(self) -> bool:
        return len(self.done) == len(self.order)

    def next_goal(self) -> int | None:
        for sample_id in self.order:
            if sample_id not in self.done:
                return int(sample_id)
        return None

    def allows(self, goal: int) -> bool:
        return str(goal) in self.order and str(goal) not in self.done

    def has_next(self) -> bool:
        """False once every goal is recorded: the server then stops after the page it is
        sending (``toolbench web_shop human``'s ``after_over``), so no page links on."""
        return not self.complete

    def ended(self) -> list[tuple[str, str]]:
        """Where the run is, and the commands that read it and pair it with a model's run of
        the same goals (the first N test ids of the version recorded in run.json)."""
        folder, n = self.store.folder, len(self.order)
        config = read_run_info(folder).get("config", {})
        version = config.get("version", "v0") if isinstance(config, dict) else "v0"
        flag = "" if version == "v0" else f" --version {version}"
        return [
            (
                f"This session is over: all {n} goals are recorded in {folder}, and the shop "
                "server stopped after sending this page, so its links no longer open. You can "
                "close this tab.",
                "",
            ),
            ("See the scores:", f"toolbench report {folder}"),
            (
                "Run a model on the same goals:",
                f"toolbench run web_shop --model MODEL --limit {n}{flag}",
            ),
            ("and compare the two:", f"toolbench report {folder} RUN_FOLDER_OF_THE_MODEL"),
        ]

    async def on_over(self, episode: Episode) -> None:
        """Record the finished episode (appended and flushed at once: a kill keeps it)."""
        if str(episode.goal_id) in self.done:
            return
        record = await episode_record(self.prepared, episode, self.person)
        self.store.append(record)
        self.stats.done += 1  # not stats.count: a person's actions are no model calls
        self.stats.counts[record["status"]] += 1
        self.done.add(str(episode.goal_id))

    def note(self) -> str:
        return f"{self.person}: {len(self.done)} of {len(self.order)} episodes recorded"
