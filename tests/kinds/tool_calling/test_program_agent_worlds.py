"""home_search and booking as agents' worlds: the shared AgentWorld checks
(``agent_checks``) on each task's shipped v0 data, with each task's own bad calls."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.kinds.tool_calling import agent_checks as checks
from toolbench.core.agent import HasAgentWorld
from toolbench.core.task import TaskData, load_prepared
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.booking import TASK as BOOKING
from toolbench.tasks.home_search import TASK as HOME_SEARCH

FULL_MARKS = {"precision": 1.0, "recall": 1.0, "f1": 1.0}


@dataclass(frozen=True)
class Case:
    task: Any
    refusals: list[tuple[Any, Any]]  # calls the world must answer with an error
    tools: set[str]  # some of the tools it must list


CASES = {
    "home_search": Case(
        HOME_SEARCH,
        [
            ("no_such_tool", {}),
            ("set_num_beds", {}),  # missing argument
            ("set_num_beds", {"value": "three"}),  # wrong type
            ("set_num_beds", {"value": 3, "extra": 1}),  # extra argument
            ("set_buy_or_rent", {"value": "lease"}),  # the simulator refuses it
            ("set_location", {"value": "Austin"}),  # out of order: refused
            ("set_num_beds", "garbage"),  # not an object
            (None, None),
            ("select_home_type", {"home_types": ["x"] * 1000}),
        ],
        {"set_location", "search"},
    ),
    "booking": Case(
        BOOKING,
        [
            ("no_such_tool", {}),
            ("set_num_adults", {}),  # missing argument
            ("set_num_adults", {"value": "two"}),  # wrong type
            ("set_checkin_date", {"value": {"month": 1, "day": 2}}),  # date without a year
            ("set_checkin_date", {"value": "2025-01-02"}),  # a date as text
            ("set_origin", {"value": 7}),
            ("set_num_adults", {"value": 2, "extra": 1}),  # extra argument
            ("select_booking_type", {"booking_type": "cruise"}),  # the simulator refuses it
            ("set_num_adults", "garbage"),  # not an object
            (None, None),
        ],
        {"set_origin", "search"},
    ),
}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2) as pool:
        yield pool


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request: pytest.FixtureRequest, sandbox: SandboxPool) -> tuple[Case, TaskData]:
    chosen = CASES[request.param]
    return chosen, load_prepared(chosen.task, "v0", None, sandbox)


def test_every_gold_as_calls_scores_full_marks(
    case: tuple[Case, TaskData], sandbox: SandboxPool
) -> None:
    chosen, data = case
    assert isinstance(chosen.task, HasAgentWorld)
    checks.check_golds(chosen.task, data, data.samples, sandbox, FULL_MARKS)


def test_one_wrong_argument_fails(case: tuple[Case, TaskData], sandbox: SandboxPool) -> None:
    chosen, data = case
    checks.check_wrong_argument(chosen.task, data, data.samples[0], sandbox)


def test_bad_calls_are_error_replies_that_change_nothing(
    case: tuple[Case, TaskData], sandbox: SandboxPool
) -> None:
    chosen, data = case
    checks.check_refusals(chosen.task, data, data.samples[0], sandbox, chosen.refusals)


def test_failed_is_a_model_error_at_zero(case: tuple[Case, TaskData], sandbox: SandboxPool) -> None:
    chosen, data = case
    checks.check_failed(chosen.task, data, data.samples[0], sandbox)


def test_untranslatable_actions(case: tuple[Case, TaskData], sandbox: SandboxPool) -> None:
    chosen, data = case
    checks.check_untranslatable(
        chosen.task,
        data,
        data.samples[0],
        sandbox,
        ["for x in range(3):\n    API.search()", "import os", "API.search(", "print(1)"],
    )


def test_tools(case: tuple[Case, TaskData], sandbox: SandboxPool) -> None:
    chosen, data = case
    world = checks.world_of(chosen.task, data, data.samples[0], sandbox)
    checks.check_tools(world)
    assert {tool.name for tool in world.tools} >= chosen.tools
    assert world.request == data.samples[0].query
