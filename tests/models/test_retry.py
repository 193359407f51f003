"""RetryingModel: which failures are retried, how long it waits, and what it raises at the end."""

from __future__ import annotations

import asyncio
import socket
import time
from datetime import datetime, timezone
from email.utils import format_datetime

import httpx
import pytest

from tests.fakeserver import FakeOpenAIServer
from tests.models.conftest import FakeSleep
from tests.models.test_retry_breaker import FakeTime
from toolbench.models.base import ModelOptions, ModelOutputError
from toolbench.models.openai_compat import OpenAIModel
from toolbench.models.retry import NOT_SERVED, RetryingModel, parse_retry_after
from toolbench.types import Generation, GenerationRequest, InfraError, ServiceDown

REQUEST = GenerationRequest(prompt="hello")


def retrying(
    server: FakeOpenAIServer, sleep: FakeSleep, max_retries: int = 3, **kwargs: float
) -> RetryingModel:
    inner = OpenAIModel("fake", ModelOptions(base_url=server.base_url))
    return RetryingModel(inner, max_retries=max_retries, sleep=sleep, rng=lambda: 1.0, **kwargs)


@pytest.mark.parametrize("status", [500, 502, 503, 408, 409, 429])
async def test_transient_failures_are_retried(
    server: FakeOpenAIServer, fake_sleep: FakeSleep, status: int
) -> None:
    server.fail_first, server.fail_status = 2, status
    model = retrying(server, fake_sleep)
    generation = await model.generate(REQUEST)
    await model.aclose()
    assert generation.text == "echo: hello"
    assert server.calls == 3
    assert (model.attempts, model.retries, model.failures) == (3, 2, 0)
    # Exponential backoff (the jitter draw is pinned to its maximum here).
    assert fake_sleep.delays == model.delays == [0.5, 1.0]


async def test_full_jitter_stays_under_the_exponential_ceiling(
    server: FakeOpenAIServer, fake_sleep: FakeSleep
) -> None:
    server.fail_always = True
    inner = OpenAIModel("fake", ModelOptions(base_url=server.base_url))
    model = RetryingModel(inner, max_retries=8, base_delay=0.5, max_delay=4.0, sleep=fake_sleep)
    with pytest.raises(InfraError):
        await model.generate(REQUEST)
    await model.aclose()
    ceilings = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    assert len(fake_sleep.delays) == 8
    assert all(0 <= d <= c for d, c in zip(fake_sleep.delays, ceilings, strict=True))


async def test_intermittent_429_with_retry_after_waits_as_told(
    server: FakeOpenAIServer, fake_sleep: FakeSleep
) -> None:
    server.fail_every, server.fail_status, server.retry_after = 2, 429, "7"
    model = retrying(server, fake_sleep)
    results = [await model.generate(GenerationRequest(prompt=f"p{i}")) for i in range(4)]
    await model.aclose()
    assert [g.text for g in results] == [f"echo: p{i}" for i in range(4)]
    # Calls 2, 4, 6 fail: requests 1, 2 and 3 each need one retry.
    assert server.calls == 7 and server.failures == 3
    assert model.attempts == 7
    assert fake_sleep.delays == [7.0, 7.0, 7.0]


async def test_retry_after_is_capped_at_max_delay(
    server: FakeOpenAIServer, fake_sleep: FakeSleep
) -> None:
    server.fail_first, server.fail_status, server.retry_after = 1, 503, "3600"
    model = retrying(server, fake_sleep, max_delay=30.0)
    await model.generate(REQUEST)
    await model.aclose()
    assert fake_sleep.delays == [30.0]


def test_parse_retry_after_forms() -> None:
    now = time.time()
    date = format_datetime(datetime.fromtimestamp(now + 5, tz=timezone.utc), usegmt=True)
    assert parse_retry_after(httpx.Headers({"retry-after": "2"})) == 2.0
    assert parse_retry_after(httpx.Headers({"retry-after": "1.5"})) == 1.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert parse_retry_after(httpx.Headers({"retry-after": date}), now=now) == pytest.approx(
        5, abs=1
    )
    assert parse_retry_after(httpx.Headers({"retry-after": "-3"})) == 0.0
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None
    assert parse_retry_after(None) is None


async def test_persistent_failure_raises_infra_error_after_max_retries(
    server: FakeOpenAIServer, fake_sleep: FakeSleep
) -> None:
    server.fail_always, server.fail_status = True, 503
    model = retrying(server, fake_sleep, max_retries=3)
    with pytest.raises(InfraError) as caught:
        await model.generate(REQUEST)
    await model.aclose()
    message = str(caught.value)
    assert "\n" not in message
    assert "openai:fake" in message and "4 attempts" in message and "HTTP 503" in message
    assert server.calls == 4
    assert (model.attempts, model.retries, model.failures) == (4, 3, 1)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422, 501])  # 501: "not implemented"
async def test_request_errors_are_not_retried(
    server: FakeOpenAIServer, fake_sleep: FakeSleep, status: int
) -> None:
    server.fail_always, server.fail_status = True, status
    model = retrying(server, fake_sleep)
    # 404/405/501: no request will be served there, and the run stops (EndpointNotServed)
    said = " to the model's requests .*injected failure" if status in NOT_SERVED else ""
    said = said or ": .*injected failure.*not retried"
    with pytest.raises(InfraError, match=f"HTTP {status}{said}"):
        await model.generate(REQUEST)
    await model.aclose()
    assert server.calls == 1
    assert model.attempts == 1 and fake_sleep.delays == []


async def test_connection_refused_is_retried_then_the_service_is_down() -> None:
    """Refused connections are retried; when they go on for the breaker's window the call
    ends with ServiceDown (one line naming the URL and the cause), not an infra error."""
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    inner = OpenAIModel("fake", ModelOptions(base_url=url))
    clock = FakeTime()
    model = RetryingModel(inner, max_retries=2, sleep=clock.sleep, clock=clock, rng=lambda: 1.0)
    with pytest.raises(ServiceDown) as caught:
        await model.generate(REQUEST)
    await model.aclose()
    assert str(caught.value) == (
        f"the model server at {url} stopped answering (Connection refused since 10 s)"
    )
    # Three attempts (waits 0.5 and 1), then a wait for the breaker's decision and one more.
    assert model.attempts == 4 and clock.delays == [0.5, 1.0, 8.5]


async def test_timeouts_are_retried(server: FakeOpenAIServer, fake_sleep: FakeSleep) -> None:
    server.delay_s = 0.5
    inner = OpenAIModel("fake", ModelOptions(base_url=server.base_url, timeout_s=0.05))
    model = RetryingModel(inner, max_retries=1, sleep=fake_sleep)
    with pytest.raises(InfraError, match=r"2 attempts.*APITimeoutError"):
        await model.generate(REQUEST)
    await model.aclose()
    assert model.attempts == 2


async def test_real_sleeps_under_concurrency(server: FakeOpenAIServer) -> None:
    """End to end with asyncio.sleep: a flaky server still answers every request."""
    server.fail_every, server.fail_status, server.retry_after = 3, 429, "0"
    inner = OpenAIModel("fake", ModelOptions(base_url=server.base_url))
    model = RetryingModel(inner, max_retries=6, base_delay=0.01)
    results = await asyncio.gather(
        *(model.generate(GenerationRequest(prompt=f"p{i}")) for i in range(30))
    )
    await model.aclose()
    assert sorted(g.text for g in results) == sorted(f"echo: p{i}" for i in range(30))
    assert server.failures >= 10
    assert model.attempts == server.calls == 30 + server.failures


class _Broken:
    name = "broken"
    cacheable = False

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    async def generate(self, request: GenerationRequest) -> Generation:
        self.calls += 1
        raise self.error

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("error", [ModelOutputError("no text"), ValueError("bug")])
async def test_other_errors_pass_through_untouched(fake_sleep: FakeSleep, error: Exception) -> None:
    inner = _Broken(error)
    model = RetryingModel(inner, max_retries=3, sleep=fake_sleep)
    with pytest.raises(type(error)):
        await model.generate(REQUEST)
    assert inner.calls == 1


async def test_transport_errors_are_retried(fake_sleep: FakeSleep) -> None:
    inner = _Broken(httpx.ReadTimeout("slow"))
    model = RetryingModel(inner, max_retries=2, sleep=fake_sleep)
    with pytest.raises(InfraError, match=r"3 attempts.*ReadTimeout"):
        await model.generate(REQUEST)
    assert inner.calls == 3
