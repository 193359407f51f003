"""``toolbench serve TASK --mcp``: one sample's fresh world as MCP tools, over stdio or
streamable HTTP, for any agent; ``--verdict FILE`` writes the task's judge of the world when
the server stops, which is how a user (or a test) learns what the agent scored.

The handshake comes first. MCP clients give ``initialize`` a deadline (the MCP Inspector:
60 s), and building the world (the sample's golds executed, a gazetteer loaded) has taken
longer than that on a busy machine. So only what is cheap is done before serving: the flags,
the task's import and its data read without executing any gold (so an unknown task or
``--sample``, a task without tools, a taken port are still one line and exit 2), and then
the server answers at once while the world is built on a thread of its own; ``tools/list``
and ``tools/call`` wait for it, and a world that cannot be built is an MCP error of one line.

Over stdio, stdout is the MCP session and nothing else: fd 1 points at stderr from the
start, and the session is written to a duplicate of the real stdout. A stop (stdin's end,
the client's disconnect, Ctrl-C, SIGTERM) ends the serving, never the process, so the world
is judged and closed whichever way the session ended; each step of a stop is bounded, so the
process is gone within about 2 s of a signal whatever its clients are doing. What the SDK,
uvicorn or asyncio log on the way (a client gone mid-request, a malformed request) is one
line per kind on stderr, its traceback only in ``--log FILE`` (``serve_log``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import functools
import json
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolbench.agents import require_mcp
from toolbench.agents.listen import listening_socket
from toolbench.agents.mcp_server import PendingWorld, one_line, serve_http, serve_stdio
from toolbench.cli.serve_log import incidents_logged, open_log
from toolbench.cli.serve_world import WorldThread, world_on_thread
from toolbench.core.agent import AgentWorld, HasAgentWorld, RecordingWorld, agent_world_of
from toolbench.core.solve import SampleState
from toolbench.core.task import Resources, Task, TaskData, prepare
from toolbench.errors import UserError
from toolbench.prompts.builder import PromptConfig, Prompter
from toolbench.sandbox.pool import SandboxPool
from toolbench.tasks.registry import get_task
from toolbench.types import Outcome, Sample, Status

if TYPE_CHECKING:
    from toolbench.cli.serve_world import WorldThread

#: How long the serving may take to wind down after a stop before the world is judged anyway.
STOP_GRACE_S = 1.5
#: How long closing the world, and then stopping its thread, may each take after the verdict.
CLOSE_S = 0.3
#: How long the build waits for a request that needs the world before it starts anyway.
HANDSHAKE_WINDOW_S = 0.5
#: The trace entries the verdict file keeps (the count is always exact).
MAX_VERDICT_CALLS = 200


@dataclasses.dataclass
class _Plan:
    """What the checked flags chose: the sample, how to serve it, where its verdict goes."""

    task: Task
    data: TaskData
    sample: Sample
    transport: str
    host: str
    verdict: Path | None
    wire: int  # the real stdout (fd 1 points at stderr while serving)
    sock: socket.socket | None  # HTTP: bound before anything is served


def command_serve_mcp(args: argparse.Namespace) -> int:
    """Check what is cheap to check, then serve the chosen sample's world until stopped."""
    if args.api_key is not None:
        raise UserError("--api-key: an MCP world checks no key; drop the flag")
    require_mcp("--mcp")
    transport = args.transport or "stdio"
    verdict = Path(args.verdict) if args.verdict is not None else None
    log_path = Path(args.log) if getattr(args, "log", None) else None

    with contextlib.ExitStack() as stack:
        wire = stack.enter_context(_stdout_to_stderr())  # a task's stray words miss the wire
        task, data, sample = _checked(args)
        sock = None
        if transport == "http":
            sock = stack.enter_context(contextlib.closing(listening_socket(args.host, args.port)))
        log = stack.enter_context(open_log(log_path, f"toolbench serve {task.name} --mcp"))
        plan = _Plan(task, data, sample, transport, args.host, verdict, wire, sock)
        stack.enter_context(incidents_logged(log, log_path))
        pool = stack.enter_context(SandboxPool(workers=1))
        host = WorldThread()
        code = asyncio.run(_serve_sample(plan, pool, host))
    if host.thread.is_alive():
        # The build is still in code that never yields (the stop cancelled it). Waiting for
        # it, or for the interpreter's teardown beside it, could take seconds: the verdict
        # is written and every file closed, so the process ends here.
        sys.stderr.flush()
        os._exit(code)
    return code


def _checked(args: argparse.Namespace) -> tuple[Task, TaskData, Sample]:
    """The task and the sample, or a one-line ``UserError``: the task imported and its data
    read (a tenth of a second to half a second), no gold executed."""
    task = get_task(args.task)
    if not isinstance(task, HasAgentWorld):
        raise UserError(f"task {task.name} has no tools to serve over MCP (it has no agent world)")
    data = task.load(args.data_version or "v0", _data_dir(args))
    return task, data, _pick_sample(data, args.sample, task.name)


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[int]:
    """File descriptor 1 pointed at stderr until the block ends; yields a duplicate of the
    real stdout. A process-wide ``redirect_stdout`` would not do: the world is built on
    another thread, and the SDK would take the redirected stream for its wire."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    wire = os.dup(1)
    os.dup2(2, 1)
    try:
        yield wire
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()  # what a task printed goes to stderr, not to the restored fd
        os.dup2(wire, 1)
        os.close(wire)


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
    subset = dataclasses.replace(data, samples=[sample], gold={})
    await prepare(task, subset, pool)
    resources = Resources(subset, pool, Prompter(subset.context, PromptConfig()))
    return agent_world_of(task).agent_world(subset, sample, resources)


async def _serve_sample(plan: _Plan, pool: Any, host: WorldThread) -> int:
    """Serve at once while the world is built; after the stop, judge it into the verdict
    and close it. 1 when the world could not be built, else 0."""
    state = SampleState(sample=plan.sample, epoch=1)
    wanted = asyncio.Event()
    building = asyncio.ensure_future(_recording(plan, pool, host, state, wanted))
    building.add_done_callback(lambda done: _report_failed_build(done, plan))
    stopped = asyncio.Event()
    world = None
    try:
        # A signal stops the serving; one during the judging (a client that closed stdin and
        # then sends SIGTERM, as the SDK's does after 2 s) lets the verdict be written first.
        with _signals_set(asyncio.get_running_loop(), stopped.set):
            await _until_stopped(_serve(PendingWorld(building, wanted), plan), stopped)
            world = await _built_or_none(building, stopped)
            if plan.verdict is not None:
                await _write_verdict(plan, world, state, _unbuilt(building))
    finally:
        if world is not None:
            with contextlib.suppress(Exception, asyncio.TimeoutError):
                await asyncio.wait_for(world.close(), timeout=CLOSE_S)
        building.cancel()
        host.stop(CLOSE_S if world is not None else 0.0)  # a build given up is not waited for
    failed = building.done() and not building.cancelled() and building.exception() is not None
    return 1 if failed else 0


async def _recording(
    plan: _Plan, pool: Any, host: WorldThread, state: SampleState, wanted: asyncio.Event
) -> RecordingWorld:
    """The world, built on ``host`` once a request wants it or ``HANDSHAKE_WINDOW_S`` has
    passed (a build beside the handshake halves the CPU the handshake gets: the GIL), as
    the served ``RecordingWorld``: the one the verdict judges, whose trace is its ``calls``."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(wanted.wait(), timeout=HANDSHAKE_WINDOW_S)
    build = functools.partial(sample_world, plan.task, plan.data, plan.sample, pool)
    return RecordingWorld(await world_on_thread(host, build), state)


def _report_failed_build(done: asyncio.Future[RecordingWorld], plan: _Plan) -> None:
    """One line on stderr when the world could not be built (the clients get it as an MCP
    error): the server goes on answering until it is stopped."""
    if done.cancelled() or done.exception() is None:
        return
    print(
        f"toolbench serve: the {plan.task.name} world of sample {plan.sample.id} could not be "
        f"built: {one_line(done.exception())}",  # type: ignore[arg-type]
        file=sys.stderr,
        flush=True,
    )


def _serve(world: Any, plan: _Plan) -> Awaitable[None]:
    name = f"toolbench-{plan.task.name}"
    if plan.sock is None:
        return serve_stdio(world, name, plan.wire)

    def announce(url: str) -> None:
        print(
            f"serving one {plan.task.name} world over MCP (streamable HTTP) on {url}  "
            "(Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )

    return serve_http(world, name, plan.host, plan.sock, announce)


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
        serving.result()  # the serving's own failure is the command's


async def _built_or_none(
    building: asyncio.Future[RecordingWorld], stopped: asyncio.Event
) -> RecordingWorld | None:
    """The world, when it is built or gets built before a signal; None when it could not be
    or a signal came first (then its build is cancelled: a stop does not wait for golds)."""
    if not building.done() and not stopped.is_set():
        signal_came: asyncio.Future[Any] = asyncio.ensure_future(stopped.wait())
        either: set[asyncio.Future[Any]] = {building, signal_came}
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        signal_came.cancel()
    if not building.done():
        building.cancel()
        return None
    if building.cancelled() or building.exception() is not None:
        return None
    return building.result()


def _unbuilt(building: asyncio.Future[RecordingWorld]) -> Outcome:
    """The verdict's outcome when there is no world to judge (no tool was called on it)."""
    if building.done() and not building.cancelled() and building.exception() is not None:
        why = f"the world could not be built: {one_line(building.exception())}"  # type: ignore[arg-type]
    else:
        why = "the server stopped before the world was built (no tool was called)"
    return Outcome(Status.INFRA_ERROR, message=why)


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
    plan: _Plan, world: RecordingWorld | None, state: SampleState, unbuilt: Outcome
) -> None:
    """The judge's verdict of the world as it stands, as JSON, written whole or not at all."""
    assert plan.verdict is not None
    outcome = await world.outcome() if world is not None else unbuilt
    verdict = {
        "task": plan.task.name,
        "sample": plan.sample.id,
        "status": outcome.status.value,
        "success": outcome.success,
        "metrics": outcome.metrics,
        "message": outcome.message,
        "tool_calls": world.calls if world is not None else 0,
        "calls": state.trace[:MAX_VERDICT_CALLS],
    }
    text = json.dumps(verdict, indent=2, ensure_ascii=False, default=str) + "\n"
    path = plan.verdict
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        raise UserError(
            f"--verdict {path}: cannot write it ({exc.strerror}); pick another file"
        ) from None
