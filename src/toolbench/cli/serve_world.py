"""The world ``toolbench serve --mcp`` serves, built and run on an event loop of its own thread.

Building a sample's world executes its golds, and a task may work for seconds there without
yielding (open_weather reads its gazetteer: 2 s of one loop's time). On the serving loop that
would hold the MCP handshake back, and a signal's handler with it; on a thread of its own it
does not. Every later call on the world runs on that thread's loop too, since the world's
own locks and the sandbox's waiters belong to the loop it was built on.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from typing import Any, TypeVar

from toolbench.core.agent import AgentWorld, ToolCall, ToolReply, ToolSpec
from toolbench.types import Outcome

T = TypeVar("T")

#: How long the world's loop gives its tasks to end after they are cancelled at the stop.
CANCEL_S = 0.3


class WorldThread:
    """A daemon thread running an event loop, for one world."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="toolbench-world", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """``work`` run on the world's loop, awaited from the caller's; cancelling the caller
        cancels it there."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    def stop(self, timeout: float) -> None:
        """Cancel what still runs there and stop the loop, waiting at most ``timeout``: a
        build stuck in code that never yields is left to the process's end (a daemon)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self._cancel_and_stop)
        self.thread.join(timeout)
        if not self.thread.is_alive():
            self.loop.close()

    def _cancel_and_stop(self) -> None:
        tasks = asyncio.all_tasks(self.loop)
        for task in tasks:
            task.cancel()

        async def then_stop() -> None:
            if tasks:
                await asyncio.wait(tasks, timeout=CANCEL_S)
            self.loop.stop()

        self.loop.create_task(then_stop())


async def world_on_thread(
    host: WorldThread, build: Callable[[], Awaitable[AgentWorld]]
) -> AgentWorld:
    """The world ``build`` makes, built on ``host``'s loop, as the caller's loop calls it."""

    async def there() -> tuple[AgentWorld, list[ToolSpec], str]:
        world = await build()
        return world, list(world.tools), world.request

    world, tools, request = await host.run(there())
    return _ThreadWorld(world, host, tools, request)


class _ThreadWorld:
    """A world living on a ``WorldThread``: each coroutine of it runs there."""

    def __init__(
        self, world: AgentWorld, host: WorldThread, tools: Sequence[ToolSpec], request: str
    ) -> None:
        self.world, self.host = world, host
        self._tools, self._request = tools, request

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return self._tools

    @property
    def request(self) -> str:
        return self._request

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        return await self.host.run(self.world.call(name, arguments))

    async def outcome(self) -> Outcome:
        return await self.host.run(self.world.outcome())

    def failed(self, message: str) -> Outcome:
        return self.world.failed(message)

    async def translate(self, action: str) -> list[ToolCall]:
        return await self.host.run(self.world.translate(action))

    async def gold_calls(self) -> list[ToolCall]:
        return await self.host.run(self.world.gold_calls())

    async def close(self) -> None:
        await self.host.run(self.world.close())
