"""Preconditions and effects of every action of the allow-lists, one small function each.

Each function raises ``Failure`` with a sentence a reader can act on ("the fridge is closed;
Open it first") and otherwise changes the state. Properties come from the scene, so an
original-layout folder's objects obey the same rules as ours.
"""

from __future__ import annotations

from collections.abc import Callable

from toolbench.tasks.virtual_home.household import MAX_HELD, Failure, State, is_room
from toolbench.tasks.virtual_home.vocab import ACTION_BY_NAME, has

EVENT_ACTIONS = frozenset({"LookAt", "Read", "Drink", "Type", "Pull", "Push"})


def apply(state: State, name: str, args: list[str]) -> None:
    """Check the call's shape and objects, then run the action's own rule."""
    action = ACTION_BY_NAME.get(name)
    if action is None:
        raise Failure(f"the household has no action {name!r}")
    if len(args) != len(action.needs):
        raise Failure(f"{name} takes {len(action.needs)} object(s), got {len(args)}")
    for arg, need in zip(args, action.needs, strict=True):
        if arg not in state.loc and not (need == "place" and is_room(arg, state.scene)):
            raise Failure(f"there is no {arg} in this home")
        if arg in state.loc and not has(state.scene.props[arg], need):
            raise Failure(f"{arg} cannot be used with {name} (it is not {need})")
    if state.sitting is not None and name in _NEEDS_STANDING:
        raise Failure(f"the agent is sitting on the {state.sitting}; StandUp first")
    _RULES[name](state, *args)
    state.touched.setdefault(name, set()).update(args)
    if name in EVENT_ACTIONS:
        state.events.add((name, args[0]))


def _reach(state: State, name: str) -> None:
    if not state.reachable(name):
        where = state.room_of(name)
        hint = f"it is in the {where}" if where != state.room else f"Find or WalkTo the {name}"
        raise Failure(f"{name} is not within reach ({hint})")


def _in_room(state: State, name: str) -> None:
    if state.loc[name][0] not in ("held", "worn") and state.room_of(name) != state.room:
        raise Failure(f"{name} is not in the {state.room} (it is in the {state.room_of(name)})")


def _free_hand(state: State, why: str) -> None:
    if len(state.held) >= MAX_HELD:
        raise Failure(f"both hands are full ({', '.join(state.held)}); {why} needs a free hand")


def walk_to(state: State, target: str) -> None:
    if is_room(target, state.scene):
        state.room, state.near = target, None
        return
    if state.loc[target][0] in ("held", "worn"):
        return  # already with the agent
    state.room, state.near = state.room_of(target), target


def find(state: State, target: str) -> None:
    _in_room(state, target)
    if state.loc[target][0] not in ("held", "worn"):
        state.near = target


def look(state: State, target: str) -> None:
    _in_room(state, target)


def grab(state: State, target: str) -> None:
    kind = state.loc[target][0]
    if kind == "held":
        raise Failure(f"{target} is already in hand")
    if kind == "worn":
        raise Failure(f"{target} is being worn; TakeOff first")
    _reach(state, target)
    closed = state.closed_around(target)
    if closed:
        raise Failure(f"{target} is inside the closed {closed}; Open it first")
    _free_hand(state, "Grab")
    state.loc[target] = ("held", "")


def put(state: State, thing: str, place: str) -> None:
    if state.loc[thing][0] != "held":
        raise Failure(f"{thing} is not in hand; Grab it first")
    if thing == place or state.loc[place][0] in ("held", "worn"):
        raise Failure(f"cannot put {thing} on or into {place}, which is held or worn")
    _reach(state, place)
    props = state.scene.props[place]
    is_container = "container" in props
    if is_container and "openable" in props and "open" not in state.flags[place]:
        raise Failure(f"the {place} is closed; Open it first")
    state.loc[thing] = ("in" if is_container else "on", place)


def put_on(state: State, thing: str) -> None:
    kind = state.loc[thing][0]
    if kind == "worn":
        raise Failure(f"{thing} is already worn")
    if kind != "held":
        raise Failure(f"{thing} is not in hand; Grab it first")
    state.loc[thing] = ("worn", "")


def take_off(state: State, thing: str) -> None:
    if state.loc[thing][0] != "worn":
        raise Failure(f"{thing} is not being worn")
    _free_hand(state, "TakeOff")
    state.loc[thing] = ("held", "")


def _toggle(flag: str, value: bool, verb: str) -> Callable[[State, str], None]:
    def rule(state: State, thing: str) -> None:
        _reach(state, thing)
        flags = state.flags[thing]
        if (flag in flags) == value:
            raise Failure(f"{thing} is already {verb}")
        if verb == "open":
            _free_hand(state, "Open")
            if "on" in flags:
                raise Failure(f"{thing} is running; SwitchOff first")
        if verb == "on" and "openable" in state.scene.props[thing] and "open" in flags:
            raise Failure(f"{thing} is open; Close it first")
        (flags.add if value else flags.discard)(flag)

    return rule


def _water_near(state: State, thing: str) -> bool:
    if "water" in state.scene.props[thing]:
        return True
    return any("water" in state.scene.props[w] and state.reachable(w) for w in state.loc)


def clean_rule(kind: str) -> Callable[[State, str], None]:
    def rule(state: State, thing: str) -> None:
        _reach(state, thing)
        flags = state.flags[thing]
        if kind == "Scrub":
            flags.add("scrubbed")
            return
        if not _water_near(state, thing):
            raise Failure(f"{kind} needs water: be at a sink, bathtub or toilet")
        if kind == "Wash" or "scrubbed" in flags:
            flags.discard("dirty")
            flags.discard("scrubbed")

    return rule


def wipe(state: State, thing: str) -> None:
    _reach(state, thing)
    if not any("wiper" in state.scene.props[h] for h in state.held):
        raise Failure(f"Wipe needs a rag, sponge or towel in hand to wipe the {thing}")
    state.flags[thing].discard("dirty")


def use_near(state: State, thing: str) -> None:
    _reach(state, thing)


def use_held(state: State, thing: str) -> None:
    if state.loc[thing][0] != "held":
        raise Failure(f"{thing} must be in hand; Grab it first")


def sit(state: State, seat: str) -> None:
    if state.sitting is not None:
        raise Failure(f"already sitting on the {state.sitting}")
    _reach(state, seat)
    state.sitting = seat


def stand_up(state: State) -> None:
    if state.sitting is None:
        raise Failure("the agent is not sitting")
    state.sitting = None


# Actions that move the agent (or need its whole body): not while sitting.
_NEEDS_STANDING = frozenset({"WalkTo", "Find", "Pull", "Push", "Sit"})
_RULES: dict[str, Callable[..., None]] = {
    "WalkTo": walk_to,
    "Find": find,
    "TurnTo": look,
    "LookAt": look,
    "Grab": grab,
    "Put": put,
    "PutOn": put_on,
    "TakeOff": take_off,
    "Open": _toggle("open", True, "open"),
    "Close": _toggle("open", False, "closed"),
    "SwitchOn": _toggle("on", True, "on"),
    "SwitchOff": _toggle("on", False, "off"),
    "Scrub": clean_rule("Scrub"),
    "Rinse": clean_rule("Rinse"),
    "Wash": clean_rule("Wash"),
    "Wipe": wipe,
    "Pull": use_near,
    "Push": use_near,
    "Read": use_held,
    "Drink": use_held,
    "Sit": sit,
    "StandUp": stand_up,
    "Type": use_near,
}
