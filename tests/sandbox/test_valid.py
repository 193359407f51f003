"""Valid programs produce exactly the world state the simulators define."""

from __future__ import annotations

import pytest

from tests.sandbox.worlds import modules_world, record_world
from toolbench.sandbox import SandboxPool
from toolbench.tasks.booking.world import make_world as booking_world
from toolbench.tasks.home_search.world import make_world as home_world

HOME_CASES = [
    (
        "API.set_location('Boise')\nAPI.set_buy_or_rent('rent')\n"
        "API.select_home_type(['Apartment', 'Condo'])\nAPI.set_num_beds(2)\n"
        "API.set_max_price(2500)\nAPI.search()",
        {
            "location": "Boise",
            "buy_or_rent": "rent",
            "home_type": "apartment,condo",
            "num_beds": 2,
            "max_price": 2500,
            "min_price": 0,
            "min_square_feet": 0,
        },
    ),
    (  # double quotes, keyword arguments, floats, comments, blank lines, CRLF
        '# find a house\r\nAPI.set_location(value="Tacoma")\r\n\r\n'
        'API.set_buy_or_rent(value="buy")  # buying\r\n'
        'API.select_home_type(home_types=["House", "Multi-family", "Co-op"])\r\n'
        "API.set_num_baths(2.5)\r\nAPI.set_min_square_feet(1200)\r\nAPI.search()\r\n",
        {
            "location": "Tacoma",
            "buy_or_rent": "buy",
            "home_type": "co-op,house,multi-family",
            "num_baths": 2.5,
            "min_square_feet": 1200,
            "min_price": 0,
        },
    ),
    (  # functions, loops, comprehensions, unpacking, augmented assignment, own containers
        "def start(city, mode='buy'):\n    API.set_location(city)\n    API.set_buy_or_rent(mode)\n"
        "start('Omaha')\ntypes = [t.lower() for t in ('House', 'Condo')]\n"
        "API.select_home_type(types)\nlimits = {}\nlimits['min'], limits['max'] = 100, 200\n"
        "beds = 1\nbeds += 2\nfor key, value in sorted(limits.items()):\n    print(key, value)\n"
        "API.set_min_price(limits['min'])\nAPI.set_max_price(limits['max'])\n"
        "API.set_num_beds(beds)\nAPI.search()",
        {
            "location": "Omaha",
            "buy_or_rent": "buy",
            "home_type": "condo,house",
            "min_price": 100,
            "max_price": 200,
            "num_beds": 3,
            "min_square_feet": 0,
        },
    ),
    (  # a class of the program's own may have its attributes written
        "class Box:\n    def __init__(self, value):\n        self.value = value\n"
        "box = Box(3)\nbox.value = 4\nAPI.set_location('São Paulo')\n"
        "API.set_buy_or_rent('rent')\nAPI.set_num_beds(box.value)",
        {"location": "São Paulo", "buy_or_rent": "rent", "num_beds": 4},
    ),
    (  # own exception classes and class hierarchies
        "class Oops(ValueError):\n    pass\nclass Base:\n    kind = 'buy'\n"
        "class Child(Base):\n    pass\ntry:\n    raise Oops('x')\nexcept ValueError as e:\n"
        "    city = e.args[0]\nAPI.set_location(city)\nAPI.set_buy_or_rent(Child().kind)",
        {"location": "x", "buy_or_rent": "buy"},
    ),
]

BOOKING_CASES = [
    (
        'API.select_booking_type("trip tickets")\nAPI.select_transportation("bus")\n'
        'API.set_origin(Loc("Reno"))\nAPI.set_destination(Loc(location="Fresno"))\n'
        "API.set_departure_date(Date(3, 14, 2024))\nAPI.set_num_adults(2)\nAPI.search()",
        {
            "booking_type": "trip tickets",
            "means_of_transportation": "bus",
            "location_from": "Reno",
            "location_to": "Fresno",
            "departure_date": "3-14-2024",
            "num_adults": 2,
            "min_price_ticket": 0,
            "min_price_room": 0,
        },
    ),
    (
        "API.select_booking_type('both')\nAPI.select_transportation('flight')\n"
        "home = Loc('Austin')\naway = Loc('Miami')\nAPI.set_origin(home)\n"
        "API.set_destination(away)\nAPI.set_hotel_location(away)\n"
        "API.set_checkin_date(Date(month=7, day=1, year=2024))\n"
        "API.set_checkout_date(Date(7, 8, 2024))\nAPI.select_room_type('King Bed')\n"
        "API.set_max_room_price(300)\nprint(away.location)\nAPI.search()",
        {
            "booking_type": "both",
            "means_of_transportation": "flight",
            "location_from": "Austin",
            "location_to": "Miami",
            "location": "Miami",
            "checkin_date": "7-1-2024",
            "checkout_date": "7-8-2024",
            "room_type": "King Bed",
            "max_price_room": 300,
            "min_price_ticket": 0,
            "min_price_room": 0,
            "num_rooms": 1,
            "departure_date": "7-1-2024",
            "return_date": "7-8-2024",
        },
    ),
]


@pytest.mark.parametrize(("source", "state"), HOME_CASES)
def test_home_search_programs(pool: SandboxPool, source: str, state: dict[str, object]) -> None:
    result = pool.run(home_world, source)
    assert result.ok, result
    assert (result.kind, result.error, result.state) == ("ok", None, state)


@pytest.mark.parametrize(("source", "state"), BOOKING_CASES)
def test_booking_programs(pool: SandboxPool, source: str, state: dict[str, object]) -> None:
    result = pool.run(booking_world, source)
    assert result.ok, result
    assert result.state == state


def test_print_output_is_returned(pool: SandboxPool) -> None:
    result = pool.run(home_world, HOME_CASES[2][0])
    assert result.stdout == "max 200\nmin 100\n"
    result = pool.run(booking_world, BOOKING_CASES[1][0])
    assert result.stdout == "Miami\n"


def test_tool_errors_are_program_errors(pool: SandboxPool) -> None:
    result = pool.run(home_world, "API.set_buy_or_rent('buy')\nAPI.set_location('x')")
    assert (result.ok, result.kind) == (False, "error")
    assert result.error == "ToolError: call set_location before set_buy_or_rent"
    result = pool.run(booking_world, "API.select_booking_type('hotels')\nAPI.set_origin('Reno')")
    assert result.error == "ToolError: origin must be a Loc object, e.g. Loc('Denver')"


def test_non_json_values_become_labelled_strings(pool: SandboxPool) -> None:
    result = pool.run(booking_world, "API.select_room_type(Loc('x'))\nAPI.set_num_rooms({1})")
    assert result.ok, result
    assert result.state == {"room_type": "<Loc object>", "num_rooms": "<set object>"}
    result = pool.run(
        record_world,
        "record((1, 'a'))\nrecord(record)\nrecord({(1, 2): 'tuple key', 3: 'int key'})\n"
        "loop = []\nloop.append(loop)\nrecord(loop)\nrecord(float('inf'))",
    )
    assert result.ok, result
    first, method, keys, loop, inf = result.state
    assert first == [1, "a"]
    assert method == "<method object>"
    assert keys == {"<tuple object>": "tuple key", "3": "int key"}
    assert "<nested too deep>" in str(loop)
    assert inf == "<float inf>"  # the reply is strict JSON: no Infinity or NaN crosses


def test_empty_program_gives_the_initial_state(pool: SandboxPool) -> None:
    assert pool.run(home_world, "").state == {}
    assert pool.run(home_world, "\n# nothing\n").state == {}


def test_allowed_modules_only(pool: SandboxPool) -> None:
    ok = pool.run(
        modules_world,
        "import math\nfrom json import dumps\nimport json\n"
        "record(math.sqrt(16))\nrecord(dumps([1]))\nrecord(json.loads('[2]'))",
    )
    assert ok.ok, ok
    assert ok.state == [4.0, "[1]", [2]]
    for source, message in [
        ("import os", "import of 'os' is not allowed"),
        # allowed means exactly these modules: submodules must be named too
        ("import json.decoder as d", "import of 'json.decoder' is not allowed"),
        ("import json\njson.decoder", "module 'json.decoder' is not accessible"),
        ("from json import decoder", "importing 'decoder' from 'json' is not allowed"),
        ("import json\nrecord(json.__loader__)", "starts with"),
        ("from . import x", "only absolute imports"),
    ]:
        result = pool.run(modules_world, source)
        assert not result.ok
        assert message in (result.error or ""), (source, result)
    assert "imports are not allowed" in (pool.run(record_world, "import math").error or "")
