"""Peak memory of ``run``, resume, ``report`` and ``report --html`` as a run grows.

The home_search oracle over its 100 test samples with ``--epochs E`` gives 100 x E records
(10,000 / 100,000 / 1,000,000 for E = 100 / 1,000 / 10,000). For each size, each command runs
as its own process, and its peak resident memory is measured (``getrusage(RUSAGE_CHILDREN)``
of a small wrapper process that runs only that command: the largest process of the command,
the toolbench process itself here):

- ``run``: a fresh run to completion;
- ``resume``: another fresh run killed (SIGKILL, its whole process group) once about half its
  records are in the log, then the same command again, which resumes and completes (measured);
- ``report`` and ``report --html`` of the completed run.

Targets (issue 29): each under 1 GB at 1,000,000 records; at 100,000 records no more than 1.2x
the memory of 10,000, command by command. Before streaming (issue 29's numbers), 80,000
records took 0.76 GB to run, 1.15 GB to resume and 0.64 GB to report.

Measured 2026-11-28 on this 2-core machine (shared with other jobs; peak RSS, wall time):

    records     run              resume (killed at ~50%)   report          report --html
    10,000      74.1 MB   9.8 s  73.7 MB    2.8 s          61.0 MB   2.2 s  112.5 MB   6.6 s
    100,000     73.8 MB  79.4 s  73.8 MB   89.3 s          61.0 MB  11.7 s  112.5 MB  17.1 s
    1,000,000   78.8 MB   606 s  77.8 MB    232 s          60.8 MB    92 s  112.3 MB   153 s

100k / 10k ratios: run 0.996, resume 1.001, report 1.000, html 1.000 (target <= 1.2).
The 1M run's log is 1.14 GB; its run.json: complete, 1,000,000 done, log verified.

Run: ``python benchmarks/memory_scale.py [--epochs 100 1000 10000] [--keep DIR]``
(10k and 100k take about two minutes on 2 shared cores; 1M about 20 minutes more: its run
and its resume write 1,000,000 records each, ~1.1 GB of log apiece). Exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT_BYTES = 1_000_000_000
RATIO_LIMIT = 1.2
SAMPLES = 100  # home_search's test samples

# Runs one command and writes its exit status and the peak RSS of its processes as JSON.
WRAPPER = """
import json, resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
open(sys.argv[1], "w").write(json.dumps({"rc": rc, "peak_bytes": peak_kb * 1024}))
"""


def toolbench(*args: str) -> list[str]:
    return [sys.executable, "-m", "toolbench.cli", *args]


def measured(command: list[str], scratch: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS in bytes) of ``command``, which must exit 0."""
    out = scratch / "measure.json"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", WRAPPER, str(out), *command], check=True)
    wall = time.perf_counter() - start
    result = json.loads(out.read_text())
    if result["rc"] != 0:
        raise SystemExit(f"{' '.join(command)} exited {result['rc']}")
    return wall, int(result["peak_bytes"])


def run_command(epochs: int, out: Path, cache: Path) -> list[str]:
    return toolbench(
        "run", "home_search", "--model", "oracle", "--epochs", str(epochs), "--out", str(out),
        "--concurrency", "64", "--cache-dir", str(cache),
    )  # fmt: skip


def lines_in(path: Path) -> int:
    if not path.is_file():
        return 0
    with path.open("rb") as handle:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))


def killed_midway(command: list[str], log: Path, records: int) -> int:
    """Start ``command`` in its own process group and SIGKILL the group once about half of
    ``records`` are in ``log``; how many records were there."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        while process.poll() is None:
            if log.is_file() and log.stat().st_size > 0:
                count = lines_in(log)
                if count >= records // 2:
                    break
            time.sleep(0.5)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if process.returncode == 0:
        raise SystemExit("the run to kill finished before it was killed; use more epochs")
    return lines_in(log)


def one_size(epochs: int, root: Path) -> dict[str, dict[str, float]]:
    records = SAMPLES * epochs
    cache = root / "cache"
    scratch = root / f"e{epochs}"
    scratch.mkdir(parents=True, exist_ok=True)
    full, resumed = scratch / "run", scratch / "resumed"
    out: dict[str, dict[str, float]] = {}

    def note(what: str, wall: float, peak: int, extra: str = "") -> None:
        out[what] = {"wall_s": round(wall, 1), "peak_mb": round(peak / 1e6, 1)}
        print(f"  {records:>9,} records  {what:<8} {peak / 1e6:8.1f} MB  {wall:7.1f} s{extra}",
              flush=True)  # fmt: skip

    wall, peak = measured(run_command(epochs, full, cache), scratch)
    note("run", wall, peak, f"  ({records / wall:,.0f} records/s overall)")
    before = killed_midway(run_command(epochs, resumed, cache), resumed / "samples.jsonl", records)
    wall, peak = measured(run_command(epochs, resumed, cache), scratch)
    done = lines_in(resumed / "samples.jsonl")
    if done != records:
        raise SystemExit(f"the resumed run has {done} records, not {records}")
    note("resume", wall, peak, f"  (killed at {before:,} records, then resumed to {done:,})")
    shutil.rmtree(resumed)  # a million-record log is 1.1 GB: keep one per size
    wall, peak = measured(toolbench("report", str(full)), scratch)
    note("report", wall, peak)
    html = scratch / "report.html"
    wall, peak = measured(toolbench("report", str(full), "--html", str(html)), scratch)
    note("html", wall, peak, f"  ({html.stat().st_size / 1e6:.2f} MB page)")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--keep", type=Path, help="keep the run folders here")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="toolbench-memory-"))
    results: dict[int, dict[str, dict[str, float]]] = {}
    misses = []
    try:
        for epochs in args.epochs:
            results[SAMPLES * epochs] = one_size(epochs, root)
            if not args.keep:
                shutil.rmtree(root / f"e{epochs}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    for records, commands in results.items():
        for what, numbers in commands.items():
            if numbers["peak_mb"] * 1e6 >= LIMIT_BYTES:
                misses.append(f"{what} at {records:,} records: {numbers['peak_mb']} MB >= 1 GB")
    if 10_000 in results and 100_000 in results:
        print("100,000 / 10,000 records, peak memory ratio (target <= 1.2):")
        for what in results[10_000]:
            ratio = results[100_000][what]["peak_mb"] / results[10_000][what]["peak_mb"]
            print(f"  {what:<8} {ratio:.3f}")
            if ratio > RATIO_LIMIT:
                misses.append(f"{what}: 100k/10k ratio {ratio:.3f} > {RATIO_LIMIT}")
    print(json.dumps({str(k): v for k, v in results.items()}))
    for miss in misses:
        print(f"MISS: {miss}")
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
