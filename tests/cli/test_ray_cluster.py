"""``--executor ray`` through the CLI, on a real Ray cluster of this machine (a head and a
worker node, each its own ``ray start --block`` process), against a local run of the same
command; and toolbench without Ray.

The worker node is killed (SIGKILL to its whole process tree) while the run is midway: the
samples that were in flight there are run again on the head's actor; the log ends with exactly
one record per sample x epoch, the same records and metrics as the local run. Then the driver
is interrupted (Ctrl-C) midway through a second run, then killed (kill -9) midway through its
rerun, and the same command, rerun, resumes it like a local rerun: only what was missing is
solved.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_resilience import wait_for_records
from tests.conftest import read_run
from tests.raycluster import local_cluster

pytestmark = pytest.mark.slow

TASKS = "home_search,booking,tabletop"
ARGS = ["--model", "oracle", "--limit", "30", "--epochs", "3", "--concurrency", "8"]
PLANNED = 3 * 3 * 30  # booking has more than 30 samples: --limit applies to each task
VOLATILE = {"chain", "latency_s", "duration_s", "elapsed_s"}  # time and the log's own chain


def command(out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "toolbench.cli", "run", TASKS, *ARGS, "--out", str(out),
            "--no-cache", *extra]  # fmt: skip


def comparable(value: Any) -> Any:
    """A record without what differs between two runs of the same work (timings, chain)."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def by_key(records: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    keyed = {(r["task"], r["id"], r["epoch"]): comparable(r) for r in records}
    assert len(keyed) == len(records), "a sample x epoch was written twice"
    return keyed


def assert_same_run(local: Path, ray: Path) -> None:
    (local_info, local_records), (ray_info, ray_records) = read_run(local), read_run(ray)
    assert len(ray_records) == len(local_records) == PLANNED
    assert by_key(ray_records) == by_key(local_records)
    for field in ("metrics", "counts", "progress", "fingerprint"):
        assert ray_info[field] == local_info[field], field
    assert ray_info["status"] == local_info["status"] == "complete"


def test_a_worker_node_killed_midway_changes_nothing_and_a_killed_driver_resumes(
    tmp_path: Path,
) -> None:
    local = tmp_path / "local"
    done = subprocess.run(command(local), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    with local_cluster(workers=1) as cluster:
        env = {**cluster.env, "PYTHONUNBUFFERED": "1"}
        on_ray = command(tmp_path / "ray", "--executor", "ray", "--ray-address", cluster.address)
        run = subprocess.Popen(on_ray, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env)  # fmt: skip
        try:
            wait_for_records(tmp_path / "ray" / "samples.jsonl", 60, timeout_s=300)
            cluster.kill(cluster.nodes[1])  # the worker node, midway
            output, _ = run.communicate(timeout=600)
        finally:
            run.kill()
        assert run.returncode == 0, output[-3000:]
        info, _ = read_run(tmp_path / "ray")
        executor = info["executor"]
        print(json.dumps(executor))
        assert executor["kind"] == "ray" and executor["nodes"] == 2
        assert executor["actors_lost"] == 1 and executor["redispatched"] >= 1
        assert executor["lost_as_infra_error"] == 0
        assert_same_run(local, tmp_path / "ray")

        # Ctrl-C midway: the run stops, says how to resume, and nothing is written twice.
        resumed = tmp_path / "resumed"
        on_ray = command(resumed, "--executor", "ray", "--ray-address", cluster.address)
        run = subprocess.Popen(on_ray, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)  # fmt: skip
        try:
            wait_for_records(resumed / "samples.jsonl", 30, timeout_s=300)
            run.send_signal(signal.SIGINT)
            _, err = run.communicate(timeout=120)
        finally:
            run.kill()
        assert run.returncode == 130, err[-3000:]
        assert "run the same command again to resume" in err
        info, partial = read_run(resumed)
        assert info["status"] == "interrupted" and len(partial) < PLANNED
        assert len(by_key(partial)) == len(partial)

        # The driver killed (kill -9) midway; the same command, rerun, resumes the run.
        run = subprocess.Popen(on_ray, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env)  # fmt: skip
        try:
            wait_for_records(resumed / "samples.jsonl", len(partial) + 60, timeout_s=300)
            os.kill(run.pid, signal.SIGKILL)
            run.wait(30)
        finally:
            run.kill()
        written = len((resumed / "samples.jsonl").read_text().splitlines())
        rerun = subprocess.run(on_ray, capture_output=True, text=True, env=env, timeout=600)
        assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
        assert f"({written} of {PLANNED} done before)" in rerun.stdout + rerun.stderr
        assert_same_run(local, resumed)
        again = subprocess.run(on_ray, capture_output=True, text=True, env=env, timeout=600)
        assert again.returncode == 0
        assert f"({PLANNED} of {PLANNED} done before)" in again.stdout + again.stderr
        assert_same_run(local, resumed)


def hidden_ray(tmp_path: Path) -> dict[str, str]:
    """An environment where ``import ray`` fails, as where Ray is not installed."""
    shadow = tmp_path / "no-ray"
    shadow.mkdir()
    (shadow / "ray.py").write_text("raise ImportError('No module named ray')\n")
    path = os.pathsep.join(p for p in (str(shadow), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_without_ray_local_runs_work_and_the_ray_executor_says_how_to_install_it(
    tmp_path: Path,
) -> None:
    env = hidden_ray(tmp_path)
    probe = subprocess.run([sys.executable, "-c", "import ray"], env=env, capture_output=True)
    assert probe.returncode != 0  # Ray is really hidden

    base = [sys.executable, "-m", "toolbench.cli", "run", "home_search,tabletop",
            "--model", "oracle", "--limit", "3", "--no-cache"]  # fmt: skip
    local = subprocess.run([*base, "--out", str(tmp_path / "local")], env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert local.returncode == 0, local.stderr[-3000:]
    info, records = read_run(tmp_path / "local")
    assert info["status"] == "complete" and len(records) == 6
    report = subprocess.run([sys.executable, "-m", "toolbench.cli", "report",
                             str(tmp_path / "local")], env=env, capture_output=True, text=True,
                            timeout=300)  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]

    for flags in (["--executor", "ray"], ["--executor", "ray", "--ray-address", "auto"]):
        out = tmp_path / f"ray{len(flags)}"
        refused = subprocess.run([*base, "--out", str(out), *flags], env=env,
                                 capture_output=True, text=True, timeout=300)  # fmt: skip
        assert refused.returncode == 2, refused.stderr[-3000:]
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1, refused.stderr
        assert "Ray is not installed" in lines[0] and "pip install 'toolbench[ray]'" in lines[0]
        assert not out.exists()  # refused before any run folder was made


def test_an_address_nobody_listens_on_is_refused_at_once(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = tmp_path / "run"
    refused = subprocess.run(
        [sys.executable, "-m", "toolbench.cli", "run", "home_search", "--model", "oracle",
         "--limit", "2", "--out", str(out), "--executor", "ray", "--ray-address",
         f"127.0.0.1:{port}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 2, refused.stderr[-3000:]
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and f"--ray-address 127.0.0.1:{port}" in lines[0], refused.stderr
    assert not out.exists()
