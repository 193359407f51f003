"""Seeded template generator for booking test and training data.

Records are ``{"prompt", "completion": [gold program], "slots"}`` like the home_search
generator (see there for why slots exist and why output is a pure function of its arguments).
A query is built from a trip part, a hotel part, or both; each part is a template whose
optional pieces (travellers, prices, rooms) are themselves templates, so the number of
distinct phrasings multiplies while every value stays an exact substring of the query.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from toolbench.kinds.pools import (
    AIRPORTS,
    CRUISE_PORTS,
    TRAVEL_CITIES,
    count,
    date_text,
    fill,
    generate_unique,
    money,
    number_word,
    random_date,
    render,
)

TASK = "booking"
DEFAULT_TEST_SIZE = 120
DEFAULT_SEED = 0

TRANSPORT_NOUNS = {
    "flight": ("flights", "a flight", "plane tickets", "airfare", "flight tickets"),
    "train": ("train tickets", "a train", "train seats", "rail tickets"),
    "bus": ("bus tickets", "a bus", "bus seats", "coach bus tickets"),
    "cruise": ("a cruise", "cruise tickets", "cruise passage", "cruise cabins"),
}
TRANSPORT_VERBS = {
    "flight": ("fly",),
    "train": ("take the train", "ride the train"),
    "bus": ("take the bus", "go by bus"),
    "cruise": ("go on a cruise", "take a cruise"),
}
ROOM_WORDS = {
    "King Bed": ("king bed", "king-bed", "king"),
    "Queen Bed": ("queen bed", "queen-bed", "queen"),
    "Double": ("double",),
    "Luxury": ("luxury",),
}
HOTEL_WORDS = ("hotel", "hotel", "hotel room", "hotel stay")

# Templates use short names for slots; SHORT maps them to the slot (state key) names.
TRIP_PARTS = (
    "{MODE} from {FROM} to {TO} on {D1}{RET}{PAX}{TPRICE}",
    "{MODE} from {FROM} to {TO}{PAX}, departing {D1}{RET}{TPRICE}",
    "{MODE} {FROM} to {TO}, leaving {D1}{RET}{PAX}{TPRICE}",
    "{MODE} to {TO} from {FROM} on {D1}{RET}{PAX}{TPRICE}",
)
TRIP_VERB = (
    "I want to {MODE} from {FROM} to {TO} on {D1}{RET}{PAX}",
    "We'd like to {MODE} from {FROM} to {TO}, leaving {D1}{RET}",
    "I'm in {FROM} and need to {MODE} to {TO} on {D1}{RET}",
)
RETURNS = (
    ", returning {D2}", " and coming back {D2}", ", return on {D2}", " with a return on {D2}",
    ", round trip back on {D2}",
)  # fmt: skip
HOTEL_PARTS = (
    "a {HOTEL} in {AT} from {IN} to {OUT}{ROOMS}{RPRICE}",
    "a {HOTEL} in {AT}{ROOMS}, checking in {IN} and out {OUT}{RPRICE}",
    "a {HOTEL} in {AT} between {IN} and {OUT}{ROOMS}{RPRICE}",
    "a {HOTEL} in {AT}{ROOMS}; check-in {IN}, check-out {OUT}{RPRICE}",
    "a {HOTEL} in {AT} arriving {IN} and leaving {OUT}{ROOMS}{RPRICE}",
)
HOTEL_NO_DATES = (
    "a {HOTEL} in {AT}{ROOMS}{RPRICE} for the same dates",
    "a {HOTEL} there for the whole stay{ROOMS}{RPRICE}",
    "a {HOTEL} in {AT} for those nights{ROOMS}{RPRICE}",
)
OPENERS = (
    ("I need ", "."), ("Please find ", "."), ("Can you book ", "?"), ("Looking for ", "."),
    ("Book ", ", thanks."), ("Help me find ", "."), ("I'd like to reserve ", "."),
    ("Could you search for ", "?"), ("Hey, I'm trying to find ", "."), ("Find me ", "."),
    ("We need ", "."), ("Could you get me ", "?"), ("Searching for ", "."), ("Reserve ", "."),
    ("Please look up ", "."), ("What do you have for ", "?"), ("Show me ", "."),
    ("My wife and I need ", "."), ("Is there availability for ", "?"), ("", ""),
)  # fmt: skip
PAX_CLAUSES = (
    " for {num_adults}", " for {num_adults} and {num_children}",
    ", {num_adults} and {num_children}", " for {num_adults} plus {num_children}",
)  # fmt: skip
TPRICE = {
    "max": (", under {max_price_ticket} per ticket", ", max {max_price_ticket} each",
            " for no more than {max_price_ticket} a ticket"),
    "min": (", at least {min_price_ticket} per ticket",),
    "both": (", between {min_price_ticket} and {max_price_ticket} per ticket",
             ", tickets {min_price_ticket}-{max_price_ticket}"),
}  # fmt: skip
RPRICE = {
    "max": (", under {max_price_room} a night", ", max {max_price_room}/night",
            ", no more than {max_price_room} per night"),
    "min": (", at least {min_price_room} a night", ", {min_price_room}+ per night"),
    "both": (", {min_price_room} to {max_price_room} per night",
             ", between {min_price_room} and {max_price_room} a night"),
}  # fmt: skip


def _pax(rng: random.Random, values: dict[str, str], prog: dict[str, Any]) -> str:
    """A travellers clause (maybe empty); sets the adult/child program values."""
    if rng.random() < 0.3:
        return ""
    adults = rng.choices(range(1, 7), weights=(5, 8, 3, 3, 1, 1))[0]
    prog["num_adults"] = adults
    values["num_adults"] = count(rng, adults, rng.choice(("adult", "adult", "grown-up")))
    if rng.random() < 0.55:
        return rng.choice(PAX_CLAUSES[:1])
    kids = rng.choices(range(5), weights=(1, 5, 5, 2, 1))[0]
    prog["num_children"] = kids
    noun = rng.choice((("child", "children"), ("kid", "kids")))
    values["num_children"] = f"no {noun[1]}" if kids == 0 else count(rng, kids, *noun)
    return rng.choice(PAX_CLAUSES[1:])


def _price_clause(
    rng: random.Random,
    table: dict[str, tuple[str, ...]],
    low: int,
    high: int,
    keys: tuple[str, str],
) -> tuple[str, dict[str, int], dict[str, str]]:
    which = rng.choices(("max", "min", "both"), weights=(6, 1, 3))[0]
    prog, texts = {}, {}
    if which in ("min", "both"):
        prog[keys[0]], texts[keys[0]] = low, money(rng, low, small=True)
    if which in ("max", "both"):
        prog[keys[1]], texts[keys[1]] = high, money(rng, high, small=True)
    return rng.choice(table[which]), prog, texts


def _round(rng: random.Random, low: int, high: int) -> tuple[int, int]:
    step = rng.choice((5, 10, 10, 25, 50))
    a = rng.randrange(low, high, step)
    b = rng.randrange(a + step, high + step, step)
    return a, min(b, high)


def _rooms(rng: random.Random, values: dict[str, str], prog: dict[str, Any]) -> str:
    has_n, has_type = rng.random() < 0.5, rng.random() < 0.5
    room_type = rng.choice(tuple(ROOM_WORDS))
    if has_type:
        prog["room_type"] = room_type
        values["room_type"] = rng.choice(ROOM_WORDS[room_type])
    if has_n:
        n = rng.choices(range(1, 6), weights=(4, 5, 3, 1, 1))[0]
        prog["num_rooms"] = n
        if has_type and rng.random() < 0.5:
            values["num_rooms"] = number_word(n) if n == 1 or rng.random() < 0.3 else str(n)
            return ", {num_rooms} {room_type} " + ("rooms" if n > 1 else "room")
        values["num_rooms"] = count(rng, n, "room")
        return rng.choice((" with {num_rooms}", ", {num_rooms}")) + (
            ", {room_type} type" if has_type else ""
        )
    if has_type:
        return rng.choice((" with a {room_type} room", ", {room_type} room please"))
    return ""


def _nights(rng: random.Random) -> dt.timedelta:
    return dt.timedelta(days=rng.randint(1, 7) if rng.random() < 0.7 else rng.randint(1, 21))


def _places(rng: random.Random, transport: str) -> tuple[str, str]:
    pool = CRUISE_PORTS if transport == "cruise" else TRAVEL_CITIES
    origin, dest = rng.sample(pool, 2)
    if transport == "flight" and rng.random() < 0.15:
        origin = rng.choice(AIRPORTS)
    return origin, dest


def _trip(
    rng: random.Random, kind: str, values: dict[str, str], prog: dict[str, Any]
) -> tuple[str, str]:
    """The travel sentence (without its final punctuation) for 'trip tickets' and 'both'.

    For 'both' the travel dates usually *are* the hotel dates (the API copies check-in and
    check-out into departure and return), so the query states them once as trip dates.
    """
    transport = rng.choice(tuple(TRANSPORT_NOUNS))
    origin, dest = _places(rng, transport)
    prog.update(means_of_transportation=transport, location_from=origin, location_to=dest)
    values.update(location_from=origin, location_to=dest)
    verb = kind == "trip tickets" and rng.random() < 0.3
    values["means_of_transportation"] = rng.choice(
        (TRANSPORT_VERBS if verb else TRANSPORT_NOUNS)[transport]
    )
    trip = rng.choice(TRIP_VERB if verb else TRIP_PARTS)
    start = random_date(rng, dt.date(2024, 1, 1), dt.date(2026, 12, 8))
    if kind == "both" and rng.random() < 0.75:
        keys = ("checkin_date", "checkout_date")
        dates = (start, start + _nights(rng))
        ret = True
    else:
        keys = ("departure_date", "return_date")
        checkin = start + dt.timedelta(days=rng.choice((0, 0, 1)))
        checkout = checkin + _nights(rng)
        dates = (start, checkout + dt.timedelta(days=rng.choice((0, 0, 1))))
        ret = kind == "both" or rng.random() < 0.5
        if kind == "both":
            prog["checkin_date"], prog["checkout_date"] = checkin, checkout
    trip = trip.replace("{D1}", "{" + keys[0] + "}")
    trip = trip.replace("{RET}", rng.choice(RETURNS) if ret else "").replace(
        "{D2}", "{" + keys[1] + "}"
    )
    for key, day in zip(keys[: 1 + ret], dates[: 1 + ret], strict=True):
        prog[key], values[key] = day, date_text(rng, day)
    pax = _pax(rng, values, prog)
    trip = trip.replace("{PAX}", pax) if "{PAX}" in trip else trip + pax
    tprice = ""
    if rng.random() < 0.4:
        low, high = _round(rng, 30, 2000)
        tprice, p, t = _price_clause(
            rng, TPRICE, low, high, ("min_price_ticket", "max_price_ticket")
        )
        prog.update(p)
        values.update(t)
    trip = trip.replace("{TPRICE}", tprice) if "{TPRICE}" in trip else trip + tprice
    if verb:
        return trip, rng.choice((".", "!", ""))
    opener, end = rng.choice(OPENERS)
    return opener + trip, end


def _hotel(rng: random.Random, kind: str, values: dict[str, str], prog: dict[str, Any]) -> str:
    """The hotel request (a noun phrase) for 'hotels' and 'both'."""
    dated = "checkin_date" not in values
    template = rng.choice(HOTEL_PARTS if dated else HOTEL_NO_DATES)
    city = prog.get("location_to", "")
    if kind == "hotels" or (rng.random() < 0.15 and "{AT}" in template):
        city = rng.choice([c for c in TRAVEL_CITIES if c != city])
    prog["location"] = city
    values["location"] = city
    if dated:
        if "checkin_date" not in prog:
            prog["checkin_date"] = random_date(rng, dt.date(2024, 1, 1), dt.date(2026, 12, 8))
            prog["checkout_date"] = prog["checkin_date"] + _nights(rng)
        values["checkin_date"] = date_text(rng, prog["checkin_date"])
        values["checkout_date"] = date_text(rng, prog["checkout_date"])
    rooms = _rooms(rng, values, prog)
    values["booking_type"] = rng.choice(HOTEL_WORDS[:2] if rooms else HOTEL_WORDS)
    template = template.replace("{ROOMS}", rooms)
    rprice = ""
    if rng.random() < 0.4:
        low, high = _round(rng, 60, 900)
        rprice, p, t = _price_clause(rng, RPRICE, low, high, ("min_price_room", "max_price_room"))
        prog.update(p)
        values.update(t)
    template = template.replace("{RPRICE}", rprice)
    if kind == "hotels" and rng.random() < 0.2:
        template += _pax(rng, values, prog)
    return template


CONNECTORS = (", plus ", ", and also ", ". Also book ", ". I also need ", " - and ")
SHORT = {
    "{MODE}": "{means_of_transportation}", "{FROM}": "{location_from}", "{TO}": "{location_to}",
    "{HOTEL}": "{booking_type}", "{IN}": "{checkin_date}", "{OUT}": "{checkout_date}",
    "{AT}": "{location}",
}  # fmt: skip
ORDER = (
    "booking_type", "means_of_transportation", "location_from", "location_to", "num_adults",
    "num_children", "departure_date", "return_date", "min_price_ticket", "max_price_ticket",
    "num_rooms", "room_type", "location", "checkin_date", "checkout_date", "min_price_room",
    "max_price_room",
)  # fmt: skip
SETTERS = {
    "booking_type": "select_booking_type", "means_of_transportation": "select_transportation",
    "location_from": "set_origin", "location_to": "set_destination",
    "location": "set_hotel_location",
    "departure_date": "set_departure_date", "return_date": "set_return_date",
    "checkin_date": "set_checkin_date", "checkout_date": "set_checkout_date",
    "min_price_ticket": "set_min_ticket_price", "max_price_ticket": "set_max_ticket_price",
    "min_price_room": "set_min_room_price", "max_price_room": "set_max_room_price",
    "num_adults": "set_num_adults", "num_children": "set_num_children",
    "num_rooms": "set_num_rooms", "room_type": "select_room_type",
}  # fmt: skip


def _program(prog: dict[str, Any]) -> str:
    lines = []
    for key in ORDER:
        if key not in prog:
            continue
        value = prog[key]
        setter = SETTERS[key]
        if key.startswith("location"):
            var = "hotel_location" if key == "location" and "location_to" in prog else key
            lines += [f'{var} = Loc("{value}")', f"API.{setter}({var})"]
        elif isinstance(value, dt.date):
            lines += [
                f"{key} = Date({value.month}, {value.day}, {value.year})",
                f"API.{setter}({key})",
            ]
        elif isinstance(value, str):
            lines.append(f'API.{setter}("{value}")')
        else:
            lines.append(f"API.{setter}({value})")
    return "\n".join([*lines, "API.search()"])


def _record(rng: random.Random) -> dict[str, Any]:
    kind = rng.choices(("hotels", "trip tickets", "both"), weights=(35, 35, 30))[0]
    values: dict[str, str] = {}
    prog: dict[str, Any] = {"booking_type": kind}
    if kind == "hotels":
        if rng.random() < 0.25:
            city = prog["location"] = rng.choice(TRAVEL_CITIES)
            prog["checkin_date"] = random_date(rng, dt.date(2024, 1, 1), dt.date(2026, 12, 8))
            prog["checkout_date"] = prog["checkin_date"] + _nights(rng)
            values.update(
                location=city,
                checkin_date=date_text(rng, prog["checkin_date"]),
                checkout_date=date_text(rng, prog["checkout_date"]),
                booking_type=rng.choice(HOTEL_WORDS),
            )
            rooms = _rooms(rng, values, prog).lstrip(", ")
            template = "I'll be in {AT} from {IN} to {OUT}. Need a {HOTEL}"
            template += (
                ", " + rooms if rooms and not rooms.startswith("with") else " " + rooms
            ) + "."
        else:
            opener, end = rng.choice(OPENERS)
            template = opener + _hotel(rng, kind, values, prog) + end
    elif kind == "trip tickets":
        trip, end = _trip(rng, kind, values, prog)
        template = trip + (end if rng.random() < 0.8 else " please" + end)
        values["booking_type"] = values["means_of_transportation"]
    else:
        trip, end = _trip(rng, kind, values, prog)
        connector = rng.choice(CONNECTORS if end != "?" else CONNECTORS[:2])
        template = trip + connector + _hotel(rng, kind, values, prog) + end
    for short, name in SHORT.items():
        template = template.replace(short, name)
    pieces = fill(template, values)
    query, slots = render(rng, pieces)
    slots.setdefault("location", slots.get("location_to", ""))
    slots.setdefault("booking_type", slots.get("means_of_transportation", ""))
    return {
        "prompt": query,
        "completion": [_program(prog)],
        "slots": {key: slots[key] for key in ORDER if key in prog},
    }


def generate(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records for ``split`` ('test' or 'train'); the same arguments give the same list,
    and train never repeats a query of the default test set (see ``generate_unique``)."""
    return generate_unique(TASK, split, n, seed, _record, DEFAULT_TEST_SIZE)
