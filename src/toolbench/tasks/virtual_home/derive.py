"""A scene for a record that carries none (an original-layout folder): built from its golds.

The original data has no household, so we build the smallest one in which the gold plans
can run: every object is placed, free-standing, in the room the plan was in when it first
used it; an object first closed, switched off, taken off or cleaned starts open, on, worn or
dirty. Properties come from the folder's own allow-lists (``properties_from_allow_lists``).
If the first gold still does not run there (e.g. it grabs a third object), the world metrics
are undefined for that sample, and the record says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from toolbench.tasks.virtual_home.grounding import AllowLists, ground
from toolbench.tasks.virtual_home.vocab import ROOMS, properties_from_allow_lists
from toolbench.tasks.virtual_home.world import Loc, Scene, parse_call

_START_FLAG = {"Close": "open", "SwitchOff": "on", "Wash": "dirty", "Scrub": "dirty",
               "Rinse": "dirty", "Wipe": "dirty"}  # fmt: skip
_WATER = ("sink", "bathtub", "toilet", "shower", "faucet")


def _is_room(name: str) -> bool:
    return name in ROOMS or name.endswith(("room", "hallway", "garage", "office"))


def derive_scene(labels: Sequence[str], allow: AllowLists) -> Scene:
    props_of = properties_from_allow_lists(allow)
    calls = [parse_call(line) for label in labels for line in ground(label, allow).lines]
    rooms = list(ROOMS)
    start = next((c[1][0] for c in calls if c and c[0] == "WalkTo" and _is_room(c[1][0])), None)
    room = start or "living_room"
    loc: dict[str, Loc] = {}
    flags: dict[str, set[str]] = {}
    sitting: str | None = None
    for call in calls:
        if call is None:
            continue
        action, args = call
        for arg in args:
            if _is_room(arg):
                rooms += [] if arg in rooms else [arg]
                room = arg
            elif arg not in loc:
                loc[arg] = ("worn", "") if action == "TakeOff" else ("room", room)
                flag = _START_FLAG.get(action)
                flags[arg] = {flag} if flag else set()
        if action == "StandUp" and sitting is None:
            sitting = next((n for n in loc if "sittable" in props_of.get(n, ())), None)
    props = {
        name: props_of.get(name, frozenset())
        | ({"water"} if any(w in name for w in _WATER) else set())
        for name in loc
    }
    frozen: Mapping[str, frozenset[str]] = {n: frozenset(f) for n, f in flags.items()}
    return Scene(tuple(rooms), start or room, props, loc, frozen, sitting)
