"""Seeded generator for virtual_home test and training data, and our demonstrations.

Each record is ``{"prompt", "completion": [1-3 gold plans], "slots", "goal", "scene",
"chore", "room"}``: ``slots`` maps each object the chore is about to the query words naming
it; ``goal`` lists the predicates derived from the first gold's run in ``scene`` (every other
gold is kept only if it runs and meets them too); ``scene`` is the household the plan runs
in, built per record from the chore's rooms, its objects' starting places and a few
distractors. Output is a pure function of (split, n, seed), so ``data generate`` rewrites
v0 byte for byte.
"""

from __future__ import annotations

import json
import random
from typing import Any

from toolbench.kinds.pools import generate_unique
from toolbench.tasks.virtual_home.chores import CHORES, Chore
from toolbench.tasks.virtual_home.goals import derive_goals, unmet
from toolbench.tasks.virtual_home.vocab import OBJECTS, ROOMS, valid_object_lists
from toolbench.tasks.virtual_home.world import Loc, Scene, run_plan

TASK = "virtual_home"
DEFAULT_TEST_SIZE = 160
DEFAULT_SEED = 0
DEMOS_PER_CHORE = 2


def _variants(chore: Chore) -> list[list[str]]:
    """Every route of the chore: three ways of getting around, each with and without the
    chore's independent step swaps."""
    plans: list[list[str]] = []
    orders = [list(range(len(chore.steps)))]
    for a, b in chore.swaps:
        order = list(range(len(chore.steps)))
        order[a], order[b] = order[b], order[a]
        orders.append(order)
    for style in (0, 1, 2):
        for order in orders:
            lines = chore.plan(style, order)
            if lines not in plans:
                plans.append(lines)
    return plans


def _objects_of(plans: list[list[str]]) -> list[str]:
    names: dict[str, None] = {}
    for plan in plans:
        for line in plan:
            inside = line[line.index("(") + 1 : -1]
            names.update(dict.fromkeys(a.strip() for a in inside.split(",") if a.strip()))
    return [name for name in names if name in OBJECTS]


def _scene(rng: random.Random, chore: Chore, used: list[str]) -> Scene:
    """The chore's rooms with all their furniture, its objects where the chore says they
    start, and up to three distractors on surfaces of those rooms."""
    rooms = sorted(
        {OBJECTS[name][0] for name in used} | {OBJECTS[p][0] for p, _ in _parents(chore)}
    )
    loc: dict[str, Loc] = {}
    for name, (room, kinds) in OBJECTS.items():
        if room in rooms and "grabbable" not in kinds and name not in chore.places:
            loc[name] = ("room", room)
    for name, place in chore.places.items():
        loc[name] = place
    surfaces: dict[str, list[str]] = {room: [] for room in rooms}
    for n in sorted(loc):
        if loc[n][0] == "room" and "surface" in OBJECTS[n][1]:
            surfaces[loc[n][1]].append(n)
    for name in used:
        if name not in loc:
            loc[name] = ("on", surfaces[OBJECTS[name][0]][0])
    spare = [n for n, (room, kinds) in OBJECTS.items()
             if room in rooms and "grabbable" in kinds and n not in loc]  # fmt: skip
    for name in rng.sample(spare, min(3, len(spare))):
        loc[name] = ("on", rng.choice(surfaces[OBJECTS[name][0]]))
    props = {name: OBJECTS[name][1] for name in loc}
    flags = {name: frozenset(chore.state.get(name, ())) for name in loc}
    start = chore.start_room or rng.choice(ROOMS)
    scene = Scene(ROOMS, start, props, loc, flags, chore.sitting)
    scene.validate()
    return scene


def _parents(chore: Chore) -> list[tuple[str, str]]:
    return [(parent, name) for name, (_, parent) in chore.places.items() if parent]


def _record(rng: random.Random) -> dict[str, Any]:
    chore = rng.choice(CHORES)(rng)
    variants = _variants(chore)
    first = rng.randrange(len(variants))
    order = [variants[first]] + [v for i, v in enumerate(variants) if i != first]
    scene = _scene(rng, chore, _objects_of(variants))
    run = run_plan(scene, order[0])
    if not run.ok:  # a bug in a chore, not bad luck: fail loudly
        raise AssertionError(f"{chore.kind}: gold fails at {run.line!r}: {run.reason}")
    goals = derive_goals(run.state)
    golds = [order[0]]
    for plan in order[1:]:
        other = run_plan(scene, plan)
        if other.ok and not unmet(goals, other.state):
            golds.append(plan)
    count = rng.choice((1, 2, 2, 3))
    return {
        "prompt": chore.query,
        "completion": ["\n".join(plan) for plan in golds[:count]],
        "slots": chore.slots,
        "goal": goals,
        "chore": chore.kind,
        "room": OBJECTS[_objects_of([order[0]])[0]][0],
        "scene": scene.to_json(),
    }


def generate(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records for ``split`` ('test' or 'train'); train never repeats a test query."""
    return generate_unique(TASK, split, n, seed, _record, DEFAULT_TEST_SIZE)


def demonstrations() -> list[tuple[str, str]]:
    """Two demonstrations per chore kind, from their own stream, none a test query."""
    test = {r["prompt"].lower() for r in generate("test", DEFAULT_TEST_SIZE, DEFAULT_SEED)}
    rng = random.Random(f"{TASK}-demonstrations")
    demos: list[tuple[str, str]] = []
    for make in CHORES:
        seen: set[str] = set()
        while len(seen) < DEMOS_PER_CHORE:
            chore = make(rng)
            lines = chore.plan(rng.choice((0, 1, 2)))
            query = chore.query
            if query.lower() not in test and query.lower() not in seen:
                seen.add(query.lower())
                demos.append((query, "\n".join(lines)))
    return demos


def data_files() -> dict[str, str]:
    """valid_object_lists.json, from the same vocabulary as the docs and the scenes."""
    return {"valid_object_lists.json": json.dumps(valid_object_lists(), indent=1) + "\n"}
