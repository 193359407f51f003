"""The chores our generator draws from, one small function per kind, in every room.

A chore function gets a seeded ``random.Random`` and returns a ``Chore``: the request in
words, the objects it is about (with the words naming them, for ``slots``), where those
objects start, and the gold plans as route variants. Routes differ the way people's do
(walk to the room first or straight to the object, ``Find`` or ``WalkTo`` inside a room,
close a door before or after the next step), never in what gets done.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from toolbench.tasks.virtual_home.vocab import OBJECTS

Place = tuple[str, str]  # ("on"|"in", parent) | ("worn", "")
Step = Callable[["Route"], None]


def word(name: str) -> str:
    """How people name an object class: 'food_bread' -> 'bread', 'tv' -> 'TV'."""
    special = {"tv": "TV", "remote_control": "remote", "water_glass": "glass"}
    if name in special:
        return special[name]
    for prefix in ("food_", "clothes_"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name.replace("_", " ")


class Route:
    """Builds one gold plan; ``style`` picks how the agent gets to things."""

    def __init__(self, style: int, room: str | None, where: dict[str, str]) -> None:
        self.style = style
        self.room = room
        self.where = where  # objects that start outside their usual room -> that room
        self.lines: list[str] = []

    def do(self, action: str, *objects: str) -> None:
        self.lines.append(f"Agent.{action}({', '.join(objects)})")

    def go(self, name: str) -> None:
        room = self.where.get(name, OBJECTS[name][0])
        if room == self.room:
            self.do("Find" if self.style == 2 else "WalkTo", name)
        elif self.style == 1:
            self.do("WalkTo", name)
        else:
            self.do("WalkTo", room)
            self.do("Find" if self.style == 2 else "WalkTo", name)
        self.room = room


@dataclass
class Chore:
    kind: str
    query: str
    slots: dict[str, str]  # slot -> the query words naming it
    places: dict[str, Place]  # small objects' starting places
    steps: list[Step]
    swaps: list[tuple[int, int]] = field(default_factory=list)  # independent step pairs
    state: dict[str, list[str]] = field(default_factory=dict)
    sitting: str | None = None
    start_room: str | None = None

    def plan(self, style: int, order: list[int] | None = None) -> list[str]:
        """One gold plan: the steps in ``order`` (default: as written), moving in ``style``."""
        where = {n: OBJECTS[p][0] for n, (_, p) in self.places.items() if p in OBJECTS}
        route = Route(style, self.start_room, where)
        for index in range(len(self.steps)) if order is None else order:
            self.steps[index](route)
        return route.lines


def _polite(rng: random.Random, text: str) -> str:
    form = rng.choice(("{}", "{}", "Please {}", "Could you {}?", "Can you {}?", "{}, please"))
    low = text[0].lower() + text[1:]
    out = form.format(low if form[0] != "{" else text)
    return out if out.endswith("?") else out.rstrip(".") + rng.choice(("", "."))


def _ask(rng: random.Random, forms: tuple[str, ...], **names: str) -> tuple[str, dict[str, str]]:
    text = _polite(rng, rng.choice(forms).format(**{k: word(v) for k, v in names.items()}))
    # Slots are only the objects the request names (some forms leave one implicit).
    slots = {k: word(v) for k, v in names.items() if word(v).lower() in text.lower()}
    return text, slots


def grab_from(container: str, item: str, close_after: bool = True) -> list[Step]:
    steps: list[Step] = [
        lambda r: r.go(container),
        lambda r: r.do("Open", container),
        lambda r: r.do("Grab", item),
    ]
    if close_after:
        steps.append(lambda r: r.do("Close", container))
    return steps


def put_into(container: str, item: str) -> list[Step]:
    return [
        lambda r: r.go(container),
        lambda r: r.do("Open", container),
        lambda r: r.do("Put", item, container),
        lambda r: r.do("Close", container),
    ]


def fetch(item: str) -> list[Step]:
    return [lambda r: r.go(item), lambda r: r.do("Grab", item)]


STORAGE = {
    "fridge": ("milk", "juice", "food_cheese", "food_apple"),
    "kitchen_cabinet": ("plate", "bowl", "mug", "pot", "pan", "water_glass"),
    "bathroom_cabinet": ("toothpaste", "soap", "shampoo", "comb"),
    "dresser": ("clothes_shirt", "clothes_pants", "hat", "glasses"),
    "closet": ("clothes_jacket", "clothes_dress", "shoes"),
    "filing_cabinet": ("folder", "paper", "mail"),
}
SURFACE_FOR = {
    "fridge": "kitchen_counter", "kitchen_cabinet": "kitchen_counter",
    "bathroom_cabinet": "bathroom_counter", "dresser": "bed", "closet": "bed",
    "filing_cabinet": "desk",
}  # fmt: skip


def put_away(rng: random.Random) -> Chore:
    container = rng.choice(sorted(STORAGE))
    item = rng.choice(STORAGE[container])
    query, slots = _ask(
        rng,
        ("Put the {item} away in the {container}", "Put the {item} in the {container}",
         "Store the {item} in the {container}", "Tidy the {item} into the {container}"),
        item=item, container=container,
    )  # fmt: skip
    places = {item: ("on", SURFACE_FOR[container])}
    return Chore("put_away", query, slots, places, fetch(item) + put_into(container, item))


def take_out(rng: random.Random) -> Chore:
    container = rng.choice(("fridge", "kitchen_cabinet", "bathroom_cabinet", "filing_cabinet"))
    item = rng.choice(STORAGE[container])
    target = SURFACE_FOR[container] if container != "fridge" else "kitchen_table"
    query, slots = _ask(
        rng,
        ("Take the {item} out of the {container} and put it on the {target}",
         "Get the {item} from the {container} onto the {target}",
         "Move the {item} from the {container} to the {target}"),
        item=item, container=container, target=target,
    )  # fmt: skip
    steps = [
        *grab_from(container, item),
        lambda r: r.go(target),
        lambda r: r.do("Put", item, target),
    ]
    return Chore("take_out", query, slots, {item: ("in", container)}, steps)


MOVES = (
    ("remote_control", "sofa", "coffee_table"), ("magazine", "sofa", "bookshelf"),
    ("plant", "coffee_table", "bookshelf"), ("book", "bed", "nightstand"),
    ("phone", "bed", "nightstand"), ("pillow", "sofa", "bed"), ("pen", "shelf", "desk"),
    ("stapler", "shelf", "desk"), ("notebook", "desk", "shelf"), ("towel", "bathtub", "towel_rack"),
    ("food_bread", "kitchen_counter", "dining_table"), ("blanket", "bed", "sofa"),
    ("laptop", "sofa", "desk"), ("newspaper", "dining_table", "coffee_table"),
)  # fmt: skip


def move(rng: random.Random) -> Chore:
    item, start, target = rng.choice(MOVES)
    query, slots = _ask(
        rng,
        ("Put the {item} on the {target}", "Bring the {item} to the {target}",
         "Move the {item} onto the {target}", "Leave the {item} on the {target}"),
        item=item, target=target,
    )  # fmt: skip
    where = "in" if "container" in OBJECTS[start][1] else "on"
    steps = [*fetch(item), lambda r: r.go(target), lambda r: r.do("Put", item, target)]
    return Chore("move", query, slots, {item: (where, start)}, steps)


DISHES = {"kitchen": ("plate", "bowl", "mug", "pot", "pan", "fork", "spoon", "water_glass"),
          "bathroom": ("toothbrush",)}  # fmt: skip


def wash(rng: random.Random) -> Chore:
    room = rng.choice(("kitchen", "kitchen", "kitchen", "bathroom"))
    item = rng.choice(DISHES[room])
    sink = "sink" if room == "kitchen" else "bathroom_sink"
    counter = "kitchen_counter" if room == "kitchen" else "bathroom_counter"
    query, slots = _ask(
        rng, ("Wash the {item}", "Clean the dirty {item}", "Do the {item} in the {sink}"),
        item=item, sink=sink,
    )  # fmt: skip
    steps = [*fetch(item), lambda r: r.go(sink), lambda r: r.do("Wash", item)]
    chore = Chore("wash", query, slots, {item: ("on", counter)}, steps, state={item: ["dirty"]})
    chore.steps.append(lambda r: r.do("Put", item, sink))
    return chore


SURFACES = {
    "kitchen_table": ("rag", "sponge"), "kitchen_counter": ("rag", "sponge"),
    "dining_table": ("rag",), "coffee_table": ("rag",), "desk": ("rag",),
    "bathroom_counter": ("towel",), "mirror": ("towel",),
}  # fmt: skip


def wipe(rng: random.Random) -> Chore:
    surface = rng.choice(sorted(SURFACES))
    wiper = rng.choice(SURFACES[surface])
    query, slots = _ask(
        rng, ("Wipe the {surface}", "Wipe down the {surface} with a {wiper}",
              "Clean the {surface} with the {wiper}"),
        surface=surface, wiper=wiper,
    )  # fmt: skip
    home = "kitchen_counter" if wiper != "towel" else "towel_rack"
    if surface == home:
        home = "sink" if wiper != "towel" else "towel_rack"
    where = "in" if "container" in OBJECTS[home][1] else "on"
    steps = [*fetch(wiper), lambda r: r.go(surface), lambda r: r.do("Wipe", surface)]
    steps += [lambda r: r.go(home), lambda r: r.do("Put", wiper, home)]
    return Chore("wipe", query, slots, {wiper: (where, home)}, steps, state={surface: ["dirty"]})


def scrub_fixture(rng: random.Random) -> Chore:
    fixture = rng.choice(("toilet", "bathtub", "bathroom_sink", "sink"))
    query, slots = _ask(
        rng, ("Clean the {fixture}", "Scrub the {fixture}", "Give the {fixture} a scrub"),
        fixture=fixture,
    )  # fmt: skip
    steps: list[Step] = [
        lambda r: r.go(fixture),
        lambda r: r.do("Scrub", fixture),
        lambda r: r.do("Rinse", fixture),
    ]
    return Chore("scrub", query, slots, {}, steps, state={fixture: ["dirty"]})


SWITCHABLE = ("tv", "floor_lamp", "lamp", "computer", "desk_lamp", "printer", "coffee_maker")


def switch(rng: random.Random) -> Chore:
    thing = rng.choice(SWITCHABLE)
    on = rng.random() < 0.6
    on_forms = ("Turn on the {thing}", "Switch the {thing} on", "Power up the {thing}")
    off_forms = ("Turn off the {thing}", "Switch the {thing} off", "Shut off the {thing}")
    forms = on_forms if on else off_forms
    query, slots = _ask(rng, forms, thing=thing)
    steps: list[Step] = [
        lambda r: r.go(thing),
        lambda r: r.do("SwitchOn" if on else "SwitchOff", thing),
    ]
    return Chore("switch", query, slots, {}, steps, state={} if on else {thing: ["on"]})


def watch_tv(rng: random.Random) -> Chore:
    seat = rng.choice(("sofa", "armchair"))
    query, slots = _ask(
        rng, ("Watch TV from the {seat}", "Sit on the {seat} and watch TV",
              "Relax on the {seat} in front of the TV"),
        seat=seat,
    )  # fmt: skip
    steps: list[Step] = [
        lambda r: r.go("tv"),
        lambda r: r.do("SwitchOn", "tv"),
        lambda r: r.go(seat),
        lambda r: r.do("Sit", seat),
        lambda r: r.do("LookAt", "tv"),
    ]
    chore = Chore("watch_tv", query, slots, {}, steps)
    slots["tv"] = "TV"
    return chore


def stop_watching(rng: random.Random) -> Chore:
    seat = rng.choice(("sofa", "armchair"))
    query, slots = _ask(
        rng, ("Get up from the {seat} and turn off the TV", "Stand up and switch the TV off"),
        seat=seat,
    )  # fmt: skip
    slots = {k: v for k, v in slots.items() if v.lower() in query.lower()}
    steps: list[Step] = [
        lambda r: r.do("StandUp"),
        lambda r: r.go("tv"),
        lambda r: r.do("SwitchOff", "tv"),
    ]
    chore = Chore("stop_watching", query, slots, {}, steps, state={"tv": ["on"]}, sitting=seat)
    chore.start_room = "living_room"
    return chore


READS = (("book", "bed", "bed"), ("magazine", "coffee_table", "sofa"),
         ("newspaper", "coffee_table", "armchair"), ("mail", "desk", "office_chair"),
         ("notebook", "desk", "office_chair"))  # fmt: skip


def read(rng: random.Random) -> Chore:
    item, start, seat = rng.choice(READS)
    query, slots = _ask(
        rng, ("Read the {item} sitting on the {seat}", "Sit on the {seat} and read the {item}",
              "Grab the {item} and read it on the {seat}"),
        item=item, seat=seat,
    )  # fmt: skip
    steps = [*fetch(item), lambda r: r.go(seat), lambda r: r.do("Sit", seat),
             lambda r: r.do("Read", item)]  # fmt: skip
    return Chore("read", query, slots, {item: ("on", start)}, steps)


def dress(rng: random.Random) -> Chore:
    container = rng.choice(("dresser", "closet"))
    item = rng.choice(STORAGE[container])
    query, slots = _ask(
        rng, ("Put on the {item} from the {container}", "Get the {item} out of the {container} "
              "and wear it", "Get dressed: the {item} is in the {container}"),
        item=item, container=container,
    )  # fmt: skip
    steps = grab_from(container, item, close_after=False)
    steps += [lambda r: r.do("PutOn", item), lambda r: r.do("Close", container)]
    return Chore("dress", query, slots, {item: ("in", container)}, steps, swaps=[(3, 4)])


def undress(rng: random.Random) -> Chore:
    item = rng.choice(("shoes", "hat", "clothes_jacket", "glasses"))
    target = rng.choice(("closet", "laundry_basket")) if item != "glasses" else "nightstand"
    query, slots = _ask(
        rng, ("Take off the {item} and put them in the {target}",
              "Remove the {item} and leave them in the {target}"),
        item=item, target=target,
    )  # fmt: skip
    if "on" in query and target == "nightstand":
        query = query.replace(" in the ", " on the ")
    steps: list[Step] = [lambda r: r.do("TakeOff", item)]
    if target == "closet":
        steps += put_into("closet", item)
    else:
        steps += [lambda r: r.go(target), lambda r: r.do("Put", item, target)]
    return Chore("undress", query, slots, {item: ("worn", "")}, steps)


def drink(rng: random.Random) -> Chore:
    item = rng.choice(("milk", "juice"))
    query, slots = _ask(
        rng, ("Have some {item} from the fridge", "Drink the {item}", "Get a drink of {item}"),
        item=item,
    )  # fmt: skip
    steps = [*grab_from("fridge", item), lambda r: r.do("Drink", item)]
    return Chore("drink", query, slots, {item: ("in", "fridge")}, steps, swaps=[(3, 4)])


APPLIANCES = {"dishwasher": ("plate", "bowl", "mug", "fork", "spoon"),
              "microwave": ("food_bread", "food_cheese", "mug"),
              "washing_machine": ("clothes_shirt", "clothes_pants", "clothes_dress")}  # fmt: skip


def run_appliance(rng: random.Random) -> Chore:
    appliance = rng.choice(sorted(APPLIANCES))
    item = rng.choice(APPLIANCES[appliance])
    query, slots = _ask(
        rng, ("Put the {item} in the {appliance} and start it", "Run the {item} through the "
              "{appliance}", "Load the {item} into the {appliance} and switch it on"),
        item=item, appliance=appliance,
    )  # fmt: skip
    start = (
        ("in", "laundry_basket") if appliance == "washing_machine" else ("on", "kitchen_counter")
    )
    steps = fetch(item) + put_into(appliance, item) + [lambda r: r.do("SwitchOn", appliance)]
    return Chore("appliance", query, slots, {item: start}, steps)


def set_table(rng: random.Random) -> Chore:
    first, second = rng.sample(("plate", "bowl", "fork", "spoon", "mug", "water_glass"), 2)
    query, slots = _ask(
        rng, ("Set the {first} and the {second} on the dining table",
              "Put a {first} and a {second} on the dining table"),
        first=first, second=second,
    )  # fmt: skip
    slots["table"] = "dining table"
    steps = [*fetch(first), lambda r: r.do("Grab", second), lambda r: r.go("dining_table"),
             lambda r: r.do("Put", first, "dining_table"),
             lambda r: r.do("Put", second, "dining_table")]  # fmt: skip
    places = {first: ("on", "kitchen_counter"), second: ("on", "kitchen_counter")}
    chore = Chore("set_table", query, slots, places, steps, swaps=[(4, 5)])
    chore.steps[0] = lambda r: r.go("kitchen_counter")
    return chore


def air_room(rng: random.Random) -> Chore:
    opening = rng.random() < 0.7
    query, slots = _ask(
        rng, ("Open the {window}", "Let some fresh air in through the {window}")
        if opening else ("Close the {window}", "Shut the {window}"),
        window="window",
    )  # fmt: skip
    steps: list[Step] = [
        lambda r: r.go("window"),
        lambda r: r.do("Open" if opening else "Close", "window"),
    ]
    return Chore("window", query, slots, {}, steps, state={} if opening else {"window": ["open"]})


def furniture(rng: random.Random) -> Chore:
    thing = rng.choice(("armchair", "chair", "office_chair"))
    pull = rng.random() < 0.5
    query, slots = _ask(
        rng, ("Pull the {thing} out", "Pull out the {thing}") if pull
        else ("Push the {thing} back in", "Push the {thing} in"),
        thing=thing,
    )  # fmt: skip
    steps: list[Step] = [lambda r: r.go(thing), lambda r: r.do("Pull" if pull else "Push", thing)]
    return Chore("furniture", query, slots, {}, steps)


def type_letter(rng: random.Random) -> Chore:
    query, slots = _ask(
        rng, ("Type a letter on the {computer}", "Switch on the {computer} and type an email"),
        computer="computer",
    )  # fmt: skip
    steps: list[Step] = [lambda r: r.go("computer"), lambda r: r.do("SwitchOn", "computer"),
                         lambda r: r.go("keyboard"), lambda r: r.do("Type", "keyboard"),
                         lambda r: r.do("LookAt", "computer")]  # fmt: skip
    return Chore("type", query, slots, {"keyboard": ("on", "desk")}, steps)


CHORES: tuple[Callable[[random.Random], Chore], ...] = (
    put_away, take_out, move, wash, wipe, scrub_fixture, switch, watch_tv, stop_watching,
    read, dress, undress, drink, run_appliance, set_table, air_room, furniture, type_letter,
)  # fmt: skip
