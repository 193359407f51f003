"""The retry layer's breaker, its time budget and its context overflows.

The breaker and the budget run on an injected clock (``FakeTime``: sleeping moves it), so
"10 seconds of failures" takes no wall time.
"""

from __future__ import annotations

import asyncio
import errno

import httpx
import openai
import pytest

from tests.overflow_server import OverflowServer
from toolbench.models.base import ModelOptions
from toolbench.models.openai_compat import OpenAIModel
from toolbench.models.retry import (
    BREAKER_WINDOW_S,
    Breaker,
    RetryingModel,
    default_retry_budget,
    is_connection_failure,
)
from toolbench.models.spec import make_model
from toolbench.types import (
    ContextOverflow,
    Generation,
    GenerationRequest,
    InfraError,
    ServiceDown,
)

REQUEST = GenerationRequest(prompt="hello")


class FakeTime:
    """A clock that only sleeping moves; records the delays slept."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.delays: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.delays.append(delay)
        self.now += delay
        await asyncio.sleep(0)


class Scripted:
    """A backend that raises (or answers) what it is told, one step per call; each call takes
    ``took_s`` of the fake clock."""

    name = "scripted"
    cacheable = False

    def __init__(self, steps: list[BaseException | str], clock: FakeTime, took_s: float = 0.0):
        self.steps, self.clock, self.took_s = list(steps), clock, took_s
        self.started: list[float] = []

    async def generate(self, request: GenerationRequest) -> Generation:
        self.started.append(self.clock.now)
        self.clock.now += self.took_s
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, BaseException):
            raise step
        return Generation(text=step)

    async def aclose(self) -> None:
        return None


def refused() -> openai.APIConnectionError:
    error = openai.APIConnectionError(
        message="Connection error: Connection refused",
        request=httpx.Request("POST", "http://127.0.0.1:9/v1/completions"),
    )
    error.__cause__ = ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    return error


def timed_out() -> openai.APITimeoutError:
    return openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1:9/v1"))


# ---- the breaker on its own ----


def test_breaker_opens_after_the_window_with_enough_failures() -> None:
    clock = FakeTime()
    breaker = Breaker("http://h/v1", clock=clock)
    breaker.failure("Connection refused")
    clock.now += 4
    breaker.failure("Connection refused")
    clock.now += 5.9
    breaker.failure("Connection refused")  # three failures, but only 9.9 s
    assert not breaker.is_open and breaker.deciding_in() == pytest.approx(0.1)
    breaker.check()
    clock.now += 0.1
    breaker.failure("Connection refused")
    assert breaker.is_open and breaker.deciding_in() is None
    with pytest.raises(ServiceDown, match=r"^the model server at http://h/v1 stopped answering"):
        breaker.check()
    assert breaker.opened_message == (
        "the model server at http://h/v1 stopped answering (Connection refused since 10 s)"
    )
    breaker.success()  # an answer closes it
    assert not breaker.is_open and breaker.deciding_in() is None
    breaker.check()


def test_two_failures_however_far_apart_do_not_open_it() -> None:
    clock = FakeTime()
    breaker = Breaker("u", clock=clock)
    breaker.failure("reset")
    clock.now += 100
    breaker.failure("reset")
    assert not breaker.is_open


def test_an_answer_in_between_starts_the_count_again() -> None:
    clock = FakeTime()
    breaker = Breaker("u", clock=clock)
    for _ in range(5):
        breaker.failure("refused")
        clock.now += 3
    breaker.success()
    breaker.failure("refused")
    clock.now += 9
    breaker.failure("refused")
    breaker.failure("refused")
    assert not breaker.is_open


def test_what_counts_as_a_connection_failure() -> None:
    assert is_connection_failure(refused())
    assert is_connection_failure(httpx.ConnectError("refused"))
    assert is_connection_failure(ConnectionResetError())
    assert not is_connection_failure(timed_out())
    assert not is_connection_failure(httpx.ReadTimeout("slow"))
    assert not is_connection_failure(TimeoutError())
    wrapped = openai.APIConnectionError(request=httpx.Request("POST", "http://x"))
    wrapped.__cause__ = TimeoutError()
    assert not is_connection_failure(wrapped)


# ---- the breaker in the retry loop, shared by all calls ----


async def test_one_breaker_for_all_samples_stops_every_call_at_once() -> None:
    clock = FakeTime()
    inner = Scripted([refused()], clock)
    model = RetryingModel(inner, max_retries=100, sleep=clock.sleep, clock=clock, rng=lambda: 1.0)
    with pytest.raises(ServiceDown):
        await model.generate(REQUEST)
    calls = len(inner.started)
    assert clock.now - 1000.0 >= BREAKER_WINDOW_S
    assert clock.now - 1000.0 < BREAKER_WINDOW_S + 8.0  # it stopped at the first chance
    # Every later call, new or retrying, raises at once without touching the server.
    for _ in range(3):
        with pytest.raises(ServiceDown, match="Connection refused since"):
            await model.generate(GenerationRequest(prompt="another"))
    assert len(inner.started) == calls and model.failures == 0


async def test_a_retry_asleep_when_the_breaker_opens_wakes_and_stops() -> None:
    """Sample A sleeps a long backoff (real asyncio sleep); sample B's failures open the
    breaker; A must end with ServiceDown at once, not after its sleep."""
    clock = FakeTime()
    inner = Scripted([refused()], clock)
    breaker = Breaker("u", clock=clock)
    sleeper = RetryingModel(
        inner, max_retries=5, base_delay=3600, rng=lambda: 1.0, clock=clock, breaker=breaker
    )
    prober = RetryingModel(inner, max_retries=0, sleep=clock.sleep, clock=clock, breaker=breaker)
    sleeping = asyncio.create_task(sleeper.generate(REQUEST))
    await asyncio.sleep(0.05)
    assert not sleeping.done() and breaker.failures == 1
    with pytest.raises(ServiceDown):
        await prober.generate(REQUEST)  # fails, waits for the decision, probes: opens it
    with pytest.raises(ServiceDown):
        await asyncio.wait_for(sleeping, timeout=30)


async def test_samples_that_run_out_of_retries_wait_for_the_decision() -> None:
    """With a dead server, a call out of attempts before the window is up is not written off
    as an infra error: it waits for the breaker, probes once, and ends with ServiceDown."""
    clock = FakeTime()
    inner = Scripted([refused()], clock)
    model = RetryingModel(inner, max_retries=1, sleep=clock.sleep, clock=clock, rng=lambda: 0.0)
    with pytest.raises(ServiceDown):
        await model.generate(REQUEST)
    assert len(inner.started) == 3 and clock.delays == [0.0, BREAKER_WINDOW_S]


async def test_a_server_that_answers_others_gets_an_infra_error_not_a_stop() -> None:
    """Connection failures of one call while other calls are answered: the breaker never
    opens, the call gives up as before (an infra error, retried on resume)."""
    clock = FakeTime()
    breaker = Breaker("u", clock=clock)
    flaky = RetryingModel(
        Scripted([refused()], clock),
        max_retries=2,
        sleep=clock.sleep,
        clock=clock,
        breaker=breaker,
        rng=lambda: 1.0,
    )
    fine = RetryingModel(Scripted(["ok"], clock), max_retries=0, clock=clock, breaker=breaker)
    task = asyncio.create_task(flaky.generate(REQUEST))
    for _ in range(50):
        await fine.generate(REQUEST)  # answers keep arriving while the flaky call retries
        await asyncio.sleep(0)
    with pytest.raises(InfraError) as caught:
        await task
    assert not isinstance(caught.value, ServiceDown)
    assert not breaker.is_open


async def test_timeouts_never_open_the_breaker() -> None:
    clock = FakeTime()
    inner = Scripted([timed_out()], clock, took_s=5.0)
    model = RetryingModel(inner, max_retries=6, sleep=clock.sleep, clock=clock)
    with pytest.raises(InfraError, match="gave up after 7 attempts") as caught:
        await model.generate(REQUEST)
    assert not isinstance(caught.value, ServiceDown) and not model.breaker.is_open


# ---- the time budget ----


async def test_no_attempt_starts_past_the_budget() -> None:
    clock = FakeTime()
    inner = Scripted([timed_out()], clock, took_s=10.0)  # each attempt times out after 10 s
    model = RetryingModel(
        inner,
        max_retries=50,
        base_delay=1.0,
        max_delay=4.0,
        sleep=clock.sleep,
        clock=clock,
        rng=lambda: 1.0,
        budget_s=30.0,
    )
    with pytest.raises(InfraError, match=r"within the 30 s retry budget"):
        await model.generate(REQUEST)
    start = 1000.0
    assert inner.started and all(t < start + 30.0 for t in inner.started)
    # 0, 11, 23: the next would start at 37.
    assert inner.started == [start, start + 11.0, start + 23.0]


def test_default_budget_follows_the_timeout() -> None:
    assert default_retry_budget(10.0) == 60.0
    assert default_retry_budget(60.0) == 180.0


def test_make_model_wires_the_budget() -> None:
    options = ModelOptions(base_url="http://127.0.0.1:9/v1", timeout_s=30.0)
    model = make_model("openai:x", options)
    assert isinstance(model, RetryingModel) and model.budget_s == 90.0
    chosen = make_model("openai:x", ModelOptions(base_url="http://h/v1", retry_budget_s=5.0))
    assert isinstance(chosen, RetryingModel) and chosen.budget_s == 5.0


# ---- context overflow: the model's failure, never retried ----


@pytest.mark.parametrize("style", ["v18", "v10", "old"])
async def test_a_vllm_overflow_is_a_context_overflow_not_retried(style: str) -> None:
    with OverflowServer(context_length=50, style=style) as server:
        inner = OpenAIModel("x", ModelOptions(base_url=server.base_url))
        model = RetryingModel(inner, max_retries=5, rng=lambda: 0.0)
        long = GenerationRequest(prompt="word " * 40, max_tokens=20)
        with pytest.raises(ContextOverflow) as caught:
            await model.generate(long)
        short = await model.generate(GenerationRequest(prompt="word " * 5, max_tokens=20))
        await model.aclose()
    assert (caught.value.prompt_tokens, caught.value.max_tokens) == (40, 20)
    assert caught.value.context_length == 50
    assert model.attempts == 2 and model.overflows == 1 and model.failures == 0
    assert server.refused == 1 and short.text == "search()"


async def test_the_listing_gives_the_context_length_the_message_lacks() -> None:
    """llama.cpp's older message names no numbers; the window from GET /models is named."""

    class Refusing(OpenAIModel):
        async def _post(self, path: str, body: dict[str, object]) -> object:
            response = httpx.Response(
                400,
                json={
                    "error": {
                        "code": 400,
                        "type": "exceed_context_size_error",
                        "message": "the request exceeds the available context size, "
                        "try increasing it",
                    }
                },
                request=httpx.Request("POST", "http://x"),
            )
            raise openai.BadRequestError("refused", response=response, body=None)

    with OverflowServer(context_length=777, model="x") as server:
        inner = Refusing("x", ModelOptions(base_url=server.base_url))
        await inner.preflight()
        model = RetryingModel(inner, max_retries=3)
        with pytest.raises(ContextOverflow, match="context window of 777 tokens") as caught:
            await model.generate(REQUEST)
        await model.aclose()
    assert inner.context_length == 777 and caught.value.context_length == 777
