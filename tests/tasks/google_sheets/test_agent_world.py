"""google_sheets as an agent's world: every v0 gold, run on the recording sheet, becomes
worksheet calls that score success; bad calls are error replies; reads answer JSON."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from tests.kinds.tool_calling import agent_checks as checks
from toolbench.core.agent import HasAgentWorld
from toolbench.core.task import TaskData, load_prepared
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.google_sheets import TASK


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2) as pool:
        yield pool


@pytest.fixture(scope="module")
def data(sandbox: SandboxPool) -> TaskData:
    return load_prepared(TASK, "v0", None, sandbox)


@pytest.mark.slow
def test_every_gold_as_calls_scores_success(data: TaskData, sandbox: SandboxPool) -> None:
    assert isinstance(TASK, HasAgentWorld)
    checks.check_golds(TASK, data, data.samples, sandbox, {})


def test_one_wrong_argument_fails(data: TaskData, sandbox: SandboxPool) -> None:
    sample = next(s for s in data.samples if "update_acell('E28', 13)" in s.labels[0])
    checks.check_wrong_argument(TASK, data, sample, sandbox)


def test_bad_calls_are_error_replies_that_change_nothing(
    data: TaskData, sandbox: SandboxPool
) -> None:
    sample = next(s for s in data.samples if "update_acell('E28', 13)" in s.labels[0])
    checks.check_refusals(
        TASK,
        data,
        sample,
        sandbox,
        [
            ("no_such_tool", {}),
            ("update_acell", {"label": "A1"}),  # missing argument
            ("update_cell", {"row": "one", "col": 1, "value": 2}),  # wrong type
            ("update_acell", {"label": "A1", "value": 1, "extra": 1}),
            ("update_acell", {"label": "not a cell", "value": 1}),  # the emulator refuses it
            ("update_acell", "garbage"),
            (None, None),
            ("update", {"values": [[float("nan")]]}),
            ("sort", {"specs": []}),
        ],
    )


def test_reads_answer_json(data: TaskData, sandbox: SandboxPool) -> None:
    async def run() -> None:
        world = checks.world_of(TASK, data, data.samples[0], sandbox)
        reply = await world.call("get_all_values", {})
        assert not reply.is_error, reply.text
        rows = json.loads(reply.text)
        assert isinstance(rows, list) and rows and isinstance(rows[0], list)
        cell = json.loads((await world.call("acell", {"label": "A1"})).text)
        assert cell == {"row": 1, "col": 1, "value": rows[0][0]}

    asyncio.run(run())


def test_failed_is_a_model_error(data: TaskData, sandbox: SandboxPool) -> None:
    checks.check_failed(TASK, data, data.samples[0], sandbox)


def test_untranslatable_actions(data: TaskData, sandbox: SandboxPool) -> None:
    checks.check_untranslatable(
        TASK, data, data.samples[0], sandbox, ["import os", "worksheet.update(", "1/0"]
    )


def test_tools(data: TaskData, sandbox: SandboxPool) -> None:
    world = checks.world_of(TASK, data, data.samples[0], sandbox)
    checks.check_tools(world)
    names = {tool.name for tool in world.tools}
    assert {"update", "sort", "get_all_values", "format"} <= names
    assert not names & {"get_as_dataframe", "set_with_dataframe", "worksheet"}
