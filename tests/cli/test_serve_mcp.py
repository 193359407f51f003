"""``toolbench serve TASK --mcp`` as a real process facing hostile or impatient clients
(issue 36): the handshake does not wait for the world, a world that cannot be built is an MCP
error of one line, SIGTERM ends it promptly whatever its connections are doing, bodies over
the cap are 413 however they are sent, and no traceback reaches the terminal in any of it.

The tight numbers (handshake under 2 s, exit under 2 s after SIGTERM with 200 half-open
connections) are ``perf`` tests, run only with ``-m perf`` (and in CI, where ``tests/perf.py``
scales them to the machine's load); the default run holds loose bounds (the same processes
on a loaded machine). ``benchmarks/mcp_serve.py`` measures them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("mcp")

from mcp import Client

from tests.perf import budget

pytestmark = pytest.mark.slow

#: Loose bounds for the default run: a loaded 2-core machine, not the targets (see ``perf``).
LOOSE_HANDSHAKE_S = 15.0
LOOSE_STOP_S = 10.0
#: The targets of issue 36, held by the ``perf`` tests.
HANDSHAKE_S = 2.0
STOP_S = 2.0
HALF_OPEN = 200


def _argv(task: str, *more: str) -> list[str]:
    return [sys.executable, "-m", "toolbench.cli", "serve", task, "--mcp", *more]


class Served:
    """A running server process; ``stderr`` keeps all it wrote there (read as it comes)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stderr = ""
        self.url = ""
        self._reader = asyncio.ensure_future(self._read_stderr())

    async def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while line := (await self.process.stderr.readline()).decode(errors="replace"):
            self.stderr += line
            for word in line.split():
                if word.startswith("http://") and not self.url:
                    self.url = word

    async def announced(self, timeout: float = 120) -> str:
        deadline = time.monotonic() + timeout
        while not self.url:
            assert not self._reader.done(), f"the server ended first:\n{self.stderr}"
            assert time.monotonic() < deadline, "no URL announced"
            await asyncio.sleep(0.02)
        return self.url

    async def ended(self, timeout: float = 60) -> int:
        code = await asyncio.wait_for(self.process.wait(), timeout=timeout)
        await asyncio.wait_for(self._reader, timeout=timeout)
        return code


@contextlib.asynccontextmanager
async def serving(*argv: str, stdin: bool = False) -> AsyncIterator[Served]:
    """The process, killed (with its group) if the test left it running."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    served = Served(process)
    try:
        yield served
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        served._reader.cancel()


async def _rpc(process: asyncio.subprocess.Process, message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    await process.stdin.drain()


async def _answer(process: asyncio.subprocess.Process, timeout: float) -> dict[str, Any]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), timeout=timeout)
    assert line, "stdout ended"
    return json.loads(line)


HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


async def _stdio_handshake(task: str) -> tuple[float, float, Served]:
    """(seconds to the initialize answer, seconds to the first tools/list answer) from
    spawning the process; stdin is closed after and the process waited for."""
    started = time.perf_counter()
    async with serving(*_argv(task), stdin=True) as served:
        await _rpc(served.process, HELLO)
        hello = await _answer(served.process, timeout=120)
        ready = time.perf_counter() - started
        assert hello["id"] == 1 and "result" in hello, hello
        await _rpc(served.process, INITIALIZED)
        await _rpc(served.process, LIST)
        listed = await _answer(served.process, timeout=120)
        assert listed["id"] == 2 and listed["result"]["tools"], listed
        tools = time.perf_counter() - started
        assert served.process.stdin is not None
        served.process.stdin.close()
        assert await served.ended() == 0
    return ready, tools, served


async def _http_handshake(task: str) -> tuple[float, Served]:
    """Seconds from spawning the HTTP server to the end of the SDK client's initialize."""
    started = time.perf_counter()
    async with serving(*_argv(task, "--transport", "http", "--port", "0")) as served:
        async with Client(await served.announced()) as client:
            ready = time.perf_counter() - started
            assert (await client.list_tools()).tools
        served.process.send_signal(signal.SIGTERM)
        assert await served.ended() == 0
    return ready, served


async def _half_open(url: str, count: int) -> list[asyncio.StreamWriter]:
    """``count`` connections that never finish a request: a third silent, a third with half
    the headers (and a byte more now and then: slowloris), a third with whole headers and a
    body that never comes."""
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    writers = []
    for index in range(count):
        _, writer = await asyncio.open_connection(where.hostname, where.port)
        if index % 3 == 1:
            writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        elif index % 3 == 2:
            writer.write(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Accept: application/json, text/event-stream\r\n"
                b"Content-Length: 100000\r\n\r\n{"
            )
        await writer.drain()
        writers.append(writer)
    return writers


async def _trickle(writers: list[asyncio.StreamWriter]) -> None:
    while True:
        await asyncio.sleep(0.3)
        for writer in writers:
            with contextlib.suppress(OSError, RuntimeError):
                writer.write(b"x")


async def _exit_after_sigterm(task: str, count: int) -> tuple[float, int, Served]:
    """Seconds from SIGTERM to the process's end with ``count`` half-open connections."""
    async with serving(*_argv(task, "--transport", "http", "--port", "0")) as served:
        url = await served.announced()
        writers = await _half_open(url, count)
        slow = asyncio.ensure_future(_trickle(writers[1::3]))
        await asyncio.sleep(1.0)  # the server has taken them all in
        started = time.perf_counter()
        served.process.send_signal(signal.SIGTERM)
        code = await served.ended(timeout=60)
        seconds = time.perf_counter() - started
        slow.cancel()
        for writer in writers:
            writer.close()
    return seconds, code, served


# -- the default run: what must hold, with loose bounds -----------------------------------------


async def test_initialize_is_answered_and_the_tools_follow_over_stdio() -> None:
    ready, tools, served = await _stdio_handshake("open_weather")
    assert ready < LOOSE_HANDSHAKE_S and ready <= tools
    assert "Traceback" not in served.stderr, served.stderr


def _broken_home_search(root: Path) -> Path:
    """home_search's v0 data with the first sample's gold calling a method the API lacks:
    readable (so ``--sample`` is checked) but its world cannot be built."""
    from toolbench.tasks.registry import get_task

    source = get_task("home_search").package_dir
    assert source is not None
    folder = root / "home_search" / "v0"
    shutil.copytree(source / "data" / "v0", folder)
    lines = (folder / "test.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["completion"] = ["API.no_such_method()"]
    lines[0] = json.dumps(first)
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n")
    return root


async def test_a_world_that_cannot_be_built_is_one_mcp_error_after_the_handshake(
    tmp_path: Path,
) -> None:
    """Before issue 36 the command built the world first and exited 2 without answering."""
    root = _broken_home_search(tmp_path / "data")
    verdict = tmp_path / "verdict.json"
    argv = _argv("home_search", "--data-dir", str(root), "--verdict", str(verdict))
    async with serving(*argv, stdin=True) as served:
        await _rpc(served.process, HELLO)
        assert "result" in await _answer(served.process, timeout=120)
        await _rpc(served.process, INITIALIZED)
        await _rpc(served.process, LIST)
        refused = await _answer(served.process, timeout=120)
        assert served.process.stdin is not None
        served.process.stdin.close()
        code = await served.ended()
    message = refused["error"]["message"]
    assert message.startswith("the world could not be built:") and "\n" not in message
    assert "gold program 1 fails" in message
    assert code == 1
    lines = served.stderr.splitlines()
    assert len(lines) == 1 and "could not be built" in lines[0], served.stderr
    written = json.loads(verdict.read_text())
    assert (written["status"], written["success"], written["tool_calls"]) == (
        "infra_error",
        False,
        0,
    )


async def test_sigterm_with_half_open_connections_ends_it_without_a_traceback() -> None:
    seconds, code, served = await _exit_after_sigterm("home_search", HALF_OPEN)
    assert code == 0 and seconds < LOOSE_STOP_S
    assert "Traceback" not in served.stderr, served.stderr


async def test_sigterm_while_the_world_is_being_built_ends_it() -> None:
    """open_weather's build runs seconds without yielding (its gazetteer): a stop does not
    wait for it."""
    async with serving(*_argv("open_weather", "--transport", "http", "--port", "0")) as served:
        await served.announced()
        started = time.perf_counter()
        served.process.send_signal(signal.SIGTERM)
        code = await served.ended()
        seconds = time.perf_counter() - started
    assert code == 0 and seconds < LOOSE_STOP_S
    assert "Traceback" not in served.stderr, served.stderr


async def test_bodies_over_the_cap_are_413_declared_or_chunked() -> None:
    import httpx

    from toolbench.agents.mcp_server import MAX_REQUEST_BYTES

    big = b'{"x": "' + b"a" * (2 * MAX_REQUEST_BYTES) + b'"}'  # 8 MB

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(big), 1 << 16):
            yield big[start : start + (1 << 16)]

    headers = {"content-type": "application/json", "accept": "application/json"}
    async with serving(*_argv("home_search", "--transport", "http", "--port", "0")) as served:
        url = await served.announced()
        async with httpx.AsyncClient(timeout=60) as http:
            declared = await http.post(url, content=big, headers=headers)
            chunked = await http.post(url, content=chunks(), headers=headers)
        async with Client(url) as client:  # and the world serves on
            assert (await client.list_tools()).tools
        served.process.send_signal(signal.SIGTERM)
        assert await served.ended() == 0
    assert (declared.status_code, chunked.status_code) == (413, 413)
    assert "at most 4,000,000 bytes" in chunked.text
    assert "Traceback" not in served.stderr, served.stderr


async def _gone_mid_request(url: str) -> None:
    """Clients that go away half-way: in the headers, in a declared body, in a chunked one."""
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    partial = [
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty",
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Accept: application/json, text/event-stream\r\nContent-Length: 5000\r\n\r\n{"js',
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        b'4\r\n{"js\r\n',
    ]
    for request in partial:
        _, writer = await asyncio.open_connection(where.hostname, where.port)
        writer.write(request)
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.transport.abort()  # a reset, as a killed client's


async def test_clients_gone_mid_request_leave_no_traceback() -> None:
    async with serving(*_argv("home_search", "--transport", "http", "--port", "0")) as served:
        url = await served.announced()
        await _gone_mid_request(url)
        async with Client(url) as client:
            assert (await client.list_tools()).tools
        served.process.send_signal(signal.SIGTERM)
        assert await served.ended() == 0
    assert "Traceback" not in served.stderr, served.stderr


def _has_log_flag() -> bool:
    from toolbench.cli.main import build_parser

    parser = build_parser()
    serve = parser._subparsers._group_actions[0].choices["serve"]  # type: ignore[union-attr]
    return any("--log" in action.option_strings for action in serve._actions)


async def _garbage(url: str, times: int) -> None:
    where = urlsplit(url)
    assert where.hostname is not None and where.port is not None
    for _ in range(times):
        reader, writer = await asyncio.open_connection(where.hostname, where.port)
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await writer.drain()
        await reader.read()
        writer.close()


@pytest.mark.parametrize("logged", [False, True])
async def test_an_incident_is_one_line_and_its_details_go_to_the_log(
    logged: bool, tmp_path: Path
) -> None:
    if logged and not _has_log_flag():
        pytest.skip("the serve parser has no --log flag (cli/main.py)")
    log = tmp_path / "serve.log"
    more = ["--log", str(log)] if logged else []
    async with serving(*_argv("home_search", "--transport", "http", "--port", "0", *more)) as s:
        await _garbage(await s.announced(), 3)
        s.process.send_signal(signal.SIGTERM)
        assert await s.ended() == 0
    incidents = [line for line in s.stderr.splitlines() if "Invalid HTTP request" in line]
    assert len(incidents) == 1, s.stderr
    assert "Traceback" not in s.stderr
    if logged:
        assert str(log) in incidents[0]
        assert log.read_text().count("Invalid HTTP request") == 3
    else:
        assert "not shown" in incidents[0]


# -- perf: the targets of issue 36 (pytest -m perf) ---------------------------------------------


@pytest.mark.perf
@pytest.mark.parametrize("task", ["open_weather", "home_search"])
async def test_perf_handshake_under_2_s(task: str) -> None:
    stdio, _, served = await _stdio_handshake(task)
    http, served_http = await _http_handshake(task)
    limit = budget(HANDSHAKE_S)
    assert stdio < limit and http < limit, (stdio, http, limit)
    assert "Traceback" not in served.stderr + served_http.stderr


@pytest.mark.perf
@pytest.mark.parametrize("task", ["open_weather", "home_search"])
async def test_perf_exit_within_2_s_of_sigterm_with_200_half_open(task: str) -> None:
    seconds, code, served = await _exit_after_sigterm(task, HALF_OPEN)
    assert code == 0 and seconds < budget(STOP_S), seconds
    assert "Traceback" not in served.stderr, served.stderr
