"""web_shop's judge of an episode, shared by the task (a model's turns) and its agent world (an
agent's ``search``/``click`` calls): the step limit and the outcome of a session as it ended.
A module of its own so that the world (``agent_world.py``) scores with the task's rules without
importing the task, and the task builds the world without a cycle.
"""

from __future__ import annotations

from toolbench.tasks.web_shop.world import Session
from toolbench.types import Outcome, Status

MAX_STEPS = 25  # the original evaluator's max_steps


def episode_outcome(session: Session, turns: int) -> Outcome:
    """The episode's outcome after ``turns`` turns: no purchase scores 0; a purchase scores
    its reward (``purchase_match_rate`` 1 only for an exact match)."""
    if session.outcome is None:
        return Outcome(
            Status.SCORED, False, {"reward": 0.0, "purchase_match_rate": 0.0,
            "mean_turns": float(turns)}, f"no purchase in {turns} turns",
            {"goal": session.goal.id},
        )  # fmt: skip
    parts = session.outcome
    value = parts.reward
    details = {"goal": session.goal.id, "bought": session.bought, "options": dict(session.options),
               "reward_parts": parts.as_json()}  # fmt: skip
    message = "" if value == 1.0 else f"bought {session.bought}: reward {value:.3f}"
    metrics = {
        "reward": value,
        "purchase_match_rate": float(value == 1.0),
        "mean_turns": float(turns),
    }
    return Outcome(Status.SCORED, True, metrics, message, details)
