"""A person as the model of a web_shop run (``toolbench web_shop human``).

WebShop reported human experts at 59% success; this is how to measure people on our store.
A person's episodes are an ordinary run of the web_shop task: the runner's lifecycle chooses,
locks and resumes the folder and writes run.json, and the task's own solve loop renders each
turn's page, applies the action and scores the purchase exactly as for a model. ``HumanModel``
is that run's model: its answer to a turn is the action the person takes in the browser
(``app.py``'s store: a button posts ``click[...]``, the search box ``search[...]``), with the
seconds they took as its latency. So a person's records have the schema, trace, metrics and
prompt hashes of a model's records for the same goals, computed by the same code, and
``toolbench report runs/human runs/model`` pairs them (the goals are the first ``--n`` test
ids, as ``toolbench run web_shop --limit N`` evaluates them).

The page the person sees is drawn from a mirror of the task's episode (an ``Episode`` over a
session of the same goal and layout, kept by ``ShopDesk``). Each action taken there is handed
to the waiting ``generate``, which checks that it was the same turn of the same goal, taken on
the very page the task's request shows. A difference would be a harness bug: the sample is then
an infra error (not scored, retried when the command is run again), never a record of the
person.

The runner's event loop and the web server's run in different threads (``cli/web_shop.py``
ties them): the web side reaches the model only through ``hand`` and ``stop``, which go through
the runner loop's ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException

from toolbench.tasks.web_shop.web.episode import Episode, Turn
from toolbench.tasks.web_shop.world import StepResult, Store
from toolbench.types import Generation, GenerationRequest, InfraError

TITLE = "toolbench web shop · human baseline"


@dataclass(frozen=True)
class Handed:
    """One action as the person took it: which goal, which turn of its episode, and the turn
    (the action, the page text it was taken on, the seconds it took)."""

    goal: int
    number: int
    turn: Turn


_STOP = object()  # handed by ``stop``: the shop server has stopped


class HumanModel:
    """The model whose answers come from a person in the browser (see the module docstring).

    ``fit`` (the runner calls it once the data is loaded) gives it the goals in the run's
    order and the store; ``on_first_turn`` is called (in the runner's thread) when the run
    first asks for an action, i.e. when there is something for the person to do."""

    cacheable = False

    def __init__(self, person: str, on_first_turn: Callable[[], None] | None = None) -> None:
        self.person = person
        self.name = f"human:{person}"
        self._on_first_turn = on_first_turn
        self._prepared: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handed: asyncio.Queue[Handed | object] | None = None
        self._lock = threading.Lock()
        self._stopped = False
        self.first_goal: int | None = None  # the goal of the run's first request

    def fit(self, prepared: Sequence[Any]) -> dict[str, Any]:
        """Keep the web_shop task's prepared data: its goals, store and page layout."""
        names = [p.task.name for p in prepared]
        if names != ["web_shop"]:
            raise ValueError(f"a person shops the web_shop task alone, not {names}")
        self._prepared = prepared[0]
        return {"person": self.person}

    @property
    def goals(self) -> list[int]:
        return [int(sample.id) for sample in self._fitted().samples]

    @property
    def store(self) -> Store:
        store: Store = self._fitted().data.runtime.store
        return store

    @property
    def layout(self) -> str:
        return str(self._fitted().data.runtime.layout)

    @property
    def version(self) -> str:
        return str(self._fitted().data.version)

    @property
    def folder(self) -> Path | None:
        """The run folder, once the runner has chosen it."""
        if self._prepared is None:
            return None
        run_dir: Path | None = self._prepared.resources.run_dir
        return run_dir

    def _fitted(self) -> Any:
        if self._prepared is None:
            raise RuntimeError("HumanModel: the runner did not call fit() with the prepared task")
        return self._prepared

    async def generate(self, request: GenerationRequest) -> Generation:
        goal, number = _turn_of(request)
        handed = self._start(goal)
        item = await handed.get()
        if item is _STOP or not isinstance(item, Handed):
            raise asyncio.CancelledError("the shop server stopped")
        page = request.sample.query if request.sample is not None else None
        if (item.goal, item.number, item.turn.page) != (goal, number, page):
            raise InfraError(
                f"web_shop human: the person's action {item.number} of goal {item.goal} does "
                f"not answer turn {number} of goal {goal} on the page the task shows (a "
                "harness bug; run the same command again to shop this goal again)"
            )
        turn = item.turn
        return Generation(text=turn.action, latency_s=turn.seconds, finish_reason="human")

    def _start(self, goal: int) -> asyncio.Queue[Handed | object]:
        """The queue of handed actions; made on the first request, which wakes the web side."""
        with self._lock:
            first = self._handed is None
            if self._handed is None:
                self._loop = asyncio.get_running_loop()
                self._handed = asyncio.Queue()
                self.first_goal = goal
                if self._stopped:
                    self._handed.put_nowait(_STOP)
            handed = self._handed
        if first and self._on_first_turn is not None:
            self._on_first_turn()
        return handed

    def hand(self, item: Handed) -> bool:
        """Give the run the person's action (from any thread); False if the run is over."""
        return self._put(item)

    def stop(self) -> None:
        """The shop server stopped (from any thread): the action being waited for will not
        come, so the run ends as interrupted (a later run continues it)."""
        with self._lock:
            self._stopped = True
        self._put(_STOP)

    def _put(self, item: object) -> bool:
        with self._lock:
            loop, handed = self._loop, self._handed
        if loop is None or handed is None:
            return False
        try:
            loop.call_soon_threadsafe(handed.put_nowait, item)
        except RuntimeError:  # the run's loop has closed: the run is over
            return False
        return True

    async def aclose(self) -> None:
        return None


def _turn_of(request: GenerationRequest) -> tuple[int, int]:
    """(goal, turn number) of a web_shop request (step ``turn-N``)."""
    sample, step = request.sample, request.step
    prefix, _, number = step.partition("-")
    if sample is None or prefix != "turn" or not number.isdigit():
        raise InfraError(f"web_shop human: a request for {step!r} is not a web_shop turn")
    return int(sample.id), int(number)


class ShopDesk:
    """The web side of a recording: which goal the person shops (the run's order, from the
    goal its first request asked for), the mirror episode they act in, and each action handed
    to the run. The store's goal picker (``app.GoalPicker``) and its ``step`` hook."""

    reuse_open = True  # reloading / returns to the episode in progress

    def __init__(self, model: HumanModel) -> None:
        self.model = model
        self.person = model.person
        self.order = model.goals
        first = model.first_goal
        self.position = self.order.index(first) if first in self.order else len(self.order)
        self.current: Episode | None = None

    def next_goal(self) -> int | None:
        return self.order[self.position] if self.has_next() else None

    def allows(self, goal: int) -> bool:
        return False  # the goals come in the run's order; none is opened by id

    def has_next(self) -> bool:
        """False once the last goal's episode has ended: the server then stops after the page
        it is sending (``toolbench web_shop human``'s ``after_over``), so no page links on."""
        return self.position < len(self.order)

    def step(self, episode: Episode, action: str) -> StepResult:
        """Apply the person's action to the mirror and hand it to the run."""
        if episode.over:
            return episode.step(action)  # a no-op: e.g. Buy Now sent twice
        stale = self.current is not None and self.current is not episode
        if stale or episode.goal_id != self.next_goal():
            raise HTTPException(409, "this episode is not the one being recorded; open / for "
                                "the current goal")  # fmt: skip
        self.current = episode
        before = len(episode.turns)
        result = episode.step(action)
        if len(episode.turns) > before:
            handed = Handed(episode.goal_id, len(episode.turns), episode.turns[-1])
            if not self.model.hand(handed):
                raise HTTPException(409, "the recording is over; nothing more is recorded")
        if episode.over:
            self.position += 1
            self.current = None
        return result

    def ended(self) -> list[tuple[str, str]]:
        """Where the run is, and the commands that read it and pair it with a model's run of
        the same goals (the first N test ids of the version recorded)."""
        folder, n = self.model.folder, len(self.order)
        version = self.model.version
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

    def note(self) -> str:
        """The progress line: episodes finished (each is in the run log once the run has
        taken its last action, at once)."""
        return f"{self.person}: {self.position} of {len(self.order)} episodes recorded"
