"""Programs that reach the same final state are the same answer; near-misses are not.

Each rule of the issue has its own case. Scoring goes through the real sandbox and simulators.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolbench.core.task import TaskData
from toolbench.kinds.program_task import ProgramTask
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.booking import TASK as BOOKING
from toolbench.tasks.home_search import TASK as HOME
from toolbench.types import Sample, Status, TaskContext

HOME_GOLD = (
    'API.set_location("Austin")\n'
    'API.set_buy_or_rent("buy")\n'
    'API.select_home_type(["Condo", "Townhouse"])\n'
    "API.set_num_beds(3)\n"
    "API.set_max_price(650000)\n"
    "API.search()"
)
BOOKING_GOLD = (
    'API.select_booking_type("both")\n'
    'API.select_transportation("train")\n'
    'origin = Loc("Denver")\nAPI.set_origin(origin)\n'
    'destination = Loc("Omaha")\nAPI.set_destination(destination)\n'
    "API.set_num_adults(2)\n"
    'hotel = Loc("Omaha")\nAPI.set_hotel_location(hotel)\n'
    "API.set_checkin_date(Date(5, 2, 2025))\n"
    "API.set_checkout_date(Date(5, 6, 2025))\n"
    "API.search()"
)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2) as pool:
        yield pool


def _score(
    task: ProgramTask, gold: str, prediction: str, sandbox: SandboxPool
) -> tuple[Status, bool, float]:
    import asyncio

    sample = Sample(id="0", task=task.name, query="q", labels=(gold,))
    gold_state = sandbox.run(task.world, gold)
    assert gold_state.ok, gold_state.error
    data = TaskData(
        task.name, "v0", [sample], TaskContext((), ()), "", "", {"0": [gold_state.state]}
    )
    outcome = asyncio.run(task.score(data, sample, prediction, sandbox))
    return outcome.status, outcome.success, outcome.metrics.get("f1", 0.0)


EQUIVALENT_HOME = {
    "identical": HOME_GOLD,
    "reordered setters": (
        'API.set_location("Austin")\nAPI.set_buy_or_rent("buy")\nAPI.set_max_price(650000)\n'
        'API.set_num_beds(3)\nAPI.select_home_type(["Condo", "Townhouse"])\nAPI.search()'
    ),
    "single quotes": HOME_GOLD.replace('"', "'"),
    "keyword arguments": HOME_GOLD.replace("set_num_beds(3)", "set_num_beds(value=3)").replace(
        'select_home_type(["Condo", "Townhouse"])',
        'select_home_type(home_types=["Condo", "Townhouse"])',
    ),
    "value set twice, last wins": HOME_GOLD.replace(
        "API.set_num_beds(3)", "API.set_num_beds(2)\nAPI.set_num_beds(3)"
    ),
    "explicit default": HOME_GOLD.replace("API.search()", "API.set_min_price(0)\nAPI.search()"),
    "home types in another order and case": HOME_GOLD.replace(
        '["Condo", "Townhouse"]', '["townhouse", "CONDO"]'
    ),
    "variables and loops": (
        'API.set_location("Austin")\nAPI.set_buy_or_rent("buy")\n'
        'kinds = []\nfor k in ("Condo", "Townhouse"):\n    kinds.append(k)\n'
        "API.select_home_type(kinds)\nbeds = 1 + 2\nAPI.set_num_beds(beds)\n"
        "API.set_max_price(650_000)\nAPI.search()"
    ),
    "fenced chat reply": "Here you go:\n```python\n" + HOME_GOLD + "\n```",
}

WRONG_HOME = {
    "wrong value": HOME_GOLD.replace("set_num_beds(3)", "set_num_beds(4)"),
    "missing criterion": HOME_GOLD.replace("API.set_max_price(650000)\n", ""),
    "extra criterion": HOME_GOLD.replace("API.search()", "API.set_num_garages(1)\nAPI.search()"),
    "string instead of number": HOME_GOLD.replace("set_num_beds(3)", 'set_num_beds("3")'),
    "rent instead of buy": HOME_GOLD.replace('"buy"', '"rent"').replace(
        '"Condo", "Townhouse"', '"Condo"'
    ),
    "search not called": HOME_GOLD.replace("\nAPI.search()", ""),
}

CRASHING_HOME = {
    "buy_or_rent before location": 'API.set_buy_or_rent("buy")\n'
    + HOME_GOLD.replace('API.set_buy_or_rent("buy")\n', ""),
    "criterion before buy_or_rent": HOME_GOLD.replace('API.set_buy_or_rent("buy")\n', "").replace(
        'API.set_location("Austin")\n',
        'API.set_location("Austin")\nAPI.set_num_beds(3)\nAPI.set_buy_or_rent("buy")\n',
    ),
    "home type not allowed for rent": HOME_GOLD.replace('"buy"', '"rent"').replace(
        '"Condo", "Townhouse"', '"Land"'
    ),
    "unknown method": HOME_GOLD.replace("set_num_beds", "set_bedrooms"),
    "syntax error": 'API.set_location("Austin"',
}


@pytest.mark.parametrize("name", list(EQUIVALENT_HOME))
def test_equivalent_home_programs_succeed(name: str, sandbox: SandboxPool) -> None:
    prediction = HOME.extract_action(EQUIVALENT_HOME[name])
    assert _score(HOME, HOME_GOLD, prediction, sandbox) == (Status.SCORED, True, 1.0)


@pytest.mark.parametrize("name", list(WRONG_HOME))
def test_wrong_home_programs_fail(name: str, sandbox: SandboxPool) -> None:
    status, success, f1 = _score(HOME, HOME_GOLD, WRONG_HOME[name], sandbox)
    assert status is Status.SCORED and not success and f1 < 1.0


@pytest.mark.parametrize("name", list(CRASHING_HOME))
def test_precondition_violations_crash(name: str, sandbox: SandboxPool) -> None:
    status, success, _ = _score(HOME, HOME_GOLD, CRASHING_HOME[name], sandbox)
    assert status is Status.MODEL_ERROR and not success


EQUIVALENT_BOOKING = {
    "identical": BOOKING_GOLD,
    "inline Loc and single quotes": BOOKING_GOLD.replace('"', "'").replace(
        "origin = Loc('Denver')\nAPI.set_origin(origin)", "API.set_origin(Loc('Denver'))"
    ),
    "explicit defaults for both": BOOKING_GOLD.replace(
        "API.search()",
        "API.set_num_rooms(1)\nAPI.set_departure_date(Date(5, 2, 2025))\n"
        "API.set_return_date(Date(5, 6, 2025))\nAPI.set_min_room_price(0)\nAPI.search()",
    ),
    "keyword Date arguments": BOOKING_GOLD.replace(
        "Date(5, 2, 2025)", "Date(month=5, day=2, year=2025)"
    ),
    "reordered setters": BOOKING_GOLD.replace("API.set_num_adults(2)\n", "").replace(
        "API.search()", "API.set_num_adults(2)\nAPI.search()"
    ),
}

WRONG_BOOKING = {
    "wrong date": BOOKING_GOLD.replace("Date(5, 6, 2025)", "Date(5, 7, 2025)"),
    "swapped origin and destination": BOOKING_GOLD.replace(
        'origin = Loc("Denver")', 'origin = Loc("Omaha")'
    ).replace('destination = Loc("Omaha")', 'destination = Loc("Denver")'),
    "wrong transportation": BOOKING_GOLD.replace('"train"', '"bus"'),
    "extra children": BOOKING_GOLD.replace("API.search()", "API.set_num_children(1)\nAPI.search()"),
}

CRASHING_BOOKING = {
    "booking type not first": "API.set_num_adults(2)\n" + BOOKING_GOLD,
    "plain string instead of Loc": BOOKING_GOLD.replace(
        "API.set_origin(origin)", 'API.set_origin("Denver")'
    ),
    "missing required hotel location": BOOKING_GOLD.replace("API.set_hotel_location(hotel)\n", ""),
    "bad booking type": BOOKING_GOLD.replace('"both"', '"flights"'),
}


@pytest.mark.parametrize("name", list(EQUIVALENT_BOOKING))
def test_equivalent_booking_programs_succeed(name: str, sandbox: SandboxPool) -> None:
    assert _score(BOOKING, BOOKING_GOLD, EQUIVALENT_BOOKING[name], sandbox) == (
        Status.SCORED,
        True,
        1.0,
    )


@pytest.mark.parametrize("name", list(WRONG_BOOKING))
def test_wrong_booking_programs_fail(name: str, sandbox: SandboxPool) -> None:
    status, success, f1 = _score(BOOKING, BOOKING_GOLD, WRONG_BOOKING[name], sandbox)
    assert status is Status.SCORED and not success and f1 < 1.0


@pytest.mark.parametrize("name", list(CRASHING_BOOKING))
def test_booking_violations_crash(name: str, sandbox: SandboxPool) -> None:
    status, success, _ = _score(BOOKING, BOOKING_GOLD, CRASHING_BOOKING[name], sandbox)
    assert status is Status.MODEL_ERROR and not success
