"""The model server goes away mid-run, or hangs and the user presses Ctrl-C.

A server killed a few seconds into an 800-sample run: the breaker shared by all samples
notices within its window, the run stops dispatching, leaves the rest undone (not as a pile of
infra-error records), says so in one line and exits 3; rerunning the same command against a
live server finishes it with no duplicates. A server that hangs: one Ctrl-C stops the run
promptly, without waiting for the hung requests or retry sleeps.

The server is its own process (``python -m tests.overflow_server``), so killing it is a real
kill: the kernel resets its connections and refuses new ones. The run is its own process too,
so the test can time its exit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.test_resilience import wait_for_records
from tests.conftest import read_run
from tests.fakeserver import FakeOpenAIServer

TASK_SAMPLES = 100  # home_search's test set
EPOCHS = 8  # 800 sample x epochs


def start_server(port: int = 0, delay_s: float = 0.0) -> tuple[subprocess.Popen[str], int]:
    """The loopback server in its own process; (process, port) once it listens."""
    command = [sys.executable, "-m", "tests.overflow_server", "--port", str(port),
               "--delay", str(delay_s)]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("port "), line
    return proc, int(line.split()[1])


def run_command(port: int, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "toolbench.cli", "run", "home_search", "--model", "openai:x",
        "--base-url", f"http://127.0.0.1:{port}/v1", "--out", str(out), "--no-cache",
        "--concurrency", "16", "--timeout", "5", *extra,
    ]  # fmt: skip


def test_a_server_killed_mid_run_stops_it_within_seconds_and_a_rerun_finishes(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    server, port = start_server(delay_s=0.5)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = run_command(port, out, "--epochs", str(EPOCHS))
    try:
        run = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        wait_for_records(out / "samples.jsonl", 60, timeout_s=240)
        server.kill()
        killed_at = time.monotonic()
        server.wait(10)
        output, _ = run.communicate(timeout=120)
        stopped_after = time.monotonic() - killed_at
    finally:
        server.kill()
    print(f"the run exited {stopped_after:.1f} s after the server was killed")
    print("\n".join(output.splitlines()[-12:]))
    assert run.returncode == 3, output[-3000:]
    assert stopped_after < 60, stopped_after  # the breaker's window is 10 s; ~11 s measured
    info, records = read_run(out)
    infra = [r for r in records if r["status"] == "infra_error"]
    print(f"{len(records)} records written, {len(infra)} infra errors")
    assert len(infra) <= 3, [r["message"] for r in infra]
    assert info["status"] == "incomplete"
    left = TASK_SAMPLES * EPOCHS - info["progress"]["done"]
    assert 0 < left < TASK_SAMPLES * EPOCHS - 50
    line = (
        f"the model server at http://127.0.0.1:{port}/v1 stopped answering (Connection "
        f"refused since "
    )
    assert line in output and f"{left} samples left undone: rerun the same command" in output
    assert "stopped answering" in info["stopped"]
    assert "infra errors remain" not in output  # the one line says what happened

    # The same command against a live server on the same address finishes the run.
    server, _ = start_server(port=port)
    try:
        again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    finally:
        server.kill()
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    info, records = read_run(out)
    keys = [(r["task"], r["id"], r["epoch"]) for r in records if r["status"] != "infra_error"]
    assert len(keys) == len(set(keys)) == TASK_SAMPLES * EPOCHS
    assert info["status"] == "complete" and "stopped" not in info
    assert info["timing"]["sessions"] == 2


def _interrupt(command: list[str]) -> tuple[int, str, float]:
    """Start the run, send one SIGINT once its requests are in flight; (exit code, stderr,
    seconds from the signal to the exit)."""
    run = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert run.stdout is not None
    for line in run.stdout:  # the progress line: solving has begun
        if line.startswith("progress:"):
            break
    time.sleep(1.0)  # requests are in flight (hanging, or their retries asleep)
    run.send_signal(signal.SIGINT)
    sent = time.monotonic()
    _, err = run.communicate(timeout=60)
    return run.returncode, err, time.monotonic() - sent


def test_one_ctrl_c_stops_a_run_against_a_hung_server_promptly(tmp_path: Path) -> None:
    """Every request hangs (the server answers after 120 s, the timeout is 60 s): one SIGINT
    ends the run at once, leaving a resumable folder."""
    out = tmp_path / "run"
    server, port = start_server(delay_s=120.0)
    try:
        code, err, took = _interrupt(run_command(port, out, "--limit", "20", "--timeout", "60"))
    finally:
        server.kill()
    print(f"the run exited {took:.1f} s after one Ctrl-C (requests hanging)")
    assert code == 130, err[-2000:]
    assert took < 15, took
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "interrupted" and info["progress"]["done"] == 0


def test_one_ctrl_c_stops_a_run_whose_retries_are_asleep(tmp_path: Path) -> None:
    """Every request is answered 503 with ``Retry-After: 30``: each sample sleeps 30 s
    between attempts; one SIGINT does not wait for the sleeps."""
    out = tmp_path / "run"
    with FakeOpenAIServer(fail_always=True, fail_status=503, retry_after="30") as server:
        command = run_command(0, out, "--limit", "20")
        command[command.index("--base-url") + 1] = server.base_url
        code, err, took = _interrupt(command)
    print(f"the run exited {took:.1f} s after one Ctrl-C (retries asleep)")
    assert code == 130, err[-2000:]
    assert took < 15, took
