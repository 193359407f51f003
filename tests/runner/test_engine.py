"""One sample through the engine: nothing a reply triggers while scoring ends the run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from toolbench.runner.engine import PreparedTask, run_all, solve_one
from toolbench.runner.store import RunStore, read_records
from toolbench.sandbox.memo import ProgramRunner
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


class RaisingTask:
    name = "fake"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def extract_action(self, text: str) -> str:
        return text

    async def score(self, data: Any, sample: Sample, action: str, sandbox: Any) -> Outcome:
        raise self.error


def prepared(error: BaseException) -> PreparedTask:
    task = cast(Any, RaisingTask(error))
    return PreparedTask(task=task, data=cast(Any, None), prompter=cast(Any, FakePrompter()),
                        samples=[SAMPLE])  # fmt: skip


@pytest.mark.parametrize(
    ("error", "status", "text"),
    [
        (RecursionError("maximum recursion depth exceeded"), Status.MODEL_ERROR, "RecursionError"),
        (ValueError("x" * 10_000 + "\nsecond line"), Status.MODEL_ERROR, "internal error"),
        (InfraError("live host: 503"), Status.INFRA_ERROR, "503"),
    ],
)
def test_an_exception_while_scoring_is_that_samples_outcome(
    error: BaseException, status: Status, text: str
) -> None:
    sandbox = cast(ProgramRunner, None)
    outcome, generation, prediction, _ = asyncio.run(
        solve_one(prepared(error), SAMPLE, 0, cast(Any, FakeModel()), sandbox)
    )
    assert outcome.status is status and text in outcome.message
    assert "\n" not in outcome.message and len(outcome.message) <= 600
    assert generation is not None and prediction == "API.search()"


def test_the_run_goes_on_and_logs_the_failure(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    stats = asyncio.run(
        run_all([prepared(RecursionError("deep"))], 2, set(), cast(Any, FakeModel()),
                cast(ProgramRunner, None), store, concurrency=2)
    )  # fmt: skip
    store.close()
    assert stats.done == 2 and stats.counts["model_error"] == 2
    assert [r["status"] for r in read_records(tmp_path)] == ["model_error", "model_error"]
    assert store.verify().ok
