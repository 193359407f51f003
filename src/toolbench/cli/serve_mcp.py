"""``toolbench serve TASK --mcp``: one sample's fresh world as MCP tools, over stdio or
streamable HTTP, for any agent; ``--verdict FILE`` writes the task's judge of the world when
the server stops, which is how a user (or a test) learns what the agent scored.

Over stdio, stdout is the MCP session and nothing else: every word of ours goes to stderr.
A stop (stdin's end, the client's disconnect, Ctrl-C, SIGTERM) ends the serving, never the
process, so the world is judged and closed whichever way the session ended.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from toolbench.agents import require_mcp
from toolbench.core.agent import AgentWorld, RecordingWorld
from toolbench.core.solve import SampleState
from toolbench.core.task import Resources, Task, TaskData
from toolbench.errors import UserError
from toolbench.types import Sample

#: How long the serving may take to wind down after a stop before the world is judged anyway
#: (a read of stdin blocked in a thread cannot be interrupted).
STOP_GRACE_S = 2.0
#: The trace entries the verdict file keeps (the count is always exact).
MAX_VERDICT_CALLS = 200


def command_serve_mcp(args: argparse.Namespace) -> int:
    """Load the task, execute the chosen sample's golds, and serve its world until stopped."""
    from toolbench.sandbox.pool import SandboxPool
    from toolbench.tasks.registry import get_task

    if args.api_key is not None:
        raise UserError("--api-key: an MCP world checks no key; drop the flag")
    require_mcp("--mcp")
    transport = args.transport or "stdio"
    verdict = Path(args.verdict) if args.verdict is not None else None
    task = get_task(args.task)
    if not task.has_agent_world:
        raise UserError(f"task {task.name} has no tools to serve over MCP (it has no agent world)")
    with contextlib.redirect_stdout(sys.stderr):  # a task's stray words must not reach the wire
        data = task.load(args.data_version or "v0", _data_dir(args))
        sample = _pick_sample(data, args.sample, task.name)
    with SandboxPool(workers=1) as pool:
        return asyncio.run(_serve_sample(task, data, sample, pool, args, transport, verdict))


def _data_dir(args: argparse.Namespace) -> Path | None:
    return Path(args.data_dir) if getattr(args, "data_dir", None) else None


def _pick_sample(data: TaskData, sample_id: str | None, task: str) -> Sample:
    """The sample ``--sample`` names (default: the first), or a one-line ``UserError``."""
    if not data.samples:
        raise UserError(f"task {task}: the data has no samples to serve")
    if sample_id is None:
        return data.samples[0]
    for sample in data.samples:
        if sample.id == sample_id:
            return sample
    first = ", ".join(s.id for s in data.samples[:5])
    raise UserError(
        f"--sample {sample_id}: task {task} has no such sample (its ids begin: {first}, ...)"
    )


async def sample_world(task: Task, data: TaskData, sample: Sample, pool: Any) -> AgentWorld:
    """A fresh world of ``sample`` with its golds executed (as ``toolbench run`` prepares
    them, for this one sample): the world ``--mcp`` serves, for tests to build the same."""
    from toolbench.prompts.builder import PromptConfig, Prompter

    subset = dataclasses.replace(data, samples=[sample], gold={})
    with contextlib.redirect_stdout(sys.stderr):  # stdout may be the MCP wire
        await task.prepare(subset, pool)
    resources = Resources(subset, pool, Prompter(subset.context, PromptConfig()))
    return task.agent_world(subset, sample, resources)


async def _serve_sample(
    task: Task,
    data: TaskData,
    sample: Sample,
    pool: Any,
    args: argparse.Namespace,
    transport: str,
    verdict: Path | None,
) -> int:
    """Golds of this one sample executed (as ``toolbench run`` prepares them), then its world
    served; judged into ``verdict`` and closed however the serving ended."""
    world = await sample_world(task, data, sample, pool)
    state = SampleState(sample=sample, epoch=1)
    recording = RecordingWorld(world, state)
    stopped = asyncio.Event()
    try:
        # A signal stops the serving; one during the judging (a client that closed stdin and
        # then sends SIGTERM, as the SDK's does after 2 s) lets the verdict be written first.
        with _signals_set(asyncio.get_running_loop(), stopped.set):
            await _until_stopped(_serve(recording, task.name, args, transport), stopped)
            if verdict is not None:
                await _write_verdict(verdict, task.name, sample.id, recording, state)
    finally:
        await world.close()
    return 0


def _serve(
    world: AgentWorld, task: str, args: argparse.Namespace, transport: str
) -> Awaitable[None]:
    from toolbench.agents.mcp_server import serve_http, serve_stdio

    name = f"toolbench-{task}"
    if transport == "stdio":
        return serve_stdio(world, name)

    def announce(url: str) -> None:
        print(
            f"serving one {task} world over MCP (streamable HTTP) on {url}  (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )

    return serve_http(world, name, args.host, args.port, announce)


async def _until_stopped(serve: Awaitable[None], stopped: asyncio.Event) -> None:
    """Run the serving until it ends by itself or ``stopped`` is set (a signal); a stop
    cancels it and waits at most ``STOP_GRACE_S`` for it to wind down."""
    serving = asyncio.ensure_future(serve)
    stop = asyncio.ensure_future(stopped.wait())
    await asyncio.wait({serving, stop}, return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    if not serving.done():
        serving.cancel()
        await asyncio.wait({serving}, timeout=STOP_GRACE_S)
    if serving.done() and not serving.cancelled():
        serving.result()  # the serving's own failure (a taken port) is the command's


@contextlib.contextmanager
def _signals_set(loop: asyncio.AbstractEventLoop, handler: Callable[[], None]) -> Iterator[None]:
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, handler)
    try:
        yield
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


async def _write_verdict(
    path: Path, task: str, sample_id: str, world: RecordingWorld, state: SampleState
) -> None:
    """The judge's verdict of the world as it stands, as JSON, written whole or not at all."""
    outcome = await world.outcome()
    verdict = {
        "task": task,
        "sample": sample_id,
        "status": outcome.status.value,
        "success": outcome.success,
        "metrics": outcome.metrics,
        "message": outcome.message,
        "tool_calls": world.calls,
        "calls": state.trace[:MAX_VERDICT_CALLS],
    }
    text = json.dumps(verdict, indent=2, ensure_ascii=False, default=str) + "\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        raise UserError(
            f"--verdict {path}: cannot write it ({exc.strerror}); pick another file"
        ) from None
