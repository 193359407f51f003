"""The runner's limits on work over model text: the reply cap and ``off_loop``'s deadline."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from toolbench.core import solve
from toolbench.core.solve import DeadlineExceeded, Recorder, SampleState, guarded_solve, off_loop
from toolbench.models.base import ModelOutputError
from toolbench.types import Generation, GenerationRequest, Sample, Status

SAMPLE = Sample(id="s", task="t", query="q", labels=())


def test_small_work_runs_inline_and_large_work_in_another_thread() -> None:
    async def main() -> tuple[str, str]:
        small = await off_loop(lambda: threading.current_thread().name, size=10)
        large = await off_loop(lambda: threading.current_thread().name, size=1_000_000)
        return small, large

    small, large = asyncio.run(main())
    assert small == threading.main_thread().name
    assert large != small


def test_an_error_in_the_work_reaches_the_caller() -> None:
    def fails() -> None:
        raise ValueError("bad line")

    with pytest.raises(ValueError, match="bad line"):
        asyncio.run(off_loop(fails, size=10**6))


def test_past_the_deadline_the_sample_fails_and_the_loop_kept_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(solve, "SCORING_DEADLINE_S", 0.3)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    def busy() -> int:
        end = time.perf_counter() + 5  # CPU-bound Python, as scoring is
        n = 0
        while time.perf_counter() < end:
            n += 1
        return n

    async def main() -> float:
        other = asyncio.create_task(ticker())
        start = time.perf_counter()
        with pytest.raises(DeadlineExceeded, match=r"0\.3 s deadline"):
            await off_loop(busy, size=10**6, what="scoring this reply")
        other.cancel()
        return time.perf_counter() - start

    waited = asyncio.run(main())
    assert waited < 3  # the caller did not wait for the 5 s of work
    assert ticks >= 5  # other coroutines ran meanwhile


def test_a_deadline_breach_is_the_samples_model_error() -> None:
    async def late() -> Any:
        raise DeadlineExceeded("scoring this reply ran past its 30 s deadline")

    state = SampleState(sample=SAMPLE, epoch=0)
    outcome = asyncio.run(guarded_solve(late, state))
    assert outcome.status is Status.MODEL_ERROR
    assert "DeadlineExceeded" in outcome.message and "30 s deadline" in outcome.message


class _Huge:
    name = "huge"
    cacheable = False

    async def generate(self, request: GenerationRequest) -> Generation:
        return Generation(text="(" * 2_000)


def test_a_reply_over_the_cap_is_recorded_then_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solve, "MAX_REPLY_CHARS", 1_000)
    state = SampleState(sample=SAMPLE, epoch=0)
    recorder = Recorder(_Huge(), state)  # type: ignore[arg-type]
    with pytest.raises(ModelOutputError, match=r"2,000 characters.*at most 1,000"):
        asyncio.run(recorder(GenerationRequest(prompt="p")))
    assert len(state.calls) == 1  # the call happened and is counted
