"""How fast ``toolbench serve TASK --mcp`` answers, and how fast it stops, as real processes.

* handshake: from spawning ``python -m toolbench.cli serve TASK --mcp`` to the end of an MCP
  client's ``initialize`` (the SDK's ``Client``), over stdio and over streamable HTTP
  (``--transport http --port 0``; the clock runs through the URL's announcement). Python's
  start-up and every import count. Also the time to the first ``tools/list`` answer, which
  waits for the sample's world (its golds executed) to be built.
* stop: the HTTP server with N half-open connections (a third connected and silent, a third
  sending a request's headers a byte at a time, a third with whole headers and a body that
  never comes), then SIGTERM: seconds until the process has exited.

Targets (issue 36): handshake under 2 s; exit within 2 s of SIGTERM with 200 half-open
connections; never a traceback on stderr. Exit status 1 on a miss.

Run: ``python benchmarks/mcp_serve.py [--tasks open_weather home_search] [--repeat 3]
[--connections 200]`` (about a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import sys
import time
from collections.abc import AsyncIterator

HANDSHAKE_TARGET_S = 2.0
STOP_TARGET_S = 2.0


def serve_argv(task: str, *more: str) -> list[str]:
    return ["-m", "toolbench.cli", "serve", task, "--mcp", *more]


async def stdio_handshake(task: str) -> tuple[float, float, str]:
    """(seconds to initialize, seconds to the first tools/list, stderr) over stdio."""
    import tempfile

    import mcp.client.stdio
    from mcp import Client, StdioServerParameters

    mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT = 30.0  # the judging after stdin's end
    params = StdioServerParameters(
        command=sys.executable, args=serve_argv(task), env=dict(os.environ)
    )
    with tempfile.TemporaryFile("w+") as errlog:
        started = time.perf_counter()
        async with Client(mcp.client.stdio.stdio_client(params, errlog=errlog)) as client:
            ready = time.perf_counter() - started
            await client.list_tools()
            listed = time.perf_counter() - started
        errlog.seek(0)
        return ready, listed, errlog.read()


@contextlib.asynccontextmanager
async def http_server(task: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """The HTTP server as a process and its announced URL; killed if still up at the end."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *serve_argv(task, "--transport", "http", "--port", "0"),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield process, await asyncio.wait_for(announced(process), timeout=120)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def announced(process: asyncio.subprocess.Process) -> str:
    assert process.stderr is not None
    while line := (await process.stderr.readline()).decode():
        for word in line.split():
            if word.startswith("http://"):
                return word
    raise SystemExit("the server ended without announcing its URL")


async def http_handshake(task: str) -> tuple[float, float, str]:
    """(seconds to initialize, seconds to the first tools/list, stderr) over HTTP."""
    from mcp import Client

    started = time.perf_counter()
    async with http_server(task) as (process, url):
        async with Client(url) as client:
            ready = time.perf_counter() - started
            await client.list_tools()
            listed = time.perf_counter() - started
        process.send_signal(signal.SIGTERM)
        assert process.stderr is not None
        err = (await asyncio.wait_for(process.stderr.read(), timeout=30)).decode()
        await process.wait()
    return ready, listed, err


async def half_open(host: str, port: int, kind: int) -> asyncio.StreamWriter:
    """One connection that never finishes its request (``kind`` 0, 1 or 2, see the top)."""
    _, writer = await asyncio.open_connection(host, port)
    if kind == 1:
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    elif kind == 2:
        writer.write(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{"
        )
    await writer.drain()
    return writer


async def stop_with_half_open(task: str, connections: int) -> tuple[float, str]:
    """Seconds from SIGTERM to exit with ``connections`` half-open connections, and stderr."""
    from urllib.parse import urlsplit

    async with http_server(task) as (process, url):
        where = urlsplit(url)
        assert where.hostname is not None and where.port is not None
        writers = [
            await half_open(where.hostname, where.port, index % 3) for index in range(connections)
        ]
        trickle = asyncio.ensure_future(_trickle(writers[1::3]))
        await asyncio.sleep(1.0)  # the server has read what they sent
        started = time.perf_counter()
        process.send_signal(signal.SIGTERM)
        assert process.stderr is not None
        err = (await asyncio.wait_for(process.stderr.read(), timeout=60)).decode()
        await asyncio.wait_for(process.wait(), timeout=60)
        seconds = time.perf_counter() - started
        trickle.cancel()
        for writer in writers:
            writer.close()
    return seconds, err


async def _trickle(writers: list[asyncio.StreamWriter]) -> None:
    """Slowloris: one more header byte on each connection every half second."""
    while True:
        await asyncio.sleep(0.5)
        for writer in writers:
            with contextlib.suppress(OSError):
                writer.write(b"X")


def _check(label: str, seconds: list[float], target: float, errs: list[str]) -> bool:
    median = statistics.median(seconds)
    shown = ", ".join(f"{s:.2f}" for s in seconds)
    ok = median < target and not any("Traceback" in err for err in errs)
    verdict = "PASS" if ok else "MISS"
    print(f"{label}: median {median:.2f} s ({shown}); target < {target} s: {verdict}")
    return ok


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=["open_weather", "home_search"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--connections", type=int, default=200)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    ok = True
    for task in args.tasks:
        for transport, measure in (("stdio", stdio_handshake), ("http", http_handshake)):
            runs = [await measure(task) for _ in range(args.repeat)]
            ok &= _check(
                f"{task} {transport} handshake", [r[0] for r in runs], HANDSHAKE_TARGET_S,
                [r[2] for r in runs],
            )  # fmt: skip
            lists = ", ".join(f"{r[1]:.2f}" for r in runs)
            print(f"{task} {transport} first tools/list (the world built): {lists} s")
        stops = [await stop_with_half_open(task, args.connections) for _ in range(args.repeat)]
        ok &= _check(
            f"{task} exit after SIGTERM, {args.connections} half-open connections",
            [s[0] for s in stops], STOP_TARGET_S, [s[1] for s in stops],
        )  # fmt: skip
        for _, err in stops:
            if "Traceback" in err:
                print(f"  a traceback on stderr:\n{err[-1500:]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
