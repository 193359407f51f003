"""``--model-replicas``: a tiny local model (built here) served as 2 Ray replicas gives the same
records as the one in-process ``hf:`` model, through the CLI.

The replicated run is a ``toolbench run`` subprocess: it starts its own local Ray (toolbench's
``ray_setup.connect`` with no address) in a temp dir of its own (``RAY_TMPDIR``), so no other
cluster on the machine is found or touched, and Ray stops when the command exits.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.tinylm import build_tiny_lm

#: What may differ between the two runs: timing, the log's checksum chain, and how many
#: requests shared a ``generate`` call (one process batches all of them; each replica its own).
VARYING = {"latency_s", "chain", "batch_size", "started", "finished", "elapsed_s"}


def comparable(record: Any) -> Any:
    """The record without what varies from run to run (at any depth)."""
    if isinstance(record, dict):
        return {k: comparable(v) for k, v in record.items() if k not in VARYING}
    if isinstance(record, list):
        return [comparable(v) for v in record]
    return record


def run_replicated(args: list[str], timeout_s: float = 420.0) -> subprocess.CompletedProcess[str]:
    """``toolbench ARGS`` in a subprocess with a Ray of its own; whatever happens, nothing it
    started outlives it (its process group is killed on a timeout)."""
    temp = Path(f"/tmp/rt-{uuid.uuid4().hex[:6]}")  # short: Ray's socket paths must fit
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env.update(RAY_TMPDIR=str(temp), RAY_DISABLE_USAGE_STATS="1", RAY_USAGE_STATS_ENABLED="0")
    command = [sys.executable, "-m", "toolbench.cli", *args]
    process = subprocess.Popen(
        command, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"toolbench {' '.join(args)} ran past {timeout_s} s:\n{err[-3000:]}")
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return subprocess.CompletedProcess(command, process.returncode, out, err)


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_two_ray_replicas_give_the_records_of_one_local_model(
    cli: Callable[..., CliResult], tmp_path: Path, executor: str
) -> None:
    """``executor``: the samples run in the driver, or in a Ray sample actor whose own copy of
    the model must find the driver's replicas by name (creating two more would not fit the
    2-CPU cluster, and would not be the run's replicas)."""
    pytest.importorskip("ray")
    pytest.importorskip("transformers")
    # Scaled output weights: the best token wins by a margin no batching order rounds away.
    model = build_tiny_lm(tmp_path / "tiny", seed=0, lm_head_scale=10.0)
    common = ["run", "home_search", "--model", f"hf:{model}", "--limit", "6"]
    common += ["--max-tokens", "8", "--top-k-api", "2", "--concurrency", "6", "--no-cache"]
    local = tmp_path / "local"
    code, _, err = cli(*common, "--out", str(local))
    assert code == 0, err

    replicated = tmp_path / "replicated"
    more = ["--model-replicas", "2", "--executor", executor, "--out", str(replicated)]
    done = run_replicated([*common, *more])
    assert done.returncode == 0, done.stderr[-3000:]

    local_info, local_records = read_run(local)
    info, records = read_run(replicated)
    assert info["status"] == "complete" and len(records) == 6
    key = lambda r: (r["task"], r["id"], r["epoch"])  # noqa: E731
    assert [comparable(r) for r in sorted(records, key=key)] == [
        comparable(r) for r in sorted(local_records, key=key)
    ]
    assert info["metrics"] == local_info["metrics"] and info["counts"] == local_info["counts"]
    # The same run, as far as resuming is concerned: replicas are how, not what.
    assert info["fingerprint"] == local_info["fingerprint"]
    # Both replicas answered; run.json says how much each did.
    per_replica = info["endpoints"]
    assert set(per_replica) == {"replica 0", "replica 1"}
    assert sum(s["calls"] for s in per_replica.values()) == 6
    assert all(s["calls"] >= 1 and s["errors"] == 0 for s in per_replica.values())
    assert "endpoints" not in local_info
    if executor == "ray":
        assert info["executor"]["kind"] == "ray" and info["executor"]["actors_lost"] == 0


def test_replicas_of_a_model_that_runs_elsewhere_are_refused_in_one_line(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    args = ["run", "home_search", "--model", "oracle", "--model-replicas", "2", "--limit", "1"]
    code, _, err = cli(*args, "--out", str(tmp_path / "run"))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "--model-replicas 2: cannot replicate oracle" in lines[0]
    assert not (tmp_path / "run").exists()
