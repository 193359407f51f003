"""Throughput of the OpenAI backend against a server that answers after 200 ms, cold and cached.

Cold: 320 distinct requests at concurrency 32 through ``make_model("openai:fake", ...)``
(retry and cache wrappers included). A client with zero overhead reaches 32 / 0.2 s = 160
requests/s; the target is >= 90% of that, i.e. the client never serialises requests and adds
little latency. Warm: the same 320 requests again, now all cache hits; target >= 20x faster.

The fake server runs in a child process, as a real server would: in a thread of this process
its CPU time would compete with the client's for the GIL and be counted against the client.
Also printed: the steady-state rate after the first two waves, because the first wave of 32
requests all start together and pay the whole wave's client CPU time before any is sent.

Run: ``python benchmarks/model_server.py`` (about 10 s).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakeserver import FakeOpenAIServer
from toolbench.models.base import ModelOptions
from toolbench.models.cache import CachedModel
from toolbench.models.spec import make_model
from toolbench.types import GenerationRequest

CONCURRENCY = 32
REQUESTS = 320
DELAY_S = 0.2
IDEAL_RATE = CONCURRENCY / DELAY_S


def make_requests() -> list[GenerationRequest]:
    return [
        GenerationRequest(messages=({"role": "user", "content": f"question {i}"},), max_tokens=32)
        for i in range(REQUESTS)
    ]


async def run_all(base_url: str, cache_path: Path) -> tuple[float, list[float]]:
    """Send all requests through a fresh model; return wall time and completion times."""
    options = ModelOptions(base_url=base_url, api_key="bench", cache_path=cache_path)
    model = make_model("openai:fake", options)
    semaphore = asyncio.Semaphore(CONCURRENCY)
    done: list[float] = []

    async def one(request: GenerationRequest) -> None:
        async with semaphore:
            await model.generate(request)
            done.append(time.perf_counter())

    # Open the connection pool first so that TCP connects are not part of the measurement.
    warmup = [GenerationRequest(prompt=f"warm-up {i}", max_tokens=1) for i in range(CONCURRENCY)]
    await asyncio.gather(*(model.generate(r) for r in warmup))
    start = time.perf_counter()
    await asyncio.gather(*(one(r) for r in make_requests()))
    elapsed = time.perf_counter() - start
    if isinstance(model, CachedModel):
        print(f"  cache: {model.hits} hits, {model.misses} misses (incl. {CONCURRENCY} warm-up)")
    await model.aclose()
    return elapsed, [t - start for t in done]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cache_path = Path(tmp) / "responses.sqlite"
        with FakeOpenAIServer(delay_s=DELAY_S, subprocess=True) as server:
            cold, times = asyncio.run(run_all(server.base_url, cache_path))
            served = server.calls
            warm, _ = asyncio.run(run_all(server.base_url, cache_path))
            warm_calls = server.calls - served
    rate = REQUESTS / cold
    rate_ratio = rate / IDEAL_RATE
    skip = 2 * CONCURRENCY
    steady = (REQUESTS - skip) / (times[-1] - times[skip - 1])
    speedup = cold / warm
    print(f"cold: {REQUESTS} requests in {cold:.2f}s = {rate:.1f} req/s")
    print(f"      ratio to ideal {IDEAL_RATE:.0f} req/s: {rate_ratio:.3f} (target >= 0.9)")
    print(f"      steady state after 2 waves: {steady:.1f} req/s = {steady / IDEAL_RATE:.3f}")
    print(f"warm: {REQUESTS} requests in {warm * 1000:.1f} ms (server calls: {warm_calls})")
    print(f"      speedup over cold: {speedup:.1f}x (target >= 20x)")
    ok = rate_ratio >= 0.9 and speedup >= 20 and warm_calls == 0
    print("all targets met" if ok else "below target (see above)")


if __name__ == "__main__":
    main()
