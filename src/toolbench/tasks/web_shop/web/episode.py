"""One shopping episode with the original's turn cap, shared by the HTML store, the JSON API,
the human recorder and the gymnasium environment.

``Session`` (``world.py``) knows the shop's rules but not the evaluator's 25-turn limit; the
limit lives in the task's solve loop. People and agent frameworks drive a session directly, so
this wrapper adds the same limit (``task.MAX_STEPS``) and keeps what a record needs: each
action with the page text it was taken on and how long it took. It adds no rule of its own:
every action goes to ``Session.step`` stripped of surrounding whitespace, exactly as the
task's solve loop passes a model's reply, so a replay of the actions through the task reaches
the same pages and reward.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolbench.tasks.web_shop.pages import Page
from toolbench.tasks.web_shop.task import MAX_STEPS
from toolbench.tasks.web_shop.world import Session, StepResult

OVER = "the episode is over"


@dataclass(frozen=True)
class Turn:
    """One action as taken: the text sent, the page text it answered, seconds spent on it."""

    action: str
    page: str
    seconds: float


@dataclass
class Episode:
    """A session plus the turn cap. ``over`` once something was bought (``bought``) or the
    turns ran out (``truncated``); later steps change nothing and are not counted."""

    session: Session
    max_turns: int = MAX_STEPS
    clock: Callable[[], float] = time.monotonic
    turns: list[Turn] = field(default_factory=list)
    truncated: bool = False
    _shown_at: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self._shown_at = self.clock()

    @property
    def goal_id(self) -> int:
        return self.session.goal.id

    @property
    def bought(self) -> bool:
        return self.session.done

    @property
    def over(self) -> bool:
        return self.session.done or self.truncated

    @property
    def reward(self) -> float:
        """The purchase reward (0 until something is bought)."""
        outcome = self.session.outcome
        return 0.0 if outcome is None else outcome.reward

    @property
    def observation(self) -> str:
        return self.session.observation

    @property
    def page(self) -> Page:
        return self.session.page

    def step(self, action: str) -> StepResult:
        """Apply ``action`` (any text; stripped, as the task strips a reply) through
        ``Session.step``; a no-op once over."""
        if self.over:
            page = self.session.page
            return StepResult(self.session.observation, page, 0.0, self.bought,
                              {"valid": False, "reason": OVER})  # fmt: skip
        action = action.strip()
        shown = self.session.observation
        result = self.session.step(action)
        now = self.clock()
        self.turns.append(Turn(action, shown, round(max(0.0, now - self._shown_at), 3)))
        self._shown_at = now
        if not result.done and len(self.turns) >= self.max_turns:
            self.truncated = True
        return result

    def summary(self) -> dict[str, Any]:
        """What ended the episode, for pages and API answers."""
        outcome = self.session.outcome
        return {
            "goal": self.goal_id,
            "turns": len(self.turns),
            "max_turns": self.max_turns,
            "done": self.over,
            "bought": self.session.bought,
            "truncated": self.truncated,
            "reward": self.reward,
            "reward_parts": None if outcome is None else outcome.as_json(),
        }
