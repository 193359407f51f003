"""Simulated trip-booking API (a booking.com-like search form).

Semantics follow the original ToolBench evaluator so scores are comparable:
``select_booking_type`` ('hotels', 'trip tickets', 'both') must be the first call; places and
dates are wrapped in ``Loc(name)`` and ``Date(month, day, year)``; ``search()`` checks the
fields each booking type requires and fills defaults (minimum prices 0, one room, and for
'both' the departure/return dates from check-in/check-out).
"""

from __future__ import annotations

from typing import Any

from toolbench.sandbox.world import ToolError, World

BOOKING_TYPES = ("hotels", "trip tickets", "both")
TRANSPORTATION_TYPES = ("flight", "train", "bus", "cruise")
ROOM_TYPES = ("King Bed", "Queen Bed", "Double", "Luxury")

# Required fields per booking type, with the words used in the error message.
_REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "trip tickets": (
        ("means_of_transportation", "transportation type"),
        ("location_from", "origin"),
        ("location_to", "destination"),
        ("departure_date", "departure date"),
    ),
    "hotels": (
        ("location", "hotel location"),
        ("checkin_date", "check-in date"),
        ("checkout_date", "check-out date"),
    ),
    "both": (
        ("means_of_transportation", "transportation type"),
        ("location_from", "origin"),
        ("location_to", "destination"),
        ("location", "hotel location"),
        ("checkin_date", "check-in date"),
        ("checkout_date", "check-out date"),
    ),
}


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ToolError(message)


class Loc:
    """A place, as the booking API wants it."""

    def __init__(self, location: str) -> None:
        self._location = location

    @property
    def location(self) -> str:
        return self._location


class Date:
    """A calendar date given as month, day, year (stored as 'M-D-Y', like the original)."""

    def __init__(self, month: int, day: int, year: int) -> None:
        self._date = f"{month}-{day}-{year}"

    @property
    def date(self) -> str:
        return self._date


class BookingAPI:
    def __init__(self) -> None:
        self._criteria: dict[str, Any] = {}

    def _snapshot(self) -> dict[str, Any]:
        return dict(self._criteria)

    def clear(self) -> None:
        self._criteria = {}

    def select_booking_type(self, booking_type: str) -> None:
        _require(
            booking_type in BOOKING_TYPES,
            f"booking type {booking_type!r} is not one of {', '.join(BOOKING_TYPES)}",
        )
        _require(not self._criteria, "select_booking_type must be the first call")
        self._criteria["booking_type"] = booking_type

    def select_transportation(self, transportation_type: str) -> None:
        _require(
            transportation_type in TRANSPORTATION_TYPES,
            f"transportation type {transportation_type!r} is not one of "
            f"{', '.join(TRANSPORTATION_TYPES)}",
        )
        self._criteria["means_of_transportation"] = transportation_type

    def _set_place(self, key: str, what: str, value: Any) -> None:
        _require(type(value) is Loc, f"{what} must be a Loc object, e.g. Loc('Denver')")
        self._criteria[key] = value.location

    def _set_date(self, key: str, what: str, value: Any) -> None:
        _require(type(value) is Date, f"{what} must be a Date object, e.g. Date(9, 29, 2023)")
        self._criteria[key] = value.date

    def set_origin(self, value: Loc) -> None:
        self._set_place("location_from", "origin", value)

    def set_destination(self, value: Loc) -> None:
        self._set_place("location_to", "destination", value)

    def set_hotel_location(self, value: Loc) -> None:
        self._set_place("location", "hotel location", value)

    def set_departure_date(self, value: Date) -> None:
        self._set_date("departure_date", "departure date", value)

    def set_return_date(self, value: Date) -> None:
        self._set_date("return_date", "return date", value)

    def set_checkin_date(self, value: Date) -> None:
        self._set_date("checkin_date", "check-in date", value)

    def set_checkout_date(self, value: Date) -> None:
        self._set_date("checkout_date", "check-out date", value)

    def set_min_ticket_price(self, value: int) -> None:
        self._criteria["min_price_ticket"] = value

    def set_max_ticket_price(self, value: int) -> None:
        self._criteria["max_price_ticket"] = value

    def set_num_adults(self, value: int) -> None:
        self._criteria["num_adults"] = value

    def set_num_children(self, value: int) -> None:
        self._criteria["num_children"] = value

    def set_num_rooms(self, value: int) -> None:
        self._criteria["num_rooms"] = value

    def select_room_type(self, value: str) -> None:
        # The original accepts any room type here; validating would change its scores.
        self._criteria["room_type"] = value

    def set_min_room_price(self, value: int) -> None:
        self._criteria["min_price_room"] = value

    def set_max_room_price(self, value: int) -> None:
        self._criteria["max_price_room"] = value

    def search(self) -> None:
        criteria = self._criteria
        criteria.setdefault("min_price_ticket", 0)
        criteria.setdefault("min_price_room", 0)
        _require("booking_type" in criteria, "call select_booking_type before search")
        booking_type = criteria["booking_type"]
        for key, what in _REQUIRED[booking_type]:
            _require(key in criteria, f"{what} not set for a {booking_type!r} search")
        if booking_type in ("hotels", "both"):
            criteria.setdefault("num_rooms", 1)
        if booking_type == "both":
            criteria.setdefault("departure_date", criteria["checkin_date"])
            criteria.setdefault("return_date", criteria["checkout_date"])


# No libraries, a fresh API object per program and nothing mutable reachable: programs may
# share a program process (see toolbench.sandbox._template).
SANDBOX_SHARED = True


def make_world() -> World:
    api = BookingAPI()
    return World(namespace={"API": api, "Loc": Loc, "Date": Date}, snapshot=api._snapshot)
