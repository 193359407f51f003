"""``serve_world``: the served world is built and run on a thread of its own, so a build that
never yields does not hold the serving loop, and a stop does not wait for it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from toolbench.cli.serve_world import WorldThread, world_on_thread
from toolbench.core.agent import ToolCall, ToolReply, ToolSpec
from toolbench.types import Outcome, Status


class ThreadBoundWorld:
    """Records the thread each call runs on."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return [ToolSpec("t", "a tool", {})]

    @property
    def request(self) -> str:
        return "do it"

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        self.threads.append(threading.current_thread().name)
        return ToolReply(f"{name} done")

    async def outcome(self) -> Outcome:
        self.threads.append(threading.current_thread().name)
        return Outcome(Status.SCORED, success=True)

    def failed(self, message: str) -> Outcome:
        return Outcome(Status.MODEL_ERROR, message=message)

    async def translate(self, action: str) -> list[ToolCall]:
        return []

    async def gold_calls(self) -> list[ToolCall]:
        return [ToolCall("t")]

    async def close(self) -> None:
        self.threads.append(threading.current_thread().name)


async def test_a_build_that_never_yields_does_not_hold_the_callers_loop() -> None:
    host = WorldThread()
    world = ThreadBoundWorld()

    async def build() -> ThreadBoundWorld:
        time.sleep(0.5)  # code that never yields (a gazetteer read)
        return world

    try:
        building = asyncio.ensure_future(world_on_thread(host, build))
        ticks = 0
        while not building.done():
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks >= 10  # the caller's loop ran meanwhile
        served = building.result()
        assert [spec.name for spec in served.tools] == ["t"] and served.request == "do it"
        assert (await served.call("t", {})).text == "t done"
        assert (await served.outcome()).success and await served.gold_calls()
        await served.close()
    finally:
        host.stop(1.0)
    assert world.threads == ["toolbench-world"] * 3
    assert not host.thread.is_alive()


async def test_a_cancelled_build_is_cancelled_there_and_the_thread_stops() -> None:
    host = WorldThread()
    reached, cancelled = threading.Event(), threading.Event()

    async def build() -> Any:
        reached.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    building = asyncio.ensure_future(world_on_thread(host, build))
    await asyncio.get_running_loop().run_in_executor(None, reached.wait, 5)
    building.cancel()
    await asyncio.wait({building}, timeout=5)
    host.stop(1.0)
    assert building.cancelled() and cancelled.wait(1)
    assert not host.thread.is_alive()


async def test_a_thread_stuck_in_its_build_is_left_behind_within_the_timeout() -> None:
    host = WorldThread()
    release = threading.Event()

    async def build() -> Any:
        release.wait(10)  # stuck, not at an await
        return ThreadBoundWorld()

    building = asyncio.ensure_future(world_on_thread(host, build))
    await asyncio.sleep(0.05)
    building.cancel()
    started = time.monotonic()
    host.stop(0.2)
    assert time.monotonic() - started < 5
    assert host.thread.is_alive()  # a daemon: the process does not wait for it
    release.set()
    host.thread.join(5)
