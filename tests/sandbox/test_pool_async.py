"""``SandboxPool.arun`` runs in the event loop's own thread: these check that it keeps every
rule of the blocking path (limits, a dead or lying worker costs one program, the pool heals),
that waiting and cancelling callers leave the pool whole, and that no worker can stall the loop.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import TypeVar

import pytest

from tests.sandbox.conftest import FAST_LIMITS
from tests.sandbox.test_protocol import _HOSTILE_BOOT, ACTIONS, FAST
from tests.sandbox.worlds import broken_world, trouble_world
from toolbench.sandbox import ExecResult, Limits, SandboxError, SandboxPool, _process
from toolbench.sandbox._protocol import FrameReader, ProtocolError, frame
from toolbench.tasks.home_search.world import make_world as home_world

SLOW = Limits(wall_s=5.0, cpu_s=5.0, memory_mb=256)  # room to act while a program hangs
T = TypeVar("T")


def _program(i: int) -> str:
    return f"API.set_location('City {i}')\nAPI.set_buy_or_rent('rent')\nAPI.set_num_beds({i})"


def _check(i: int, result: ExecResult) -> None:
    assert result.ok, result
    assert result.state == {"location": f"City {i}", "buy_or_rent": "rent", "num_beds": i}


class Ticker:
    """Counts loop iterations 10 ms apart: a gap shows the loop was blocked."""

    def __init__(self) -> None:
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            self.longest = max(self.longest, now - last)
            last = now

    async def watch(self, work: Awaitable[T]) -> T:
        self._task = asyncio.ensure_future(self._tick())
        try:
            return await work
        finally:
            self._task.cancel()


async def test_many_programs_on_two_workers(pool: SandboxPool) -> None:
    results = await asyncio.gather(*(pool.arun(home_world, _program(i)) for i in range(400)))
    for i, result in enumerate(results):
        _check(i, result)
    assert len(pool._res.live) <= 2 and not pool._waiters


async def test_async_and_threaded_callers_share_the_pool(pool: SandboxPool) -> None:
    """Releases from threads wake asyncio waiters and the other way round."""
    threaded: dict[int, ExecResult] = {}

    def work(offset: int) -> None:
        for i in range(offset, 100, 4):
            threaded[i] = pool.run(home_world, _program(i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    results = await asyncio.gather(*(pool.arun(home_world, _program(i)) for i in range(200)))
    for thread in threads:
        await asyncio.get_running_loop().run_in_executor(None, thread.join)
    for i, result in [*enumerate(results), *threaded.items()]:
        _check(i, result)


async def test_timeouts() -> None:
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        result = await sandbox.arun(home_world, "while True:\n    pass")
        assert (result.kind, result.error) == ("timeout", "timeout: program ran longer than 0.5 s")
        before = {w.proc.pid for w in sandbox._res.live}
        (worker,) = sandbox._res.live
        for pid in _descendants(worker.proc.pid):  # now it stops answering altogether
            os.kill(pid, signal.SIGSTOP)
        ticker = Ticker()
        result = await ticker.watch(sandbox.arun(home_world, _program(1)))
        assert (result.kind, result.error) == ("timeout", "timeout: program ran longer than 0.5 s")
        assert 1.4 < result.duration_s < 3.0  # the wall limit plus the worker's grace
        assert ticker.longest < 0.5  # the loop went on meanwhile
        _check(2, await sandbox.arun(home_world, _program(2)))
        assert {w.proc.pid for w in sandbox._res.live}.isdisjoint(before)


async def test_worker_killed_mid_program() -> None:
    with SandboxPool(workers=1, limits=SLOW) as sandbox:
        running = asyncio.ensure_future(sandbox.arun(trouble_world, "hang()"))
        await asyncio.sleep(0.5)
        (worker,) = sandbox._res.live
        os.killpg(worker.proc.pid, signal.SIGKILL)
        result = await asyncio.wait_for(running, 3)
        assert (result.kind, result.error) == (
            "worker_died",
            "worker_died: the worker process was killed by SIGKILL",
        )
        _check(3, await sandbox.arun(home_world, _program(3)))
        assert worker not in sandbox._res.live


async def test_infrastructure_failure_raises(pool: SandboxPool) -> None:
    with pytest.raises(SandboxError, match="this factory is broken"):
        await pool.arun(broken_world, "")
    _check(4, await pool.arun(home_world, _program(4)))


@pytest.mark.parametrize("name", sorted(ACTIONS))
async def test_hostile_worker_costs_one_program(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile corpus of ``test_protocol.py``, through ``arun``."""
    monkeypatch.setattr(_process, "STARTUP_TIMEOUT_S", 2.0)
    monkeypatch.setattr(_process, "_BOOT", _HOSTILE_BOOT.replace("%ACTION%", ACTIONS[name]))
    with SandboxPool(workers=1, limits=FAST) as sandbox:
        if name == "forged internal":
            with pytest.raises(SandboxError, match="forged"):
                await sandbox.arun(home_world, "API.set_location('Reno')")
            assert not sandbox._res.live
            return
        results = [await sandbox.arun(home_world, "API.set_location('Reno')") for _ in range(2)]
    for result in results:
        if name == "two replies" and result.ok:
            assert result.state == {}  # the first reply; the second is refused as stale
            continue
        assert not result.ok, result
        assert result.kind in ("worker_died", "timeout"), result
        assert result.error and "\n" not in result.error and len(result.error) < 300
        assert result.duration_s < 5.0


HALF_FRAME = "    conn._send(b'\\x00\\x00\\x01\\x00' + b'R' + nonce)\n    time.sleep(30)"


@pytest.mark.parametrize("use_loop", [True, False])
async def test_half_a_message_blocks_nobody(
    use_loop: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that announces 256 bytes, sends 9 and stops: a timeout, in either path, and
    the loop keeps running (the parent never blocks on the socket)."""
    monkeypatch.setattr(_process, "STARTUP_TIMEOUT_S", 2.0)
    monkeypatch.setattr(_process, "_BOOT", _HOSTILE_BOOT.replace("%ACTION%", HALF_FRAME))
    with SandboxPool(workers=1, limits=FAST) as sandbox:
        loop = asyncio.get_running_loop()
        work = (
            sandbox.arun(home_world, "API.search()")
            if use_loop
            else loop.run_in_executor(None, sandbox.run, home_world, "API.search()")
        )
        ticker = Ticker()
        result = await asyncio.wait_for(ticker.watch(work), 5)
    assert (result.kind, result.error) == ("timeout", "timeout: program ran longer than 0.5 s")
    assert ticker.longest < 0.5


async def test_cancelled_while_waiting_for_a_worker() -> None:
    with SandboxPool(workers=1, limits=SLOW) as sandbox:
        _check(5, await sandbox.arun(home_world, _program(5)))  # start the worker
        busy = asyncio.ensure_future(
            sandbox.arun(home_world, "x = 0\nfor i in range(10**6):\n x += i")
        )
        waiting = [asyncio.ensure_future(sandbox.arun(home_world, _program(i))) for i in range(3)]
        await asyncio.sleep(0.05)
        assert len(sandbox._waiters) == 3
        waiting[0].cancel()
        waiting[1].cancel()
        assert (await busy).ok
        _check(2, await asyncio.wait_for(waiting[2], 5))
        assert all(w.cancelled() for w in waiting[:2])
        assert not sandbox._waiters and sandbox._idle


async def test_a_woken_waiter_that_is_cancelled_passes_the_wake_on() -> None:
    with SandboxPool(workers=1, limits=SLOW) as sandbox:
        _check(6, await sandbox.arun(home_world, _program(6)))
        (worker,) = sandbox._res.live
        taken = await sandbox._aacquire(worker.profile)  # hold the only worker by hand
        first = asyncio.ensure_future(sandbox.arun(home_world, _program(1)))
        second = asyncio.ensure_future(sandbox.arun(home_world, _program(2)))
        await asyncio.sleep(0.05)
        assert sandbox._return(taken, True)  # wakes ``first`` ...
        first.cancel()  # ... which is cancelled before it runs again
        _check(2, await asyncio.wait_for(second, 5))
        assert first.cancelled()


async def test_cancelled_mid_program_replaces_the_worker() -> None:
    """Its late reply must not reach the next program: the worker is killed and replaced."""
    with SandboxPool(workers=1, limits=SLOW) as sandbox:
        running = asyncio.ensure_future(sandbox.arun(trouble_world, "hang()"))
        await asyncio.sleep(0.5)
        (worker,) = sandbox._res.live
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert worker not in sandbox._res.live
        _check(7, await asyncio.wait_for(sandbox.arun(home_world, _program(7)), 10))
        for _ in range(100):  # reaped in a thread, not by the loop
            if worker.proc.returncode is not None:
                break
            await asyncio.sleep(0.05)
        assert worker.proc.returncode is not None


async def test_cancelled_while_its_worker_starts() -> None:
    """The worker started for a caller who left goes to the idle list."""
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        starting = asyncio.ensure_future(sandbox.arun(home_world, _program(1)))
        await asyncio.sleep(0.01)
        starting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await starting
        _check(8, await asyncio.wait_for(sandbox.arun(home_world, _program(8)), 60))
        assert len(sandbox._res.live) == 1 and sandbox._starting == 0


async def test_close_wakes_waiters_with_an_error() -> None:
    sandbox = SandboxPool(workers=1, limits=SLOW)
    busy = asyncio.ensure_future(sandbox.arun(trouble_world, "hang()"))
    await asyncio.sleep(0.5)
    waiting = asyncio.ensure_future(sandbox.arun(home_world, _program(1)))
    await asyncio.sleep(0.05)
    sandbox.close()
    with pytest.raises(SandboxError, match="closed"):
        await asyncio.wait_for(waiting, 5)
    result = await asyncio.wait_for(busy, 5)
    assert result.kind == "worker_died"


def test_frame_reader_reads_pieces_and_refuses_oversized_headers() -> None:
    reader = FrameReader(cap=10)
    stream = frame(b"hello") + frame(b"") + frame(b"0123456789")
    for i in range(len(stream)):
        reader.feed(stream[i : i + 1])
    assert [reader.message(), reader.message(), reader.message(), reader.message()] == [
        b"hello",
        b"",
        b"0123456789",
        None,
    ]
    for header in (frame(b"x" * 11)[:4], b"\xff\xff\xff\xff", b"\x80\x00\x00\x00"):
        reader = FrameReader(cap=10)
        reader.feed(header)
        with pytest.raises(ProtocolError, match="size cap"):
            reader.message()


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found
