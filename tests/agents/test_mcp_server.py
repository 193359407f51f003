"""A world's tools over MCP: ``mcp_server`` against the SDK's own client (in memory and over
streamable HTTP, with a fake world), and ``toolbench serve TASK --mcp`` as a subprocess for
every task that has an agent world: the gold calls replayed by a scripted client leave a world
the judge scores as the gold itself, one wrong argument does not."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp.client.stdio
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Mount, Route

from toolbench.agents.listen import serve_until_cancelled
from toolbench.agents.mcp_server import (
    MAX_REQUEST_BYTES,
    PendingWorld,
    mcp_server,
    one_line,
    served_over_http,
)
from toolbench.core.agent import HasAgentWorld, ToolCall, ToolReply, ToolSpec
from toolbench.errors import UserError
from toolbench.types import InfraError, Outcome, Status

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class FakeWorld:
    """A counter: ``add`` adds ``n`` (an integer, else the API's own error words), ``broken``
    is the harness failing; the outcome is a success when the total is 3."""

    def __init__(self) -> None:
        self.total = 0
        self.active = 0
        self.most_at_once = 0

    @property
    def tools(self) -> Sequence[ToolSpec]:
        return [ToolSpec("add", "adds n to the total", SCHEMA), ToolSpec("broken", "fails", {})]

    @property
    def request(self) -> str:
        return "make the total 3"

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        self.active += 1
        self.most_at_once = max(self.most_at_once, self.active)
        try:
            await asyncio.sleep(0.01)
            if name == "broken":
                raise InfraError("the sandbox went away")
            if name != "add":
                return ToolReply(f"no tool named {name}", is_error=True)
            n = arguments.get("n")
            if not isinstance(n, int) or isinstance(n, bool):
                return ToolReply("add: n must be a whole number", is_error=True)
            self.total += n
            return ToolReply(f"total {self.total}")
        finally:
            self.active -= 1

    async def outcome(self) -> Outcome:
        return Outcome(Status.SCORED, success=self.total == 3)

    def failed(self, message: str) -> Outcome:
        return Outcome(Status.MODEL_ERROR, message=message)

    async def translate(self, action: str) -> list[ToolCall]:
        return [ToolCall("add", {"n": int(action)})]

    async def gold_calls(self) -> list[ToolCall]:
        return [ToolCall("add", {"n": 3})]

    async def close(self) -> None:
        pass


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content)


# -- the server itself, in memory --------------------------------------------------------------


async def test_tools_are_listed_as_the_world_gives_them() -> None:
    async with Client(mcp_server(FakeWorld(), "fake")) as client:
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == ["add", "broken"]
    assert tools[0].description == "adds n to the total"
    assert tools[0].input_schema == SCHEMA


async def test_a_call_runs_on_the_world_and_its_reply_is_the_result() -> None:
    world = FakeWorld()
    async with Client(mcp_server(world, "fake")) as client:
        result = await client.call_tool("add", {"n": 2})
    assert (_text(result), result.is_error, world.total) == ("total 2", False, 2)


async def test_bad_arguments_are_answered_by_the_world_in_its_own_words() -> None:
    """Not the SDK's schema validation: the agent reads what the API says."""
    world = FakeWorld()
    async with Client(mcp_server(world, "fake")) as client:
        wrong_type = await client.call_tool("add", {"n": "two"})
        missing = await client.call_tool("add", {})
        unknown = await client.call_tool("nope", None)
    assert (_text(wrong_type), wrong_type.is_error) == ("add: n must be a whole number", True)
    assert missing.is_error and unknown.is_error and _text(unknown) == "no tool named nope"
    assert world.total == 0


async def test_the_harness_failing_is_an_mcp_error_and_the_server_lives_on() -> None:
    world = FakeWorld()
    async with Client(mcp_server(world, "fake")) as client:
        with pytest.raises(MCPError, match="could not run broken: InfraError: the sandbox"):
            await client.call_tool("broken", {})
        after = await client.call_tool("add", {"n": 1})
    assert _text(after) == "total 1"


async def test_parallel_calls_reach_the_world_one_at_a_time() -> None:
    world = FakeWorld()
    async with Client(mcp_server(world, "fake")) as client:
        results = await asyncio.gather(*(client.call_tool("add", {"n": 1}) for _ in range(5)))
    assert world.most_at_once == 1 and world.total == 5
    assert sorted(_text(r) for r in results) == [f"total {i}" for i in range(1, 6)]


# -- a world still being built (toolbench serve --mcp answers the handshake first) ------------


async def test_a_pending_world_is_initialized_at_once_and_its_tools_wait_for_it() -> None:
    ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    world = FakeWorld()
    async with Client(mcp_server(PendingWorld(ready), "fake")) as client:  # initialized
        listing = asyncio.ensure_future(client.list_tools())
        await asyncio.sleep(0.05)
        assert not listing.done()
        ready.set_result(world)
        assert [tool.name for tool in (await listing).tools] == ["add", "broken"]
        await client.call_tool("add", {"n": 3})
    assert world.total == 3


async def test_a_world_that_could_not_be_built_is_an_mcp_error_of_one_line() -> None:
    ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    ready.set_exception(UserError("test.jsonl:1: gold program 1 fails\n  in the sandbox"))
    async with Client(mcp_server(PendingWorld(ready), "fake")) as client:
        with pytest.raises(MCPError) as listed:
            await client.list_tools()
        with pytest.raises(MCPError, match="could not be built"):
            await client.call_tool("add", {"n": 1})
    said = str(listed.value)
    assert "the world could not be built: test.jsonl:1: gold program 1 fails in the" in said
    assert "\n" not in said


async def test_a_request_cancelled_while_it_waits_does_not_cancel_the_build() -> None:
    ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(PendingWorld(ready).get())
    await asyncio.sleep(0)
    waiting.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await waiting
    assert not ready.done()


def test_one_line_is_one_bounded_line() -> None:
    assert one_line(RuntimeError("a\n  b")) == "RuntimeError: a b"
    assert one_line(UserError("--sample 9: no such sample")) == "--sample 9: no such sample"
    assert len(one_line(ValueError("x" * 10_000))) <= 2_000


async def test_serving_stops_at_once_whatever_its_connections_are_doing() -> None:
    """Half-open connections and a request its app never answers: a cancel still ends the
    serving, and the request's task is cancelled, not waited for."""
    stuck = asyncio.Event()
    cancelled = asyncio.Event()

    async def never_answers(scope: Any, receive: Any, send: Any) -> None:
        stuck.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    serving = asyncio.ensure_future(serve_until_cancelled(never_answers, sock))
    writers = []
    for index in range(30):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.1\r\nHost: x\r\n" + (b"\r\n" if index == 0 else b"X-A: "))
        await writer.drain()
        writers.append(writer)
    await asyncio.wait_for(stuck.wait(), timeout=10)
    serving.cancel()
    await asyncio.wait({serving}, timeout=10)
    assert serving.cancelled() and cancelled.is_set()
    for writer in writers:
        writer.close()


# -- many worlds mounted under one loopback server (as the runner does) -------------------------


@contextlib.asynccontextmanager
async def _uvicorn(app: Any) -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await serving
        sock.close()


async def test_worlds_mounted_side_by_side_stay_apart() -> None:
    one, two = FakeWorld(), FakeWorld()
    async with served_over_http(one, "one") as app_one, served_over_http(two, "two") as app_two:
        app = Starlette(routes=[Route("/mcp/one", app_one), Mount("/mcp/two", app_two)])
        async with _uvicorn(app) as port:
            base = f"http://127.0.0.1:{port}/mcp"
            async with Client(f"{base}/one") as first, Client(f"{base}/two") as second:
                await first.call_tool("add", {"n": 1})
                await second.call_tool("add", {"n": 2})
                refused = await first.call_tool("add", {"n": True})
                with pytest.raises(MCPError):
                    await second.call_tool("broken", {})
                assert [t.name for t in (await second.list_tools()).tools] == ["add", "broken"]
    assert (one.total, two.total) == (1, 2)
    assert refused.is_error


async def test_an_oversized_request_is_refused_and_the_world_serves_on() -> None:
    """A body over the cap is refused (413) whether its length is declared or it comes in
    chunks (the SDK would otherwise hold a body of any size); the next call is answered."""
    import httpx

    world = FakeWorld()
    headers = {"content-type": "application/json", "accept": "application/json"}
    big = b"{" + b" " * (MAX_REQUEST_BYTES + 10) + b"}"

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(big), 1 << 20):
            yield big[start : start + (1 << 20)]

    async with served_over_http(world, "w") as app:
        routes = Starlette(routes=[Route("/mcp", app)])
        async with _uvicorn(routes) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            async with httpx.AsyncClient(timeout=30) as http:
                declared = await http.post(url, content=big, headers=headers)
                assert declared.status_code == 413
                chunked = await http.post(url, content=chunks(), headers=headers)
                assert chunked.status_code == 413
            async with Client(url) as client:
                await client.call_tool("add", {"n": 3})
    assert world.total == 3


# -- toolbench serve TASK --mcp, as a subprocess ------------------------------------------------


def _agent_tasks() -> list[str]:
    from toolbench.tasks.registry import all_tasks

    return [task.name for task in all_tasks() if isinstance(task, HasAgentWorld)]


def _serve_argv(task: str, sample: str, verdict: Path, *more: str) -> list[str]:
    flags = ["--mcp", "--sample", sample, "--verdict", str(verdict), *more]
    return ["-m", "toolbench.cli", "serve", task, *flags]


async def _gold_calls(task_name: str, sample_ids: Sequence[str]) -> dict[str, Any]:
    """Each sample's gold calls and the outcome they get on a world built in-process, the same
    way the command builds the one it serves."""
    from toolbench.cli.serve_mcp import sample_world
    from toolbench.sandbox.pool import SandboxPool
    from toolbench.tasks.registry import get_task

    task = get_task(task_name)
    data = task.load("v0", None)
    found = {}
    with SandboxPool(workers=1) as pool:
        for sample in data.samples:
            if sample.id not in sample_ids:
                continue
            world = await sample_world(task, data, sample, pool)
            try:
                calls = await world.gold_calls()
                for call in calls:
                    assert not (await world.call(call.name, call.arguments)).is_error, call
                found[sample.id] = (calls, await world.outcome())
            finally:
                await world.close()
    return found


def _spoiled(calls: list[ToolCall]) -> list[ToolCall]:
    """The calls with one argument of the last call that has one made wrong."""
    for index in range(len(calls) - 1, -1, -1):
        call = calls[index]
        if not call.arguments:
            continue
        key = sorted(call.arguments)[0]
        value = call.arguments[key]
        if isinstance(value, bool):
            wrong: Any = not value
        elif isinstance(value, int | float):
            wrong = value + 7
        else:
            wrong = f"{value}-not-this"
        changed = ToolCall(call.name, {**call.arguments, key: wrong})
        return [*calls[:index], changed, *calls[index + 1 :]]
    raise AssertionError("no gold call has an argument to spoil")


def _sample_ids(task_name: str) -> list[str]:
    from toolbench.tasks.registry import get_task

    return [sample.id for sample in get_task(task_name).load("v0", None).samples[:2]]


@pytest.fixture(autouse=True)
def _time_to_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's client sends SIGTERM 2 s after closing the server's stdin; on a loaded test
    machine the judge may need longer than that to write the verdict."""
    monkeypatch.setattr(mcp.client.stdio, "PROCESS_TERMINATION_TIMEOUT", 60.0)


async def _replay_over_stdio(task: str, sample: str, calls: list[ToolCall], out: Path) -> Any:
    params = StdioServerParameters(
        command=sys.executable, args=_serve_argv(task, sample, out), env=dict(os.environ)
    )
    async with Client(params) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert {call.name for call in calls} <= listed
        for call in calls:
            await client.call_tool(call.name, dict(call.arguments))
    return json.loads(out.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("task", _agent_tasks())
async def test_gold_calls_over_stdio_score_the_gold_and_one_wrong_argument_does_not(
    task: str, tmp_path: Path
) -> None:
    first, second = _sample_ids(task)
    golds = await _gold_calls(task, [first, second])
    calls, expected = golds[first]
    verdict = await _replay_over_stdio(task, first, calls, tmp_path / "gold.json")
    assert verdict["success"] is True, verdict
    assert expected.success and verdict["metrics"] == expected.metrics
    assert (verdict["task"], verdict["sample"], verdict["status"]) == (task, first, "scored")
    assert verdict["tool_calls"] == len(calls)

    spoiled = _spoiled(golds[second][0])
    verdict = await _replay_over_stdio(task, second, spoiled, tmp_path / "wrong.json")
    assert verdict["success"] is False, (spoiled, verdict)


EIGHT_TASKS = {"home_search", "booking", "open_weather", "the_cat_api", "google_sheets",
               "virtual_home", "web_shop", "tabletop"}  # fmt: skip


def test_every_toolbench_task_can_be_served_to_agents() -> None:
    assert set(_agent_tasks()) >= EIGHT_TASKS


@pytest.mark.slow
@pytest.mark.parametrize("task", _agent_tasks())
async def test_gold_calls_over_http_score_the_gold(task: str, tmp_path: Path) -> None:
    first = _sample_ids(task)[0]
    calls, expected = (await _gold_calls(task, [first]))[first]
    out = tmp_path / "verdict.json"
    argv = _serve_argv(task, first, out, "--transport", "http", "--port", "0")
    process = await asyncio.create_subprocess_exec(
        sys.executable, *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        url = await asyncio.wait_for(_announced_url(process), timeout=120)
        async with Client(url) as client:
            assert {c.name for c in calls} <= {t.name for t in (await client.list_tools()).tools}
            for call in calls:
                await client.call_tool(call.name, dict(call.arguments))
        process.send_signal(signal.SIGTERM)
        stdout, _ = await asyncio.wait_for(process.communicate(), timeout=60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0 and stdout == b""
    verdict = json.loads(out.read_text())
    assert verdict["success"] is True and verdict["metrics"] == expected.metrics


async def _announced_url(process: asyncio.subprocess.Process) -> str:
    assert process.stderr is not None
    while line := (await process.stderr.readline()).decode():
        for word in line.split():
            if word.startswith("http://"):
                return word
    raise AssertionError("the server ended without announcing its URL")


def test_an_unknown_sample_is_one_line_and_exit_2(cli: Any, tmp_path: Path) -> None:
    task = _agent_tasks()[0]
    code, out, err = cli("serve", task, "--mcp", "--sample", "no-such-sample")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--sample no-such-sample" in err


def test_a_task_without_an_agent_world_is_one_line_and_exit_2(cli: Any) -> None:
    from toolbench.tasks.registry import all_tasks

    without = [task.name for task in all_tasks() if not isinstance(task, HasAgentWorld)]
    if not without:
        pytest.skip("every task has an agent world")
    code, out, err = cli("serve", without[0], "--mcp")
    assert code == 2 and out == "" and err.count("\n") == 1 and "MCP" in err


def test_serving_without_the_mcp_sdk_names_the_extra(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    code, out, err = cli("serve", "home_search", "--mcp")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "pip install 'toolbench[mcp]'" in err


def test_mcp_flags_without_mcp_are_refused(cli: Any) -> None:
    code, _, err = cli("serve", "open_weather", "--sample", "0")
    assert code == 2 and "--sample: only with --mcp" in err


@pytest.mark.slow
async def test_sigterm_with_a_client_attached_writes_the_verdict_and_exits(tmp_path: Path) -> None:
    """A stop while stdin is still open (a user's Ctrl-C, a client's SIGTERM) is not stuck on
    the read of stdin: the world is judged and the process ends."""
    task = _agent_tasks()[0]
    out = tmp_path / "verdict.json"
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *_serve_argv(task, _sample_ids(task)[0], out),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdin is not None and process.stdout is not None
    try:  # one request answered: the server is up and its signal handlers are set
        client = {"name": "t", "version": "1"}
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
        process.stdin.write((json.dumps(message) + "\n").encode())
        answer = json.loads(await asyncio.wait_for(process.stdout.readline(), timeout=120))
        assert answer["id"] == 1 and "result" in answer
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), timeout=30) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    verdict = json.loads(out.read_text())
    assert (verdict["task"], verdict["tool_calls"], verdict["success"]) == (task, 0, False)
