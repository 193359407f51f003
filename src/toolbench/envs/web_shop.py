"""``WebShopEnv``: one shopping episode per ``reset``, one action string per ``step``.

Observations are the page text a model reads in the evaluated task (v0: ``[SEP]``-joined, v1:
the line layout); actions are the model's strings (``search[...]`` / ``click[...]``), applied
through the task's ``Session`` with its quirks, so a policy trained here is judged by the same
rules as ``toolbench run web_shop``. The reward is 0 on every step but the purchase, which
pays the WebShop reward in [0, 1]; ``terminated`` means something was bought, ``truncated``
that 25 turns passed without a purchase (the original evaluator's cap).

Spaces are ``gymnasium.spaces.Text``: observations up to ``MAX_OBSERVATION_CHARS`` over the
characters the store's pages use; actions up to ``MAX_ACTION_CHARS`` over the same characters
(what ``action_space.sample()`` draws from; ``step`` itself accepts any string, as the store
accepts any reply). ``info`` carries what agent frameworks need besides the text: the goal,
the turn count, whether the action was valid (and why not), the page's clickable texts, and
at the purchase the reward's parts.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium
from gymnasium import spaces

from toolbench.tasks.web_shop import TASK
from toolbench.tasks.web_shop.pages import LAYOUTS
from toolbench.tasks.web_shop.task import MAX_STEPS
from toolbench.tasks.web_shop.web.app import MAX_ACTION_CHARS
from toolbench.tasks.web_shop.web.episode import Episode
from toolbench.tasks.web_shop.world import StepResult, Store

MAX_OBSERVATION_CHARS = 16_384  # the longest page of the shop is about 2,000 characters


def store_charset(store: Store) -> str:
    """Every character the store's pages can show: printable ASCII plus whatever the
    catalogue and the instructions use (e.g. the category separator)."""
    chars = set(string.printable)
    for product in store.products:
        for text in (product.title, product.description, product.price_text, *product.bullets):
            chars.update(text)
        for name, values in product.options.items():
            chars.update(name)
            for value in values:
                chars.update(value)
    for goal in store.goals:
        chars.update(goal.instruction_text)
    return "".join(sorted(chars))


class WebShopEnv(gymnasium.Env[str, str]):
    """See the module docstring. ``goals``: the goal ids ``reset`` draws from when no
    ``options={"goal": i}`` is given (default: the version's test ids)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012 (gymnasium.s class attribute)

    def __init__(
        self,
        version: str = "v0",
        goals: list[int] | None = None,
        max_turns: int = MAX_STEPS,
        render_mode: str | None = None,
    ) -> None:
        if version not in LAYOUTS:
            raise ValueError(f"version must be one of {LAYOUTS}, not {version!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.version, self.max_turns, self.render_mode = version, max_turns, render_mode
        data = TASK.load(version, None)
        self.store: Store = data.runtime.store
        self.goal_ids = list(goals) if goals is not None else [int(s.id) for s in data.samples]
        for goal in self.goal_ids:
            self._check_goal(goal)
        if not self.goal_ids:
            raise ValueError("goals must name at least one goal id")
        charset = store_charset(self.store)
        self.observation_space = spaces.Text(MAX_OBSERVATION_CHARS, min_length=1, charset=charset)
        self.action_space = spaces.Text(MAX_ACTION_CHARS, min_length=0, charset=charset)
        self._episode: Episode | None = None

    def _check_goal(self, goal: Any) -> int:
        if isinstance(goal, bool) or not isinstance(goal, int):
            raise ValueError(f"a goal is an integer id, not {goal!r}")
        if not 0 <= goal < len(self.store.goals):
            raise ValueError(f"goal {goal} does not exist (0..{len(self.store.goals) - 1})")
        return goal

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """A new episode: ``options={"goal": i}``, else a goal drawn from ``goals`` with the
        environment's seeded generator."""
        super().reset(seed=seed)
        goal = (options or {}).get("goal")
        if goal is None:
            goal = self.goal_ids[int(self.np_random.integers(len(self.goal_ids)))]
        session = self.store.new_session(self._check_goal(goal), self.version)
        self._episode = Episode(session, self.max_turns)
        return self._episode.observation, self._info(None)

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        episode = self._episode
        if episode is None:
            raise RuntimeError("call reset() before step()")
        if episode.over:
            raise RuntimeError("the episode is over; call reset() to start another")
        if not isinstance(action, str):
            raise TypeError(f"an action is a string such as 'search[socks]', not {type(action)}")
        result = episode.step(action)
        info = self._info(result)
        return result.observation, float(result.reward), episode.bought, episode.truncated, info

    def _info(self, result: StepResult | None) -> dict[str, Any]:
        episode = self._episode
        assert episode is not None
        page = episode.page
        info: dict[str, Any] = {
            "goal": episode.goal_id,
            "instruction": page.instruction,
            "turns": len(episode.turns),
            "page": page.kind,
            "clickables": [key for key in page.clickables if key != "search"],
        }
        if result is not None:
            info.update(result.info)
        return info

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._episode is None:
            return None
        return self._episode.observation
