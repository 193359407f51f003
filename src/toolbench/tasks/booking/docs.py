"""API docs and demonstrations for booking, written for this project.

``FUNCTIONS`` holds one doc per public method of ``BookingAPI`` plus the ``Loc`` and ``Date``
wrappers (file name = function name): a '# ...' line with what the call does, its allowed
values and call-order rules, then the signature. Allowed string values are quoted so tools
can read them. ``EXAMPLES`` cover every call, every booking type, every means of
transportation and every room type.
"""

from __future__ import annotations

FUNCTIONS: dict[str, str] = {
    "select_booking_type": (
        "# Choose what to book: 'hotels', 'trip tickets' or 'both'. This must be the first "
        "call.\n"
        "API.select_booking_type(booking_type: str)"
    ),
    "select_transportation": (
        "# Choose how to travel: 'flight', 'train', 'bus' or 'cruise'. Required whenever tickets "
        "are booked.\n"
        "API.select_transportation(transportation_type: str)"
    ),
    "set_origin": (
        "# Where the trip starts, given as a Loc object. Required for trip tickets.\n"
        "API.set_origin(value: Loc)"
    ),
    "set_destination": (
        "# Where the trip goes, given as a Loc object. Required for trip tickets.\n"
        "API.set_destination(value: Loc)"
    ),
    "set_departure_date": (
        "# Day of the outbound trip, given as a Date object. Required for tickets only; when "
        "tickets and a hotel are booked together it defaults to the check-in date.\n"
        "API.set_departure_date(value: Date)"
    ),
    "set_return_date": (
        "# Day of the trip back, given as a Date object; leave it out for one-way tickets. When "
        "tickets and a hotel are booked together it defaults to the check-out date.\n"
        "API.set_return_date(value: Date)"
    ),
    "set_hotel_location": (
        "# City to find a hotel in, given as a Loc object. Required whenever a hotel is booked.\n"
        "API.set_hotel_location(value: Loc)"
    ),
    "set_checkin_date": (
        "# Hotel arrival day, given as a Date object. Required whenever a hotel is booked.\n"
        "API.set_checkin_date(value: Date)"
    ),
    "set_checkout_date": (
        "# Hotel departure day, given as a Date object, after the check-in date. Required "
        "whenever a hotel is booked.\n"
        "API.set_checkout_date(value: Date)"
    ),
    "set_num_rooms": (
        "# How many hotel rooms to book (1 when not set).\nAPI.set_num_rooms(value: int)"
    ),
    "select_room_type": (
        "# Kind of hotel room: 'King Bed', 'Queen Bed', 'Double' or 'Luxury'.\n"
        "API.select_room_type(value: str)"
    ),
    "set_min_room_price": (
        "# Lowest nightly room rate in US dollars.\nAPI.set_min_room_price(value: int)"
    ),
    "set_max_room_price": (
        "# Highest nightly room rate in US dollars.\nAPI.set_max_room_price(value: int)"
    ),
    "set_min_ticket_price": (
        "# Lowest price per ticket in US dollars.\nAPI.set_min_ticket_price(value: int)"
    ),
    "set_max_ticket_price": (
        "# Highest price per ticket in US dollars.\nAPI.set_max_ticket_price(value: int)"
    ),
    "set_num_adults": (
        "# Number of adult travellers (adult tickets).\nAPI.set_num_adults(value: int)"
    ),
    "set_num_children": (
        "# Number of child travellers (child tickets).\nAPI.set_num_children(value: int)"
    ),
    "search": (
        "# Run the search once everything is set; it checks that the booking type's required "
        "fields are present. Call it as the last line.\n"
        "API.search()"
    ),
    "Loc": (
        "# Wrap a place name (a city, or an airport code) for the booking API, e.g. a variable "
        "set to Loc(name) and then passed to API.set_origin.\n"
        "Loc(location: str)"
    ),
    "Date": (
        "# Wrap a calendar date as numbers in the order month, day, year; Date(3, 14, 2025) is "
        "March 14, 2025.\n"
        "Date(month: int, day: int, year: int)"
    ),
}


def _place(var: str, setter: str, name: str) -> tuple[str, str]:
    return f'{var} = Loc("{name}")', f"API.{setter}({var})"


def _date(var: str, month: int, day: int, year: int) -> tuple[str, str]:
    return f"{var} = Date({month}, {day}, {year})", f"API.set_{var}({var})"


def _program(*lines: str | tuple[str, str]) -> str:
    flat: list[str] = []
    for line in lines:
        flat.extend([line] if isinstance(line, str) else line)
    return "\n".join([*flat, "API.search()"])


EXAMPLES: list[tuple[str, str]] = [
    (
        "Reserve 2 luxury rooms in Chicago for March 3, 2025 through March 7, 2025.",
        _program(
            'API.select_booking_type("hotels")',
            "API.set_num_rooms(2)",
            'API.select_room_type("Luxury")',
            _place("location", "set_hotel_location", "Chicago"),
            _date("checkin_date", 3, 3, 2025),
            _date("checkout_date", 3, 7, 2025),
        ),
    ),
    (
        "I need flights from Boston to Denver on 2024-11-15 for 2 adults, returning 2024-11-20.",
        _program(
            'API.select_booking_type("trip tickets")',
            'API.select_transportation("flight")',
            _place("location_from", "set_origin", "Boston"),
            _place("location_to", "set_destination", "Denver"),
            "API.set_num_adults(2)",
            _date("departure_date", 11, 15, 2024),
            _date("return_date", 11, 20, 2024),
        ),
    ),
    (
        "Find train tickets to Seattle from Portland on 06/12/2025 for 1 adult and 2 children, "
        "under $90 per ticket.",
        _program(
            'API.select_booking_type("trip tickets")',
            'API.select_transportation("train")',
            _place("location_from", "set_origin", "Portland"),
            _place("location_to", "set_destination", "Seattle"),
            "API.set_num_adults(1)",
            "API.set_num_children(2)",
            _date("departure_date", 6, 12, 2025),
            "API.set_max_ticket_price(90)",
        ),
    ),
    (
        "We're taking the bus from Austin to Houston on Jan 9 2026 and need a hotel in Houston "
        "until Jan 12 2026 with a king bed room.",
        _program(
            'API.select_booking_type("both")',
            'API.select_transportation("bus")',
            _place("location_from", "set_origin", "Austin"),
            _place("location_to", "set_destination", "Houston"),
            'API.select_room_type("King Bed")',
            _place("hotel_location", "set_hotel_location", "Houston"),
            _date("checkin_date", 1, 9, 2026),
            _date("checkout_date", 1, 12, 2026),
        ),
    ),
    (
        "Hotel in Miami, check-in July 1st, 2024, check-out July 5th, 2024, 1 queen bed room "
        "between $150 and $250 a night.",
        _program(
            'API.select_booking_type("hotels")',
            "API.set_num_rooms(1)",
            'API.select_room_type("Queen Bed")',
            _place("location", "set_hotel_location", "Miami"),
            _date("checkin_date", 7, 1, 2024),
            _date("checkout_date", 7, 5, 2024),
            "API.set_min_room_price(150)",
            "API.set_max_room_price(250)",
        ),
    ),
    (
        "Please get me cruise tickets from Miami to Nassau leaving the 14th of February, 2025 "
        "for 2 adults, at least $300 and at most $800 per ticket.",
        _program(
            'API.select_booking_type("trip tickets")',
            'API.select_transportation("cruise")',
            _place("location_from", "set_origin", "Miami"),
            _place("location_to", "set_destination", "Nassau"),
            "API.set_num_adults(2)",
            _date("departure_date", 2, 14, 2025),
            "API.set_min_ticket_price(300)",
            "API.set_max_ticket_price(800)",
        ),
    ),
    (
        "Plan a trip from Dallas to Orlando by flight, departing 2025/04/18 and coming back "
        "2025/04/25, and book 2 double rooms in Orlando for those dates for 2 adults and 3 "
        "children.",
        _program(
            'API.select_booking_type("both")',
            'API.select_transportation("flight")',
            _place("location_from", "set_origin", "Dallas"),
            _place("location_to", "set_destination", "Orlando"),
            "API.set_num_adults(2)",
            "API.set_num_children(3)",
            "API.set_num_rooms(2)",
            'API.select_room_type("Double")',
            _place("hotel_location", "set_hotel_location", "Orlando"),
            _date("checkin_date", 4, 18, 2025),
            _date("checkout_date", 4, 25, 2025),
        ),
    ),
    (
        "I need a hotel room in Nashville arriving 9/5/2024 and leaving 9/8/2024, under $200 per "
        "night.",
        _program(
            'API.select_booking_type("hotels")',
            _place("location", "set_hotel_location", "Nashville"),
            _date("checkin_date", 9, 5, 2024),
            _date("checkout_date", 9, 8, 2024),
            "API.set_max_room_price(200)",
        ),
    ),
    (
        "Round-trip bus tickets from Philadelphia to Washington for 3 adults, leaving October 2, "
        "2025 with a return on October 4, 2025.",
        _program(
            'API.select_booking_type("trip tickets")',
            'API.select_transportation("bus")',
            _place("location_from", "set_origin", "Philadelphia"),
            _place("location_to", "set_destination", "Washington"),
            "API.set_num_adults(3)",
            _date("departure_date", 10, 2, 2025),
            _date("return_date", 10, 4, 2025),
        ),
    ),
    (
        "Flying out of SFO to Honolulu on Dec 20 2024 for 2 adults, back on Dec 28 2024. Also "
        "need a luxury room in Honolulu from Dec 21 2024 to Dec 28 2024, at least $400 a night.",
        _program(
            'API.select_booking_type("both")',
            'API.select_transportation("flight")',
            _place("location_from", "set_origin", "SFO"),
            _place("location_to", "set_destination", "Honolulu"),
            "API.set_num_adults(2)",
            _date("departure_date", 12, 20, 2024),
            _date("return_date", 12, 28, 2024),
            'API.select_room_type("Luxury")',
            _place("hotel_location", "set_hotel_location", "Honolulu"),
            _date("checkin_date", 12, 21, 2024),
            _date("checkout_date", 12, 28, 2024),
            "API.set_min_room_price(400)",
        ),
    ),
    (
        "Book train seats from Chicago to Milwaukee for 4 adults on 2026-05-30.",
        _program(
            'API.select_booking_type("trip tickets")',
            'API.select_transportation("train")',
            _place("location_from", "set_origin", "Chicago"),
            _place("location_to", "set_destination", "Milwaukee"),
            "API.set_num_adults(4)",
            _date("departure_date", 5, 30, 2026),
        ),
    ),
    (
        "Find me 3 rooms with a double bed in Las Vegas, checking in 11/11/2025 and checking "
        "out 11/14/2025, max 180 dollars a night, for 6 adults.",
        _program(
            'API.select_booking_type("hotels")',
            "API.set_num_rooms(3)",
            'API.select_room_type("Double")',
            "API.set_num_adults(6)",
            _place("location", "set_hotel_location", "Las Vegas"),
            _date("checkin_date", 11, 11, 2025),
            _date("checkout_date", 11, 14, 2025),
            "API.set_max_room_price(180)",
        ),
    ),
    (
        "Train from New Haven to Boston on 2025-09-12 for 1 adult with tickets under $60, and a "
        "hotel in Boston with a queen bed from 2025-09-12 to 2025-09-14 under $280 per night.",
        _program(
            'API.select_booking_type("both")',
            'API.select_transportation("train")',
            _place("location_from", "set_origin", "New Haven"),
            _place("location_to", "set_destination", "Boston"),
            "API.set_num_adults(1)",
            "API.set_max_ticket_price(60)",
            'API.select_room_type("Queen Bed")',
            _place("hotel_location", "set_hotel_location", "Boston"),
            _date("checkin_date", 9, 12, 2025),
            _date("checkout_date", 9, 14, 2025),
            "API.set_max_room_price(280)",
        ),
    ),
    (
        "Hotel rooms for 2 adults and 2 kids in Orlando from June 10, 2026 to June 17, 2026, 2 "
        "rooms with king beds.",
        _program(
            'API.select_booking_type("hotels")',
            "API.set_num_adults(2)",
            "API.set_num_children(2)",
            "API.set_num_rooms(2)",
            'API.select_room_type("King Bed")',
            _place("location", "set_hotel_location", "Orlando"),
            _date("checkin_date", 6, 10, 2026),
            _date("checkout_date", 6, 17, 2026),
        ),
    ),
    (
        "Get me cruise tickets from Seattle to Juneau for 2 adults, departing June 3, 2025 and "
        "returning June 10, 2025, plus a hotel there for the same dates.",
        _program(
            'API.select_booking_type("both")',
            'API.select_transportation("cruise")',
            _place("location_from", "set_origin", "Seattle"),
            _place("location_to", "set_destination", "Juneau"),
            "API.set_num_adults(2)",
            _place("hotel_location", "set_hotel_location", "Juneau"),
            _date("checkin_date", 6, 3, 2025),
            _date("checkout_date", 6, 10, 2025),
        ),
    ),
    (
        "Looking for a hotel in Denver checking in 2026-02-14 and checking out 2026-02-16 for 2 "
        "adults.",
        _program(
            'API.select_booking_type("hotels")',
            "API.set_num_adults(2)",
            _place("location", "set_hotel_location", "Denver"),
            _date("checkin_date", 2, 14, 2026),
            _date("checkout_date", 2, 16, 2026),
        ),
    ),
]
