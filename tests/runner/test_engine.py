"""One sample through the engine: nothing a reply triggers while solving ends the run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import Resources
from toolbench.kinds.single_turn import QueryPrompt, solve_single_turn
from toolbench.runner.engine import SampleWork, SessionStats, run_work, solve_sample
from toolbench.runner.store import RunStore, read_records
from toolbench.sandbox import SandboxError
from toolbench.types import Generation, GenerationRequest, InfraError, Outcome, Sample, Status

SAMPLE = Sample(id="0", task="fake", query="q", labels=("x",))


class FakePrompter:
    def request(self, sample: Sample, epoch: int = 0) -> GenerationRequest:
        return GenerationRequest(prompt=f"{sample.query} {epoch}")


class FakeModel:
    async def generate(self, request: GenerationRequest) -> Generation:
        return Generation(text="API.search()")

    async def aclose(self) -> None:
        return None


class RaisingTask(QueryPrompt):
    name = "fake"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def extract_action(self, text: str) -> str:
        return text

    async def score(self, data: Any, sample: Sample, action: str, sandbox: Any) -> Outcome:
        raise self.error

    async def solve(self, state: SampleState, generate: Generate, resources: Any) -> Outcome:
        return await solve_single_turn(self, state, generate, resources)


RESOURCES = Resources(
    data=cast(Any, None), sandbox=cast(Any, None), prompter=cast(Any, FakePrompter())
)


def solve(error: BaseException) -> dict[str, Any]:
    task = cast(Any, RaisingTask(error))
    return asyncio.run(solve_sample(task, RESOURCES, SAMPLE, 0, cast(Any, FakeModel())))


@pytest.mark.parametrize(
    ("error", "status", "text"),
    [
        (RecursionError("maximum recursion depth exceeded"), Status.MODEL_ERROR, "RecursionError"),
        (ValueError("x" * 10_000 + "\nsecond line"), Status.MODEL_ERROR, "internal error"),
        (InfraError("live host: 503"), Status.INFRA_ERROR, "503"),
        (SandboxError("worker would not start"), Status.INFRA_ERROR, "sandbox: worker"),
    ],
)
def test_an_exception_while_scoring_is_that_samples_outcome(
    error: BaseException, status: Status, text: str
) -> None:
    record = solve(error)
    assert record["status"] == status.value and text in record["message"]
    assert "\n" not in record["message"] and len(record["message"]) <= 600
    assert record["prediction"] == "API.search()"
    assert [call["step"] for call in record["calls"]] == ["answer"]
    assert record["calls"][0]["text"] == "API.search()"


def test_the_run_goes_on_and_logs_the_failure(tmp_path: Path) -> None:
    from toolbench.runner.engine import PreparedTask

    task = cast(Any, RaisingTask(RecursionError("deep")))
    work = SampleWork([PreparedTask(task, RESOURCES, [SAMPLE])], 2, cast(Any, FakeModel()))
    store, stats = RunStore(tmp_path), SessionStats()
    asyncio.run(run_work(work, store, 2, stats))
    store.close()
    assert stats.done == 2 and stats.counts["model_error"] == 2 and stats.model_calls == 2
    assert [r["status"] for r in read_records(tmp_path)] == ["model_error", "model_error"]
    assert store.verify().ok
