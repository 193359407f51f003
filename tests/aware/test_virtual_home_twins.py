"""virtual_home tool-removal twins: they lack an action every route of the chore needs."""

from __future__ import annotations

import functools

from toolbench.aware.manipulate.slot_removal import remove_slots
from toolbench.aware.manipulate.tool_removal import remove_tools
from toolbench.aware.schema import Instance
from toolbench.aware.sources.tasks import load_task
from toolbench.tasks.virtual_home.needed import CLEANING, needed_actions
from toolbench.tasks.virtual_home.world import Scene


@functools.cache
def _instances() -> tuple[Instance, ...]:
    return tuple(load_task("virtual_home"))


def test_every_chore_gets_a_tool_twin_missing_an_action_every_gold_uses() -> None:
    originals = {i.id: i for i in _instances()}
    result = remove_tools(list(originals.values()), seed=0)
    assert not result.skipped and len(result.instances) == len(originals) == 160
    kinds = set()
    for twin in result.instances:
        removed = twin.provenance.removed_apis
        offered = {api.name for api in twin.apis}
        assert removed and not set(removed) & offered
        assert offered | set(removed) == {api.name for api in originals[twin.twin_id].apis}
        assert not {"WalkTo", "Find"} & set(removed)  # each replaces the other
        for gold in twin.gold_calls:  # every route of the chore uses a removed action
            assert any(f"Agent.{name}(" in gold for name in removed), (twin.id, gold)
        assert ", ".join(removed) in twin.provenance.missing
        kinds.add(tuple(removed))
    assert ("Put",) in kinds and tuple(sorted(CLEANING)) in kinds and len(kinds) >= 8


def test_needed_actions_follow_goals_not_what_the_start_already_has() -> None:
    scene = Scene.from_json({
        "rooms": ["kitchen"], "agent": "kitchen", "objects": {
            "fridge": {"props": ["container", "openable"], "room": "kitchen", "state": ["open"]},
            "plate": {"props": ["grabbable", "cleanable"], "in": "fridge", "state": ["dirty"]},
            "tv": {"props": ["switchable"], "room": "kitchen", "state": ["on"]},
        }})  # fmt: skip
    goals = ["CLEAN(plate)", "not OPEN(fridge)", "SWITCHED_ON(tv)", "HELD(plate)"]
    assert needed_actions(goals, scene) == [CLEANING, ("Close",), ("Grab",)]
    assert needed_actions(["OPEN(fridge)", "AT(kitchen)"], scene) == []


def test_slot_removal_is_skipped_with_its_reason() -> None:
    result = remove_slots(list(_instances()), seed=0)
    assert not result.instances
    assert all("tool removal only" in why for _, why in result.skipped)
