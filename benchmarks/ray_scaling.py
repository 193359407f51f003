"""``--executor ray`` against a local run of the same work, on this machine, in one run.

Two CPU-bound workloads, through the real ``toolbench run`` command (each run its own process):

* google_sheets with every gold executed (a replay file of the golds with a trailing comment,
  as ``benchmarks/harness.py`` does, so each one really runs in the sandbox: pandas, formulas);
* tabletop with the ``oracle`` (programs executed, scenes checked).

Each is run locally, then on a real Ray cluster of this machine (``tests/raycluster.py``: each
node a ``ray start --block`` process) with 1 node (the head) and with 2 nodes (head + worker).
Printed per workload: samples/s of each (solving only: loading, and on Ray the actors' start,
excluded, as ``timing.last_session_samples_per_s`` counts), the ratios 2-node/local and
2-node/1-node, the actors' start, and the driver's CPU per sample on Ray (``executor.
driver_cpu_ms_per_sample``: all of the driver process's CPU during the session, Ray's own
threads included, divided by the samples, from the moment keys are handed out; ``writing``:
the part spent appending records to the log, which a local run spends too). Targets: driver
CPU <= 1 ms per sample; 2 nodes >= 0.9x local.

On this 2-core machine two nodes share the same two cores (each node's actor runs its own
sandbox workers), so 2 nodes cannot beat local here: the ratio measures Ray's overhead. On a
real cluster each node brings its own cores: see docs/cluster.md.

Run: ``python benchmarks/ray_scaling.py [--epochs-sheets N] [--epochs-tabletop N]`` (a few
minutes; the clusters it starts are stopped when it ends).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.raycluster import CLUSTER_ENV, LocalCluster  # noqa: E402

CONCURRENCY = 64


def sheets_replay(folder: Path) -> Path:
    """Every google_sheets gold with a trailing comment: executed, not accepted verbatim."""
    from toolbench.data.layout import read_test_jsonl
    from toolbench.tasks.registry import get_task

    data = get_task("google_sheets").package_dir / "data" / "v0"  # type: ignore[operator]
    replay = folder / "sheets-replay.jsonl"
    with replay.open("w") as handle:
        for sample in read_test_jsonl(data / "test.jsonl", "google_sheets"):
            line = {"id": sample.id, "prediction": sample.labels[0] + "\n# executed"}
            handle.write(json.dumps(line) + "\n")
    return replay


def toolbench_run(args: list[str], out: Path, extra: list[str]) -> dict[str, Any]:
    command = [sys.executable, "-m", "toolbench.cli", "run", *args, "--out", str(out),
               "--no-cache", "--concurrency", str(CONCURRENCY), *extra]  # fmt: skip
    env = {**os.environ, **CLUSTER_ENV}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    info: dict[str, Any] = json.loads((out / "run.json").read_text())
    info["_wall_s"] = wall
    return info


def rate(info: dict[str, Any]) -> float:
    return float(info["timing"]["last_session_samples_per_s"])


def line(name: str, info: dict[str, Any]) -> str:
    samples = sum(sum(c.values()) for c in info["counts"].values())
    text = f"  {name:<8} {samples:6d} samples {rate(info):8.1f} samples/s  whole command "
    text += f"{info['_wall_s']:6.1f} s"
    executor = info.get("executor")
    if executor:
        text += (
            f"  driver CPU {executor['driver_cpu_ms_per_sample']:.3f} ms/sample (target 1; "
            f"{executor.get('writing_cpu_ms_per_sample', 0):.3f} of it writing the log)"
            f"  actors' start {executor['startup_s']:.1f} s  batches {executor['batches']}"
        )
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs-sheets", type=int, default=4)  # 158 samples each
    parser.add_argument("--epochs-tabletop", type=int, default=6)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tb-ray-bench-"))
    workloads = {
        "google_sheets (every gold executed)": [
            "google_sheets", "--model", f"replay:{sheets_replay(work)}",
            "--epochs", str(args.epochs_sheets),
        ],
        "tabletop (oracle)": ["tabletop", "--model", "oracle", "--epochs",
                              str(args.epochs_tabletop)],
    }  # fmt: skip
    results: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in workloads}
    for i, (name, run_args) in enumerate(workloads.items()):
        toolbench_run([*run_args[:3], "--limit", "5"], work / f"{i}-warm", [])
        results[name]["local"] = toolbench_run(run_args, work / f"{i}-local", [])
    with LocalCluster(workers=0) as cluster:
        ray = ["--executor", "ray", "--ray-address", cluster.address]
        for i, (name, run_args) in enumerate(workloads.items()):
            results[name]["ray 1"] = toolbench_run(run_args, work / f"{i}-ray1", ray)
        cluster.add_worker()
        for i, (name, run_args) in enumerate(workloads.items()):
            results[name]["ray 2"] = toolbench_run(run_args, work / f"{i}-ray2", ray)
    print(f"ray_scaling on {os.cpu_count()} cores, --concurrency {CONCURRENCY}")
    for name, runs in results.items():
        print(name)
        for kind, info in runs.items():
            print(line(kind, info))
        local, one, two = rate(runs["local"]), rate(runs["ray 1"]), rate(runs["ray 2"])
        print(
            f"  ratios: 2 nodes / local {two / local:.2f} (target 0.9), 1 node / local "
            f"{one / local:.2f}, 2 nodes / 1 node {two / one:.2f}"
        )


if __name__ == "__main__":
    main()
