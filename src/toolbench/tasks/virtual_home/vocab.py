"""The household vocabulary: rooms, object classes with their properties, and the actions.

One table is the source of truth for three things that must agree: the allow-lists of
``valid_object_lists.json`` (which objects each action accepts), the API docs, and the
properties the symbolic world checks (a ``Grab`` needs a grabbable object). For an
original-layout folder, whose objects may not be ours, ``properties_from_allow_lists``
reads the same properties back out of that folder's allow-lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ROOMS = ("kitchen", "bathroom", "bedroom", "living_room", "home_office", "dining_room")

# class -> (room it belongs to, properties). Furniture is everything not grabbable.
OBJECTS: dict[str, tuple[str, frozenset[str]]] = {}


def _add(room: str, props: str, *names: str) -> None:
    for name in names:
        OBJECTS[name] = (room, frozenset(props.split()))


# kitchen
_add("kitchen", "surface cleanable", "kitchen_counter", "kitchen_table")
_add("kitchen", "container openable", "kitchen_cabinet", "fridge")
_add("kitchen", "container openable switchable", "microwave", "dishwasher")
_add("kitchen", "surface switchable", "stove", "coffee_maker")
_add("kitchen", "container water cleanable", "sink")
_add("kitchen", "grabbable cleanable", "plate", "bowl", "pot", "pan", "fork", "knife", "spoon")
_add("kitchen", "grabbable cleanable drinkable", "mug", "water_glass")
_add("kitchen", "grabbable drinkable", "milk", "juice")
_add("kitchen", "grabbable", "food_bread", "food_apple", "food_cheese", "dish_soap")
_add("kitchen", "grabbable wiper", "sponge", "rag")
# bathroom
_add("bathroom", "surface cleanable", "bathroom_counter")
_add("bathroom", "surface", "towel_rack")
_add("bathroom", "container openable", "bathroom_cabinet")
_add("bathroom", "container openable switchable", "washing_machine")
_add("bathroom", "container water cleanable", "bathtub", "bathroom_sink")
_add("bathroom", "sittable water cleanable", "toilet")
_add("bathroom", "cleanable", "mirror")
_add("bathroom", "grabbable cleanable", "toothbrush")
_add("bathroom", "grabbable", "toothpaste", "soap", "shampoo", "comb")
_add("bathroom", "grabbable wiper", "towel")
# bedroom
_add("bedroom", "surface sittable", "bed")
_add("bedroom", "container openable", "dresser", "closet")
_add("bedroom", "surface", "nightstand")
_add("bedroom", "container movable", "laundry_basket")
_add("bedroom", "switchable", "lamp")
_add("bedroom", "grabbable wearable", "clothes_shirt", "clothes_pants", "clothes_jacket")
_add("bedroom", "grabbable wearable", "clothes_dress", "shoes", "hat", "glasses")
_add("bedroom", "grabbable", "pillow", "blanket", "phone")
_add("bedroom", "grabbable readable", "book")
# living room
_add("living_room", "surface sittable", "sofa")
_add("living_room", "sittable movable", "armchair")
_add("living_room", "surface cleanable", "coffee_table")
_add("living_room", "surface", "bookshelf")
_add("living_room", "switchable", "tv", "floor_lamp")
_add("living_room", "openable", "window")
_add("living_room", "grabbable", "remote_control", "plant")
_add("living_room", "grabbable readable", "magazine", "newspaper")
# home office
_add("home_office", "surface cleanable", "desk")
_add("home_office", "sittable movable", "office_chair")
_add("home_office", "switchable", "computer", "printer", "desk_lamp")
_add("home_office", "typeable", "keyboard")
_add("home_office", "container openable", "filing_cabinet")
_add("home_office", "surface", "shelf")
_add("home_office", "grabbable switchable", "laptop")
_add("home_office", "grabbable readable", "notebook", "mail")
_add("home_office", "grabbable", "pen", "folder", "stapler", "paper")
# dining room
_add("dining_room", "surface cleanable", "dining_table")
_add("dining_room", "sittable movable", "chair")


@dataclass(frozen=True)
class Action:
    """One ``Agent.<name>`` call: the objects it accepts (by property) and what it does."""

    name: str
    doc: str  # what the call does, for the API doc
    needs: tuple[str, ...] = ()  # per argument, the property ("any" = every object)


ANY, PLACE = "any", "place"  # any object; any room or object (WalkTo)
ACTIONS: tuple[Action, ...] = (
    Action("WalkTo", "walk to a room, or to an object wherever it is", (PLACE,)),
    Action("Find", "locate an object in the current room and step up to it", (ANY,)),
    Action("TurnTo", "turn to face an object in the current room", (ANY,)),
    Action("LookAt", "look at an object in the current room (watching, checking)", (ANY,)),
    Action("Grab", "pick up an object within reach (needs a free hand)", ("grabbable",)),
    Action(
        "Put",
        "put the held object1 on or into object2, which must be within reach",
        ("grabbable", "receptacle"),
    ),
    Action("PutOn", "put on a held piece of clothing", ("wearable",)),
    Action("TakeOff", "take off a piece of clothing being worn (needs a free hand)", ("wearable",)),
    Action("Open", "open something within reach (needs a free hand)", ("openable",)),
    Action("Close", "close something that is open and within reach", ("openable",)),
    Action("SwitchOn", "switch on an appliance or light within reach", ("switchable",)),
    Action("SwitchOff", "switch off an appliance or light within reach", ("switchable",)),
    Action("Scrub", "scrub an object (rinse it afterwards to finish cleaning)", ("cleanable",)),
    Action("Rinse", "rinse an object with water (at a sink, tub or toilet)", ("cleanable",)),
    Action("Wash", "wash an object with water (at a sink, tub or toilet)", ("cleanable",)),
    Action("Wipe", "wipe a surface clean (needs a rag, sponge or towel in hand)", ("wipeable",)),
    Action("Pull", "pull a piece of furniture within reach", ("movable",)),
    Action("Push", "push a piece of furniture within reach", ("movable",)),
    Action("Read", "read something held in hand", ("readable",)),
    Action("Drink", "drink from something held in hand", ("drinkable",)),
    Action("Sit", "sit down on something within reach", ("sittable",)),
    Action("StandUp", "stand up after sitting", ()),
    Action("Type", "type on a keyboard within reach", ("typeable",)),
)
ACTION_BY_NAME = {action.name: action for action in ACTIONS}


def has(props: frozenset[str], need: str) -> bool:
    """Whether an object with ``props`` is accepted where an action ``need``s a property."""
    if need in (ANY, PLACE):
        return True
    if need == "receptacle":
        return "surface" in props or "container" in props
    if need == "wipeable":
        return "cleanable" in props and ("surface" in props or "water" not in props)
    return need in props


def allowed(need: str) -> list[str]:
    names = [name for name, (_, props) in OBJECTS.items() if has(props, need)]
    return sorted(names + list(ROOMS)) if need == PLACE else sorted(names)


def valid_object_lists() -> dict[str, dict[str, list[str]]]:
    """Our ``valid_object_lists.json``, derived from the vocabulary table."""
    lists: dict[str, dict[str, list[str]]] = {}
    for action in ACTIONS:
        key = f"Agent.{action.name}"
        if len(action.needs) == 2:
            lists[key] = {"object1": allowed(action.needs[0]), "object2": allowed(action.needs[1])}
        elif action.needs:
            lists[key] = {"object": allowed(action.needs[0])}
        else:
            lists[key] = {}
    return lists


# Which allow-list of an original folder implies which property (reading the table backwards).
_IMPLIES = {
    "Agent.Grab": "grabbable", "Agent.PutOn": "wearable", "Agent.TakeOff": "wearable",
    "Agent.Open": "openable", "Agent.Close": "openable", "Agent.SwitchOn": "switchable",
    "Agent.SwitchOff": "switchable", "Agent.Scrub": "cleanable", "Agent.Rinse": "cleanable",
    "Agent.Wash": "cleanable", "Agent.Wipe": "cleanable", "Agent.Pull": "movable",
    "Agent.Push": "movable", "Agent.Read": "readable", "Agent.Drink": "drinkable",
    "Agent.Sit": "sittable", "Agent.Type": "typeable",
}  # fmt: skip


def properties_from_allow_lists(
    allow: Mapping[str, Mapping[str, Sequence[str]]],
) -> dict[str, frozenset[str]]:
    """Object -> properties, for a folder's own vocabulary: each allow-list an object is on
    grants the property that action needs; ``Put``'s object2 makes a surface (a container
    when it can also be opened). Our own classes keep their table properties."""
    found: dict[str, set[str]] = {}
    for action, entry in allow.items():
        for name in entry.get("object", []):
            found.setdefault(name, set()).update([_IMPLIES[action]] if action in _IMPLIES else [])
    put = allow.get("Agent.Put", {})
    for name in put.get("object1", []):
        found.setdefault(name, set()).add("grabbable")
    for name in put.get("object2", []):
        props = found.setdefault(name, set())
        props.add("container" if "openable" in props else "surface")
    result = {name: frozenset(props) for name, props in found.items()}
    result.update({name: props for name, (_, props) in OBJECTS.items()})
    return result
