"""A run against two endpoints of one model (``--base-url`` twice), through the CLI.

One endpoint is killed a few seconds into the run and started again on the same port: its
requests fail over to the other at once, it is taken out, checked back in once it answers, and
gets requests again; the run completes with the scores of a run against one server, and the
summary says what each endpoint did. With both killed the run stops as with one server: the
breaker, one line, exit 3.

The killed server is its own process (a real kill: the kernel resets its connections and
refuses new ones); the run is its own process too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

from tests.cli.test_resilience import scripted_answer, wait_for_records
from tests.conftest import read_run
from tests.overflow_server import OverflowServer

EPOCHS = 8  # 800 samples of home_search
DELAY_S = 0.25  # per request: the run lasts long enough to kill and restart a server in it
BIG = 1 << 20  # no prompt overflows


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def url_of(port: int) -> str:
    return f"http://127.0.0.1:{port}/v1"


def _serve(port: int, delay_s: float) -> None:
    server = OverflowServer(context_length=BIG, answer=scripted_answer, delay_s=delay_s, port=port)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve(server.listening_socket(), lambda: None))


def start_server(port: int, delay_s: float = DELAY_S) -> BaseProcess:
    """The scripted server in its own (forked) process on ``port``, once it listens."""
    process = multiprocessing.get_context("fork").Process(
        target=_serve, args=(port, delay_s), daemon=True
    )
    process.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return process
        time.sleep(0.02)
    process.kill()
    raise AssertionError(f"server on port {port} never listened")


def run_command(out: Path, *urls: str) -> list[str]:
    pool = [arg for url in urls for arg in ("--base-url", url)]
    return [
        sys.executable, "-m", "toolbench.cli", "run", "home_search", "--model", "openai:x",
        *pool, "--out", str(out), "--no-cache", "--concurrency", "16", "--timeout", "5",
        "--epochs", str(EPOCHS),
    ]  # fmt: skip


ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def test_an_endpoint_killed_midway_and_back_leaves_the_scores_of_one_server(
    tmp_path: Path,
) -> None:
    port = free_port()
    first = start_server(port)
    out = tmp_path / "pool"
    try:
        with OverflowServer(context_length=BIG, answer=scripted_answer, delay_s=DELAY_S) as other:
            command = run_command(out, url_of(port), other.base_url)
            run = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV
            )
            wait_for_records(out / "samples.jsonl", 80, timeout_s=240)
            first.kill()  # mid-run, with requests in flight on it
            first.join(10)
            wait_for_records(out / "samples.jsonl", 250, timeout_s=240)  # the other alone
            with OverflowServer(
                context_length=BIG, answer=scripted_answer, delay_s=DELAY_S, port=port
            ) as back:
                output, _ = run.communicate(timeout=300)
                answered_after_restart = back.answered
    finally:
        first.kill()
    print("\n".join(output.splitlines()[-8:]))
    assert run.returncode == 0, output[-3000:]
    info, records = read_run(out)
    keys = [(r["task"], r["id"], r["epoch"]) for r in records]
    assert len(keys) == len(set(keys)) == 100 * EPOCHS
    assert not [r for r in records if r["status"] == "infra_error"]
    assert "endpoint" not in json.dumps(records[0])  # which one answered is not in a record

    endpoints = info["endpoints"]
    assert list(endpoints) == [url_of(port), other.base_url]
    killed, alive = endpoints[url_of(port)], endpoints[other.base_url]
    assert killed["errors"] >= 1 and killed["taken_out"] >= 1, killed
    assert answered_after_restart > 0, "the restarted endpoint was never checked back in"
    assert alive["errors"] == 0 and alive["calls"] > killed["calls"]
    assert sum(e["calls"] - e["errors"] for e in endpoints.values()) >= 100 * EPOCHS
    assert "endpoints (2): calls, errors, mean latency" in output
    for url, entry in endpoints.items():
        assert re.search(rf"{re.escape(url)}\s+{entry['calls']:,} calls, ", output), url

    # toolbench report says the same, in its terminal tables and its JSON.
    shown = subprocess.run(
        [sys.executable, "-m", "toolbench.cli", "report", str(out)],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "endpoints (2): calls, errors, mean latency" in shown.stdout
    assert re.search(rf"{re.escape(url_of(port))}\s+{killed['calls']:,} calls, ", shown.stdout)
    as_json = subprocess.run(
        [sys.executable, "-m", "toolbench.cli", "report", str(out), "--json"],
        capture_output=True, text=True, env=ENV, timeout=120,
    )  # fmt: skip
    assert json.loads(as_json.stdout)["endpoints"] == {str(out): endpoints}

    # The same command against one server that never went away: the same scores.
    with OverflowServer(context_length=BIG, answer=scripted_answer) as single:
        alone = subprocess.run(
            run_command(tmp_path / "single", single.base_url),
            capture_output=True, text=True, env=ENV, timeout=600,
        )  # fmt: skip
    assert alone.returncode == 0, alone.stdout[-2000:] + alone.stderr[-2000:]
    single_info, _ = read_run(tmp_path / "single")
    assert info["metrics"] == single_info["metrics"]
    assert info["metrics"]["home_search"]["success_rate"] > 0.5  # not a trivial score
    assert "endpoints" not in single_info


def test_both_endpoints_killed_stop_the_run_with_exit_3(tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    servers = [start_server(port, delay_s=0.5) for port in ports]
    out = tmp_path / "pool"
    try:
        run = subprocess.Popen(
            run_command(out, *map(url_of, ports)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV,
        )  # fmt: skip
        wait_for_records(out / "samples.jsonl", 60, timeout_s=240)
        for server in servers:
            server.kill()
        killed_at = time.monotonic()
        output, _ = run.communicate(timeout=180)
        stopped_after = time.monotonic() - killed_at
    finally:
        for server in servers:
            server.kill()
    print(f"the run exited {stopped_after:.1f} s after both servers were killed")
    print("\n".join(output.splitlines()[-8:]))
    assert run.returncode == 3, output[-3000:]
    assert stopped_after < 90, stopped_after
    info, records = read_run(out)
    infra = [r for r in records if r["status"] == "infra_error"]
    assert len(infra) <= 3, [r["message"] for r in infra]
    assert info["status"] == "incomplete"
    pool = ", ".join(map(url_of, ports))
    assert f"all 2 model servers ({pool}) stopped answering (" in output
    assert "samples left undone: rerun the same command" in output
    assert set(info["endpoints"]) == set(map(url_of, ports))


def test_a_pool_where_no_endpoint_answers_is_one_line_and_exit_2(tmp_path: Path) -> None:
    urls = [url_of(free_port()), url_of(free_port())]
    done = subprocess.run(
        run_command(tmp_path / "run", *urls), capture_output=True, text=True, env=ENV, timeout=120
    )
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert f"--base-url {urls[0]}, {urls[1]}: cannot connect to any of them (" in lines[0]


def test_an_endpoint_down_at_the_start_is_left_out_and_the_run_completes(tmp_path: Path) -> None:
    dead = url_of(free_port())
    out = tmp_path / "run"
    with OverflowServer(context_length=BIG, answer=scripted_answer) as live:
        command = run_command(out, dead, live.base_url)
        command[command.index("--epochs") + 1] = "1"
        done = subprocess.run(
            [*command, "--limit", "30"], capture_output=True, text=True, env=ENV, timeout=300
        )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"--base-url {dead}: cannot connect (Connection refused); left out" in done.stderr
    info, records = read_run(out)
    assert len(records) == 30 and info["status"] == "complete"
    assert info["endpoints"][dead]["taken_out"] == 1
    assert info["endpoints"][dead]["calls"] == 0  # never sent a request: it was out
    assert info["endpoints"][live.base_url]["calls"] == 30
