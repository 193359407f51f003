"""Which actions a chore cannot be done without: what tool-removal twins take away.

Why: an awareness twin must lack an action the request truly needs, not one another route
replaces (``Find`` and ``WalkTo`` both bring the agent near; ``Wash``, or ``Scrub`` then
``Rinse``, both clean). The goals name the end state, and each predicate that the scene's start
does not already satisfy can be made true only by the actions listed here: only ``Put`` places
an object on or in something, only ``Grab`` puts a free object in hand, only ``PutOn`` wears,
and so on. Cleaning has several routes, so its whole group is one removal.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbench.tasks.virtual_home.goals import GOAL_PATTERN
from toolbench.tasks.virtual_home.world import Scene

CLEANING = ("Wash", "Scrub", "Rinse", "Wipe")
_TOGGLES = {"OPEN": ("open", "Open", "Close"), "SWITCHED_ON": ("on", "SwitchOn", "SwitchOff")}


def _group(negated: bool, predicate: str, a: str, scene: Scene) -> tuple[str, ...]:
    """The actions that alone can make one goal true from the scene's start (empty: none is
    needed, or the start already has it)."""
    start = scene.loc.get(a, ("", None))[0]
    flags = scene.flags.get(a, frozenset())
    if predicate in ("ON", "IN") and not negated:
        return ("Put",)
    if predicate == "HELD" and not negated and start not in ("held", "worn"):
        return ("Grab",)
    if predicate == "WORN" and not negated and start != "worn":
        return ("PutOn",)
    if predicate in _TOGGLES:
        flag, on, off = _TOGGLES[predicate]
        if negated == (flag in flags):  # the goal differs from the start
            return (off,) if negated else (on,)
    if predicate == "CLEAN" and not negated and "dirty" in flags:
        return CLEANING
    if predicate == "SITTING" and negated == (scene.sitting == a):
        return ("StandUp",) if negated else ("Sit",)
    if predicate == "DONE":
        return (a,)
    return ()


def needed_actions(goals: Sequence[str], scene: Scene) -> list[tuple[str, ...]]:
    """Groups of action names (as the docs name them); without every action of any one group
    no plan can meet the goals in this scene."""
    groups: list[tuple[str, ...]] = []
    for goal in goals:
        match = GOAL_PATTERN.match(goal)
        if match is None:
            continue
        negated, predicate, a, _ = match.groups()
        group = _group(bool(negated), predicate, a, scene)
        if group and group not in groups:
            groups.append(group)
    return groups
