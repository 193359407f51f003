"""Endpoint pools against real loopback servers: requests spread over the endpoints, a dead
endpoint's requests fail over at once (the retry layer never hears of it), a failing endpoint is
taken out and checked back in, the breaker opens only when every endpoint is down, and the
response cache never depends on which endpoint answered."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from tests.fakeserver import FakeOpenAIServer
from tests.models.test_retry_breaker import FakeTime
from tests.overflow_server import OverflowServer
from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.models.endpoints import AllEndpointsDown, EndpointPool
from toolbench.models.openai_compat import OpenAIModel, PooledOpenAIModel
from toolbench.models.retry import RetryingModel
from toolbench.models.spec import make_model, pool_stats
from toolbench.types import GenerationRequest, ServiceDown

REQUEST = GenerationRequest(prompt="hello", max_tokens=8)
BIG = 1 << 20  # context length: no request of these tests overflows


def free_port() -> int:
    """A port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def url_of(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def pool_of(*urls: str, probe_first_s: float = 1.0) -> EndpointPool:
    members = [OpenAIModel("x", ModelOptions(base_url=url, timeout_s=5)) for url in urls]
    return EndpointPool(members, probe_first_s=probe_first_s)


def test_several_base_urls_make_a_pool_named_by_its_sorted_urls() -> None:
    a, b = url_of(free_port()), url_of(free_port())
    one = OpenAIModel("x", ModelOptions(base_url=b, base_urls=(b, a)))
    other = OpenAIModel("x", ModelOptions(base_url=a, base_urls=(a, b)))
    assert isinstance(one, PooledOpenAIModel) and isinstance(other, PooledOpenAIModel)
    assert one.base_url == other.base_url == " ".join(sorted([a, b]))
    assert one.name == "openai:x"
    single = OpenAIModel("x", ModelOptions(base_url=a))
    assert type(single) is OpenAIModel and single.base_url == a


def test_requests_spread_over_the_endpoints_by_requests_in_flight() -> None:
    with (
        OverflowServer(context_length=BIG, delay_s=0.05) as a,
        OverflowServer(context_length=BIG, delay_s=0.05) as b,
    ):
        pool = pool_of(a.base_url, b.base_url)

        async def main() -> list[str]:
            try:
                answers = await asyncio.gather(*(pool.generate(REQUEST) for _ in range(20)))
            finally:
                await pool.aclose()
            return [g.text for g in answers]

        assert asyncio.run(main()) == ["search()"] * 20
        assert a.answered == b.answered == 10  # 20 at once: 10 in flight on each
    stats = pool.stats()
    assert [stats[u]["calls"] for u in (a.base_url, b.base_url)] == [10, 10]
    assert all(s["errors"] == 0 and s["mean_latency_s"] > 0 for s in stats.values())


def test_a_dead_endpoint_fails_over_at_once_and_is_taken_out(fake_sleep: object) -> None:
    dead = url_of(free_port())
    with OverflowServer(context_length=BIG) as live:
        pool = pool_of(dead, live.base_url)
        retrying = RetryingModel(pool_model(pool), max_retries=3, sleep=fake_sleep)  # type: ignore[arg-type]

        async def main() -> None:
            try:
                for _ in range(10):
                    assert (await retrying.generate(REQUEST)).text == "search()"
            finally:
                await retrying.aclose()

        asyncio.run(main())
        assert live.answered == 10
    assert retrying.retries == 0 and retrying.breaker.failures == 0  # never reached it
    stats = pool.stats()
    assert stats[dead]["errors"] == 3 and stats[dead]["taken_out"] == 1
    assert stats[live.base_url] == {**stats[live.base_url], "calls": 10, "errors": 0}
    assert pool.failovers == 3


def test_an_endpoint_that_comes_back_is_checked_and_gets_requests_again() -> None:
    port = free_port()
    with OverflowServer(context_length=BIG) as live:
        pool = pool_of(url_of(port), live.base_url, probe_first_s=0.05)
        down = pool.balancer.members[0]

        async def main() -> int:
            try:
                for _ in range(5):  # three failures take it out
                    await pool.generate(REQUEST)
                assert down.out_until is not None and down.taken_out == 1
                with OverflowServer(context_length=BIG, port=port) as back:
                    await asyncio.sleep(0.1)  # its time out is over
                    await pool.generate(REQUEST)  # starts its health check
                    for _ in range(50):
                        if down.out_until is None:
                            break
                        await asyncio.sleep(0.02)
                    assert down.out_until is None, "never checked back in"
                    await asyncio.gather(*(pool.generate(REQUEST) for _ in range(10)))
                    return back.answered
            finally:
                await pool.aclose()

        assert asyncio.run(main()) == 5  # 10 at once: half of them
    assert pool.stats()[url_of(port)]["taken_out"] == 1


def test_a_failing_endpoint_is_taken_out_and_the_retries_go_to_the_other(
    fake_sleep: object,
) -> None:
    with (
        FakeOpenAIServer(fail_always=True, fail_status=503) as bad,
        OverflowServer(context_length=BIG) as good,
    ):
        pool = pool_of(bad.base_url, good.base_url)
        retrying = RetryingModel(pool_model(pool), max_retries=6, sleep=fake_sleep)  # type: ignore[arg-type]

        async def main() -> None:
            try:
                for _ in range(12):
                    assert (await retrying.generate(REQUEST)).text == "search()"
            finally:
                await retrying.aclose()

        asyncio.run(main())
    stats = pool.stats()
    assert stats[bad.base_url]["errors"] == 3 and stats[bad.base_url]["taken_out"] == 1
    assert stats[good.base_url]["calls"] == 12 and retrying.retries == 3


def test_every_endpoint_down_opens_the_breaker_naming_them_all() -> None:
    a, b = url_of(free_port()), url_of(free_port())
    clock = FakeTime()
    model = OpenAIModel("x", ModelOptions(base_url=a, base_urls=(a, b), timeout_s=5))
    retrying = RetryingModel(model, max_retries=50, sleep=clock.sleep, clock=clock)

    async def main() -> None:
        try:
            await retrying.generate(REQUEST)
        finally:
            await retrying.aclose()

    with pytest.raises(ServiceDown) as caught:
        asyncio.run(main())
    assert str(caught.value).startswith(f"all 2 model servers ({a}, {b}) stopped answering (")
    assert "Connection refused" in str(caught.value)


def test_every_endpoint_out_is_a_connection_failure_for_the_retry_layer() -> None:
    pool = pool_of(url_of(free_port()), url_of(free_port()), probe_first_s=60)
    for member in pool.balancer.members:
        pool.balancer.take_out(member, 60)

    async def main() -> None:
        try:
            await pool.generate(REQUEST)
        finally:
            await pool.aclose()

    with pytest.raises(AllEndpointsDown):
        asyncio.run(main())


def test_preflight_leaves_out_the_endpoints_nobody_listens_at(
    capsys: pytest.CaptureFixture[str],
) -> None:
    dead = url_of(free_port())
    with OverflowServer(context_length=4096) as live:
        model = OpenAIModel("x", ModelOptions(base_url=dead, base_urls=(dead, live.base_url)))
        assert isinstance(model, PooledOpenAIModel)
        asyncio.run(model.preflight())
        assert model.context_length == 4096
        assert model.pool.balancer.members[0].out_until is not None
        assert f"--base-url {dead}: cannot connect (Connection refused)" in capsys.readouterr().err

        async def main() -> str:
            try:
                return (await model.generate(REQUEST)).text
            finally:
                await model.aclose()

        assert asyncio.run(main()) == "search()"
        assert pool_stats(model)["endpoints"][dead]["calls"] == 0  # never tried: it was out


def test_preflight_refuses_a_pool_where_no_endpoint_answers() -> None:
    a, b = url_of(free_port()), url_of(free_port())
    model = OpenAIModel("x", ModelOptions(base_url=a, base_urls=(a, b)))
    with pytest.raises(UserError) as caught:
        asyncio.run(model.preflight())
    message = str(caught.value)
    assert message.startswith(f"--base-url {a}, {b}: cannot connect to any of them (")
    assert "\n" not in message


def test_the_cache_key_does_not_depend_on_which_endpoint_answered(tmp_path: Path) -> None:
    cache = tmp_path / "responses.sqlite"
    with (
        OverflowServer(context_length=BIG, answer="first") as a,
        OverflowServer(context_length=BIG, answer="second") as b,
    ):
        urls = (a.base_url, b.base_url)

        async def ask(order: tuple[str, str]) -> tuple[str, bool]:
            options = ModelOptions(base_url=order[0], base_urls=order, cache_path=cache)
            model = make_model("openai:x", options)
            try:
                generation = await model.generate(REQUEST)
            finally:
                await model.aclose()
            return generation.text, generation.cached

        text, cached = asyncio.run(ask(urls))
        assert not cached
        assert asyncio.run(ask(urls[::-1])) == (text, True)  # the other order: the same key
        assert a.answered + b.answered == 1


def test_run_json_fields_name_every_endpoint() -> None:
    with OverflowServer(context_length=BIG) as a, OverflowServer(context_length=BIG) as b:
        options = ModelOptions(base_url=a.base_url, base_urls=(a.base_url, b.base_url))
        model = make_model("openai:x", options)

        async def main() -> None:
            try:
                await asyncio.gather(*(model.generate(REQUEST) for _ in range(4)))
            finally:
                await model.aclose()

        asyncio.run(main())
    endpoints = pool_stats(model)["endpoints"]
    assert list(endpoints) == [a.base_url, b.base_url]
    assert sum(e["calls"] for e in endpoints.values()) == 4


def pool_model(pool: EndpointPool) -> object:
    """The pool as a model the retry layer can wrap."""

    class Pooled:
        name = "openai:x"
        cacheable = True
        base_url = pool.base_url
        endpoint_urls = pool.urls

        async def generate(self, request: GenerationRequest) -> object:
            return await pool.generate(request)

        async def aclose(self) -> None:
            await pool.aclose()

    return Pooled()


def test_a_check_cut_short_by_the_end_of_its_event_loop_is_started_again_in_the_next() -> None:
    port = free_port()
    with OverflowServer(context_length=BIG) as live:
        pool = pool_of(url_of(port), live.base_url, probe_first_s=0.0)
        down = pool.balancer.members[0]

        async def fail_three_then_start_a_check() -> None:
            for _ in range(3):  # three failures take it out
                await pool.generate(REQUEST)
            pool._start_due_probes()  # its check is due: started, and cancelled at once
            assert pool._probes and down.out_until == float("inf")

        asyncio.run(fail_three_then_start_a_check())
        assert down.out_until is not None and down.out_until != float("inf")

        async def back_in() -> None:
            try:
                with OverflowServer(context_length=BIG, port=port):
                    await pool.generate(REQUEST)  # starts the check again
                    checks = list(pool._probes.values())  # none left if it already answered
                    if checks:
                        await asyncio.wait(checks, timeout=10)
                    assert down.out_until is None
            finally:
                await pool.aclose()

        asyncio.run(back_in())
