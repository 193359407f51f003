"""booking as an agent's world: the shared AgentWorld checks on the shipped v0 data."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tasks.tool_calling import agent_checks as checks
from toolbench.core.task import TaskData, load_prepared
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.booking import TASK

FULL_MARKS = {"precision": 1.0, "recall": 1.0, "f1": 1.0}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2) as pool:
        yield pool


@pytest.fixture(scope="module")
def data(sandbox: SandboxPool) -> TaskData:
    return load_prepared(TASK, "v0", None, sandbox)


def test_every_gold_as_calls_scores_full_marks(data: TaskData, sandbox: SandboxPool) -> None:
    assert TASK.has_agent_world
    checks.check_golds(TASK, data, data.samples, sandbox, FULL_MARKS)


def test_one_wrong_argument_fails(data: TaskData, sandbox: SandboxPool) -> None:
    checks.check_wrong_argument(TASK, data, data.samples[0], sandbox)


def test_bad_calls_are_error_replies_that_change_nothing(
    data: TaskData, sandbox: SandboxPool
) -> None:
    checks.check_refusals(
        TASK,
        data,
        data.samples[0],
        sandbox,
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
    )


def test_failed_is_a_model_error_at_zero(data: TaskData, sandbox: SandboxPool) -> None:
    checks.check_failed(TASK, data, data.samples[0], sandbox)


def test_untranslatable_actions(data: TaskData, sandbox: SandboxPool) -> None:
    checks.check_untranslatable(
        TASK,
        data,
        data.samples[0],
        sandbox,
        ["for x in range(3):\n    API.search()", "import os", "API.search(", "print(1)"],
    )


def test_tools(data: TaskData, sandbox: SandboxPool) -> None:
    world = checks.world_of(TASK, data, data.samples[0], sandbox)
    checks.check_tools(world)
    assert {tool.name for tool in world.tools} >= {"set_origin", "search"}
    assert world.request == data.samples[0].query
