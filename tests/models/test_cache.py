"""CachedModel: what is a hit, what is a miss, and that it holds up under concurrency."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakeserver import FakeOpenAIServer
from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.models.cache import CachedModel, cache_key
from toolbench.models.reference.oracle import OracleModel
from toolbench.models.spec import make_model
from toolbench.types import Generation, GenerationRequest, InfraError, Sample

REQUEST = GenerationRequest(prompt="2 + 2 =", max_tokens=8)


class Counting:
    """A model that answers after ``delay`` and counts its calls."""

    cacheable = True

    def __init__(self, name: str = "count:m", base_url: str | None = None, delay: float = 0.0):
        self.name = name
        self.base_url = base_url
        self.delay = delay
        self.calls = 0
        self.fail_next = False

    async def generate(self, request: GenerationRequest) -> Generation:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.fail_next:
            self.fail_next = False
            raise InfraError("down")
        return Generation(
            text=f"answer to {request.prompt} at t={request.temperature}",
            prompt_tokens=11,
            completion_tokens=3,
            latency_s=0.5,
            finish_reason="length",
            tool_calls=[{"id": "c1", "type": "function"}],
        )

    async def aclose(self) -> None:
        return None


async def test_second_identical_request_is_a_hit_with_zero_server_calls(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    options = ModelOptions(base_url=server.base_url, cache_path=tmp_path / "c.sqlite")
    model = make_model("openai:fake", options)
    assert isinstance(model, CachedModel)
    first = await model.generate(REQUEST)
    second = await model.generate(REQUEST)
    await model.aclose()
    assert server.calls == 1
    assert (model.hits, model.misses) == (1, 1)
    assert not first.cached and second.cached
    assert second.text == first.text == "echo: 2 + 2 ="
    assert (second.prompt_tokens, second.completion_tokens) == (
        first.prompt_tokens,
        first.completion_tokens,
    )


async def test_hit_returns_stored_fields_and_lookup_latency(tmp_path: Path) -> None:
    inner = Counting()
    model = CachedModel(inner, tmp_path / "c.sqlite")
    miss = await model.generate(REQUEST)
    hit = await model.generate(REQUEST)
    await model.aclose()
    assert inner.calls == 1
    assert hit.cached and not miss.cached
    assert (hit.text, hit.prompt_tokens, hit.completion_tokens, hit.finish_reason) == (
        miss.text,
        11,
        3,
        "length",
    )
    assert hit.tool_calls == miss.tool_calls
    assert 0 < hit.latency_s < 0.5  # the lookup's own time, not the stored model latency


@pytest.mark.parametrize(
    "variant",
    [
        GenerationRequest(prompt="2 + 2 =", max_tokens=8, temperature=0.7),
        GenerationRequest(prompt="2 + 3 =", max_tokens=8),
        GenerationRequest(prompt="2 + 2 =", max_tokens=9),
        GenerationRequest(prompt="2 + 2 =", max_tokens=8, seed=1),
        GenerationRequest(prompt="2 + 2 =", max_tokens=8, stop=("\n",)),
        GenerationRequest(messages=({"role": "user", "content": "2 + 2 ="},), max_tokens=8),
    ],
)
async def test_any_answer_changing_field_misses(tmp_path: Path, variant: GenerationRequest) -> None:
    inner = Counting()
    model = CachedModel(inner, tmp_path / "c.sqlite")
    await model.generate(REQUEST)
    await model.generate(variant)
    await model.aclose()
    assert inner.calls == 2 and model.misses == 2


async def test_model_name_and_base_url_are_part_of_the_key(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    models = [
        CachedModel(Counting("count:a", "http://h1/v1"), path),
        CachedModel(Counting("count:b", "http://h1/v1"), path),
        CachedModel(Counting("count:a", "http://h2/v1"), path),
    ]
    for model in models:
        await model.generate(REQUEST)
        await model.aclose()
    assert [m.misses for m in models] == [1, 1, 1]
    keys = {cache_key(m.name, m.base_url, REQUEST) for m in models}
    assert len(keys) == 3


def test_key_follows_cache_payload() -> None:
    """The sample travels with the request for built-in models but never reaches the key."""
    sample = Sample(id="s1", task="t", query="q", labels=("x",))
    with_sample = GenerationRequest(prompt="2 + 2 =", max_tokens=8, sample=sample)
    assert cache_key("m", None, with_sample) == cache_key("m", None, REQUEST)
    assert cache_key("m", None, REQUEST) != cache_key("m", "http://h/v1", REQUEST)


async def test_survives_reopen(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "c.sqlite"
    first = CachedModel(Counting(), path)
    original = await first.generate(REQUEST)
    await first.aclose()

    inner = Counting()
    second = CachedModel(inner, path)
    hit = await second.generate(REQUEST)
    await second.aclose()
    assert inner.calls == 0 and hit.cached and hit.text == original.text
    assert hit.tool_calls == original.tool_calls


async def test_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    model = CachedModel(Counting(), path)
    assert model.journal_mode() == "wal"
    await model.aclose()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_many_concurrent_tasks(tmp_path: Path) -> None:
    inner = Counting(delay=0.01)
    model = CachedModel(inner, tmp_path / "c.sqlite")
    requests = [GenerationRequest(prompt=f"q{i}") for i in range(200)]
    first = await asyncio.gather(*(model.generate(r) for r in requests))
    second = await asyncio.gather(*(model.generate(r) for r in requests))
    await model.aclose()
    assert inner.calls == 200 and model.misses == 200 and model.hits == 200
    assert [g.text for g in first] == [g.text for g in second]
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 200


async def test_identical_concurrent_misses_call_the_model_once(tmp_path: Path) -> None:
    inner = Counting(delay=0.05)
    model = CachedModel(inner, tmp_path / "c.sqlite")
    requests = [GenerationRequest(prompt=f"q{i % 5}") for i in range(50)]
    results = await asyncio.gather(*(model.generate(r) for r in requests))
    await model.aclose()
    assert inner.calls == 5
    assert (model.misses, model.hits) == (5, 45)
    assert sum(not g.cached for g in results) == 5
    assert all(g.text == f"answer to q{i % 5} at t=0.0" for i, g in enumerate(results))


async def test_failures_are_not_cached_and_reach_every_waiter(tmp_path: Path) -> None:
    inner = Counting(delay=0.02)
    inner.fail_next = True
    model = CachedModel(inner, tmp_path / "c.sqlite")
    results = await asyncio.gather(
        *(model.generate(REQUEST) for _ in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, InfraError) for r in results)
    answer = await model.generate(REQUEST)
    await model.aclose()
    assert inner.calls == 2 and answer.text.startswith("answer")


async def test_a_cancelled_leader_does_not_fail_its_waiters(tmp_path: Path) -> None:
    inner = Counting(delay=0.05)
    model = CachedModel(inner, tmp_path / "c.sqlite")
    leader = asyncio.create_task(model.generate(REQUEST))
    await asyncio.sleep(0.01)
    waiter = asyncio.create_task(model.generate(REQUEST))
    await asyncio.sleep(0.01)
    leader.cancel()
    answer = await waiter
    await model.aclose()
    assert answer.text.startswith("answer") and inner.calls == 2


def test_unusable_cache_path_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "a-directory.sqlite").mkdir()
    with pytest.raises(UserError, match="cannot open the response cache"):
        CachedModel(Counting(), tmp_path / "a-directory.sqlite")


def test_refuses_non_cacheable_models(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not cacheable"):
        CachedModel(OracleModel(), tmp_path / "c.sqlite")


_WRITER = """
import asyncio, sys
from pathlib import Path
from tests.models.test_cache import Counting
from toolbench.models.cache import CachedModel
from toolbench.types import GenerationRequest

async def main():
    model = CachedModel(Counting(), Path(sys.argv[1]))
    for start in range(0, 300, 30):
        await asyncio.gather(*(
            model.generate(GenerationRequest(prompt=f"{sys.argv[2]}-{i}"))
            for i in range(start, start + 30)
        ))
    await model.aclose()

asyncio.run(main())
"""


async def test_several_processes_share_one_cache(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), tag], cwd=root)
        for tag in ("a", "b", "c")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    inner = Counting()
    model = CachedModel(inner, path)
    for tag in ("a", "b", "c"):
        for i in (0, 150, 299):
            assert (await model.generate(GenerationRequest(prompt=f"{tag}-{i}"))).cached
    await model.aclose()
    assert inner.calls == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 900
