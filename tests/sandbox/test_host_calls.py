"""Host calls: a running program asks the harness (a model, in tabletop) and runs the answer in
its own worker. Nesting, limits, timers paused during the wait, hostile channel traffic, and
every worker waiting on the host at once."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.sandbox.host_worlds import counting_lmp_world, hostile_world, lmp_world
from toolbench.sandbox import HostRefused, Limits, SandboxPool
from toolbench.sandbox._protocol import ProtocolError, parse_host_call
from toolbench.sandbox.host import Code

LIMITS = Limits(wall_s=1.0, cpu_s=1.0, memory_mb=256, max_host_calls=8, max_host_depth=4)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2, limits=LIMITS) as sandbox:
        yield sandbox


class Host:
    """A scripted harness: ``ask`` questions map to code, ``value`` echoes; every call seen."""

    def __init__(self, answers: dict[str, str] | None = None, delay_s: float = 0.0) -> None:
        self.answers = answers or {}
        self.delay_s = delay_s
        self.calls: list[tuple[str, Any]] = []

    async def __call__(self, name: str, payload: Any) -> Any:
        self.calls.append((name, payload))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if name == "ask":
            if payload not in self.answers:
                raise HostRefused(f"no answer for {payload!r}")
            return self.answers[payload]
        return payload


THREE_LEVELS = {
    "top": "a = ask('middle')\nrecord(['top got', a])\nret_val = a + 1",
    "middle": "b = ask('bottom')\nrecord(['middle got', b])\nret_val = b * 10",
    "bottom": "xs = [i for i in range(3)]\nret_val = sum(x for x in xs) + len(xs)",
}


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 30))


def test_nested_three_levels_run_in_one_worker(pool: SandboxPool) -> None:
    host = Host(THREE_LEVELS)
    result = run(pool.arun(lmp_world, "record(['done', ask('top')])", host))
    assert result.ok, result
    # bottom: 3 + 3 = 6; middle: 60; top: 61. Comprehensions see names the code assigned.
    assert result.state == [["middle got", 6], ["top got", 60], ["done", 61]]
    assert [payload for _, payload in host.calls] == ["top", "middle", "bottom"]


def test_code_answers_arrive_compiled_and_behave_like_text(pool: SandboxPool) -> None:
    """A ``Code`` answer is compiled by the worker's template and reaches the program process
    as code objects: that process compiles nothing (first time or not), and the results are
    those of the same answers sent as text, which a process compiles itself until its
    template has compiled them (processes forked later inherit the template's cache)."""
    answers = {
        q: text.replace("ret_val", "ret_val = 0\nret_val") for q, text in THREE_LEVELS.items()
    }
    program = "record(['done', ask('top')])\nrecord(['compiled here', compiles()])"
    texts = run(pool.arun(counting_lmp_world, program, Host(answers)))
    assert texts.ok and texts.state[-1][1] >= 3  # the three answers, compiled in the process
    as_code = {question: Code(text) for question, text in answers.items()}
    for _ in range(2):  # once through the template's compiler, once from its cache
        coded = run(pool.arun(counting_lmp_world, program, Host(as_code)))  # type: ignore[arg-type]
        assert coded.ok, coded
        assert coded.state[-1] == ["compiled here", 0]
    assert coded.state[:-1] == texts.state[:-1] == [
        ["middle got", 6], ["top got", 60], ["done", 61]
    ]  # fmt: skip
    again = run(pool.arun(counting_lmp_world, program, Host(answers)))
    assert again.state == coded.state  # as text, now found in the cache it was forked with


def test_code_answers_the_template_cannot_compile_fail_as_text_does(pool: SandboxPool) -> None:
    """A refused or broken source is left to the program process, so the error is the one
    the text answer gets; the sources to compile may differ from the text (only they are
    sent compiled)."""
    degenerate = (
        "(\n" * 3000,  # thousands of open brackets
        "ret_val = " + "[" * 988 + "]" * 988,  # nested past the parser's limit
        "ret_val = 1e308 * 10\n" * 500,  # an overflowing float, repeated
        "ret_val = 1\x00",
        "\ud800 = 1",
    )
    for text in ("ret_val = ().__class__", "import os\nret_val = 1", "ret_val = (", "x" * 30_000,
                 *degenerate):  # fmt: skip
        as_text = run(pool.arun(lmp_world, "ask('q')", Host({"q": text})))
        as_code = run(pool.arun(lmp_world, "ask('q')", Host({"q": Code(text)})))  # type: ignore[dict-item]
        assert (as_code.kind, as_code.error) == (as_text.kind, as_text.error)
    other = Code("if True:\n    ret_val = 5", sources=("ret_val = 6",))
    result = run(
        pool.arun(counting_lmp_world, "record([ask('q'), compiles()])", Host({"q": other}))
    )  # type: ignore[dict-item]
    assert result.ok and result.state == [[5, 1]]  # ran its text, compiled here: not sent


def test_refused_call_is_a_program_error_and_the_worker_stays(pool: SandboxPool) -> None:
    result = run(pool.arun(lmp_world, "ask('nobody knows')", Host()))
    assert result.kind == "error"
    assert "HostError: no answer for 'nobody knows'" in (result.error or "")
    again = run(pool.arun(lmp_world, "record(value([1, 'two', {'3': None}]))", Host()))
    assert again.ok and again.state == [[1, "two", {"3": None}]]


def test_sub_program_is_sandboxed_like_the_program(pool: SandboxPool) -> None:
    host = Host({"evil": "ret_val = ().__class__", "imp": "import os\nret_val = 1"})
    evil = run(pool.arun(lmp_world, "ask('evil')", host))
    assert evil.kind == "error" and "SyntaxError" in (evil.error or "")
    imported = run(pool.arun(lmp_world, "ask('imp')", host))
    assert imported.kind == "error" and "import" in (imported.error or "")


def test_host_call_limit(pool: SandboxPool) -> None:
    result = run(pool.arun(lmp_world, "for i in range(20):\n    value(i)", Host()))
    assert result.kind == "error"
    assert "more than 8 host calls" in (result.error or "")


def test_nesting_depth_limit(pool: SandboxPool) -> None:
    host = Host({"again": "ret_val = ask('again')"})
    result = run(pool.arun(lmp_world, "ask('again')", host))
    assert result.kind == "error"
    assert "nested more than 4 deep" in (result.error or "")
    assert len(host.calls) == 4


def test_no_host_given_is_a_program_error(pool: SandboxPool) -> None:
    result = pool.run(lmp_world, "value(1)")
    assert result.kind == "error" and "not available" in (result.error or "")


def test_unserialisable_argument_is_a_program_error(pool: SandboxPool) -> None:
    result = run(pool.arun(lmp_world, "value(lambda: 1)", Host()))
    assert result.kind == "error" and "JSON" in (result.error or "")
    looped: list[Any] = []
    looped.append(looped)
    deep = run(pool.arun(lmp_world, "x = []\nx.append(x)\nvalue(x)", Host()))
    assert deep.kind == "error" and "HostError" in (deep.error or "")


def test_wait_on_host_does_not_count_but_a_spin_after_it_does() -> None:
    limits = Limits(wall_s=1.0, cpu_s=1.0, memory_mb=256)
    spin = "def spin(s):\n    t = clock()\n    while clock() - t < s:\n        pass\n"
    with SandboxPool(workers=1, limits=limits) as pool:
        slow = Host(delay_s=2.0)  # the wait alone is twice both limits
        ok = run(pool.arun(_clock_world, spin + "spin(0.25)\nrecord(value(7))\nspin(0.25)", slow))
        assert ok.ok, ok
        assert ok.state == [7] and ok.duration_s > 2.0
        start = time.monotonic()
        killed = run(pool.arun(_clock_world, spin + "value(1)\nwhile True:\n    pass", slow))
        assert killed.kind == "timeout", killed
        # stopped by what was left of its own limits after the wait, not at once, not never
        assert 2.0 + 0.8 < time.monotonic() - start < 2.0 + 1.0 + 2.5


def _clock_world() -> Any:
    world = lmp_world()
    world.namespace["clock"] = time.monotonic
    return world


HOSTILE = {
    "huge": "host call over the size cap",
    "malformed": "not UTF-8",
    "recursive": "nested too deeply",
    "nan": "NaN",
    "badname": "name is not a short string",
    "flood": "more host calls than its limit",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_channel_traffic_costs_one_program(pool: SandboxPool, kind: str) -> None:
    result = run(pool.arun(hostile_world, f"raw({kind!r})", Host()))
    assert result.kind == "worker_died", result
    assert HOSTILE[kind] in (result.error or "")
    after = run(pool.arun(lmp_world, "record(value('fine'))", Host()))
    assert after.ok and after.state == ["fine"]


def test_a_failing_host_ends_the_program_and_propagates(pool: SandboxPool) -> None:
    async def broken(name: str, payload: Any) -> Any:
        raise RuntimeError("model server down")

    with pytest.raises(RuntimeError, match="model server down"):
        run(pool.arun(lmp_world, "value(1)", broken))
    after = run(pool.arun(lmp_world, "record(value(2))", Host()))
    assert after.ok and after.state == [2]


def test_every_worker_inside_a_nested_call_at_once() -> None:
    """Two workers, six programs, each waiting on the host two levels deep; the host answers
    only once both workers are waiting. Sub-programs run in the worker that asked, so none
    needs a free worker and all finish."""

    async def main() -> list[Any]:
        with SandboxPool(workers=2, limits=LIMITS) as pool:
            waiting: set[int] = set()
            both = asyncio.Event()

            async def host(name: str, payload: Any) -> Any:
                if name == "value":
                    waiting.add(payload)
                    if len(waiting) >= 2:
                        both.set()
                    await both.wait()
                    return payload
                return f"ret_val = value({int(payload)}) + 100"

            programs = [f"record(ask({i}))" for i in range(6)]
            return await asyncio.gather(*(pool.arun(lmp_world, p, host) for p in programs))

    results = asyncio.run(asyncio.wait_for(main(), 60))
    assert [r.state for r in results] == [[100 + i] for i in range(6)]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
def test_parse_host_call_is_total(body: bytes) -> None:
    """Whatever a worker sends as a host call, the parent's reading returns a short name and a
    bounded JSON payload, or refuses it: nothing else."""
    try:
        name, _payload = parse_host_call(body, 200)
    except ProtocolError:
        return
    assert isinstance(name, str) and 0 < len(name) <= 64


@pytest.mark.parametrize(
    "body",
    [b'["x", 1]', b'["ask", {"q": [1, 2.5, null, true]}]', '["ü", "é"]'.encode()],
)
def test_parse_host_call_reads_good_calls(body: bytes) -> None:
    name, payload = parse_host_call(body, 200)
    assert [name, payload] == json.loads(body)


def test_a_default_pool_adds_one_worker_for_host_programs() -> None:
    """Programs waiting on the host leave their CPU idle: a default-sized pool grows by one
    worker (once) when it first runs one; a pool sized by the caller keeps its size."""
    import os

    cpus = os.cpu_count() or 1
    with SandboxPool(limits=LIMITS) as default, SandboxPool(workers=1, limits=LIMITS) as sized:
        assert default.workers == cpus
        assert run(default.arun(lmp_world, "x = 1", None)).ok
        assert default.workers == cpus  # no host: CPU-bound sizing
        for _ in range(2):
            assert run(default.arun(lmp_world, "record(value(1))", Host())).ok
        assert default.workers == cpus + 1
        assert run(sized.arun(lmp_world, "record(value(1))", Host())).ok
        assert sized.workers == 1
