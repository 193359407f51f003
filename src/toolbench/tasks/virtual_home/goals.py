"""Goal predicates: what a chore leaves true, derived from a gold plan's run.

A goal is a string such as ``ON(food_bread, kitchen_table)``, ``IN(milk, fridge)``,
``HELD(phone)``, ``WORN(clothes_shirt)``, ``not OPEN(fridge)``, ``SWITCHED_ON(tv)``,
``CLEAN(plate)``, ``SITTING(sofa)``, ``DONE(Read, book)`` or ``AT(bedroom)``. From a gold run:

- every object whose place changed: where it ended (ON/IN/HELD/WORN);
- every object the plan opened or closed, switched, sat on: its final value (so a fridge
  opened to take the milk must be closed again, as the gold left it);
- every object that went from dirty to clean: CLEAN;
- every LookAt/Read/Drink/Type/Pull/Push: DONE (it happened at least once);
- if none of these, the room the agent ended in.

How the agent got there (route, order of independent steps) is not a goal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolbench.tasks.virtual_home.world import State

GOAL_PATTERN = re.compile(r"^(not )?([A-Z_]+)\((\w+)(?:, (\w+))?\)$")


def derive_goals(state: State) -> list[str]:
    """The goal predicates of a finished gold run (sorted, so records are byte-stable)."""
    scene, goals = state.scene, set[str]()
    for name, loc in state.loc.items():
        if loc != scene.loc[name]:
            kind, parent = loc
            if kind in ("on", "in"):
                goals.add(f"{kind.upper()}({name}, {parent})")
            elif kind in ("held", "worn"):
                goals.add(f"{kind.upper()}({name})")
    for actions, flag, predicate in (
        (("Open", "Close"), "open", "OPEN"),
        (("SwitchOn", "SwitchOff"), "on", "SWITCHED_ON"),
    ):
        for name in set().union(*(state.touched.get(a, set()) for a in actions)):
            value = flag in state.flags[name]
            goals.add(f"{'' if value else 'not '}{predicate}({name})")
    for name, flags in scene.flags.items():
        if "dirty" in flags and "dirty" not in state.flags[name]:
            goals.add(f"CLEAN({name})")
    if "Sit" in state.touched or "StandUp" in state.touched:
        if state.sitting:
            goals.add(f"SITTING({state.sitting})")
        seats = state.touched.get("Sit", set()) | ({scene.sitting} if scene.sitting else set())
        for seat in seats - {state.sitting}:
            goals.add(f"not SITTING({seat})")
    goals.update(f"DONE({action}, {name})" for action, name in state.events)
    if not goals:
        goals.add(f"AT({state.room})")
    return sorted(goals)


def holds(goal: str, state: State) -> bool:
    """Whether one goal predicate is true in a final state (unknown objects: false)."""
    match = GOAL_PATTERN.match(goal)
    if match is None:
        raise ValueError(f"not a goal predicate: {goal!r}")
    negated, predicate, a, b = match.groups()
    value = _value(predicate, a, b, state)
    return value != bool(negated)


def _value(predicate: str, a: str, b: str | None, state: State) -> bool:
    if predicate == "AT":
        return state.room == a
    if predicate == "DONE":
        return (a, b or "") in state.events
    if predicate == "SITTING":
        return state.sitting == a
    if a not in state.loc:
        return False
    if predicate in ("ON", "IN"):
        return state.loc[a] == (predicate.lower(), b)
    if predicate in ("HELD", "WORN"):
        return state.loc[a][0] == predicate.lower()
    flag = {"OPEN": "open", "SWITCHED_ON": "on"}.get(predicate)
    if flag is not None:
        return flag in state.flags[a]
    if predicate == "CLEAN":
        return "dirty" not in state.flags[a]
    raise ValueError(f"unknown goal predicate {predicate!r}")


def unmet(goals: Sequence[str], state: State) -> list[str]:
    return [goal for goal in goals if not holds(goal, state)]


def check_goal_syntax(goals: Sequence[str]) -> str | None:
    """The first goal that is not a predicate we know, or None."""
    known = {"AT", "DONE", "SITTING", "ON", "IN", "HELD", "WORN", "OPEN", "SWITCHED_ON", "CLEAN"}
    for goal in goals:
        match = GOAL_PATTERN.match(goal) if isinstance(goal, str) else None
        if match is None or match.group(2) not in known:
            return str(goal)
    return None
