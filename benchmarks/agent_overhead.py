"""What evaluating an agent costs over evaluating a model, on the same samples, in one run.

Three runs of ``toolbench run home_search --limit N`` through the real command, each its own
process, all at the same ``--concurrency``:

* ``--model oracle``: the model path (prompt, reply, the program run in the sandbox);
* ``--model agent:"python -c pass"``: an agent process that exits at once: what starting one
  process per sample, serving its world over MCP and judging it costs, with no tool call;
* ``--model agent:"python -m toolbench.agents.reference --model oracle"``: the reference agent
  replaying the gold over MCP (the Python start-up and the ``mcp`` client import of each agent
  process, the calls over loopback HTTP, each call's program re-run in the sandbox).

Printed: wall seconds per sample of each (the whole command, loading included), and the
ratios to the model path, plus each run's success rate (the oracle paths must be 1.000, the
empty agent 0.000). No target: the numbers tell a user what an agent run of N samples costs.

Run: ``python benchmarks/agent_overhead.py [--limit N] [--concurrency C]`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
RUNS = {
    "model oracle": "oracle",
    "agent that exits at once": f'agent:"{PYTHON}" -c pass',
    "reference agent + oracle": f'agent:"{PYTHON}" -m toolbench.agents.reference --model oracle',
}


def timed_run(model: str, out: Path, limit: int, concurrency: int) -> tuple[float, float]:
    """(wall seconds, success rate) of one ``toolbench run`` in its own process."""
    command = [PYTHON, "-m", "toolbench.cli", "run", "home_search", "--model", model,
               "--limit", str(limit), "--concurrency", str(concurrency), "--no-cache",
               "--out", str(out)]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):  # 1: some samples failed, as the empty agent's do
        raise SystemExit(f"{model}: exit {done.returncode}\n{done.stderr[-2000:]}")
    info = json.loads((out / "run.json").read_text())
    rate = info["metrics"]["home_search"]["success_rate"]
    return seconds, float(rate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    results: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for index, (label, model) in enumerate(RUNS.items()):
            out = Path(folder) / f"run{index}"
            results[label] = timed_run(model, out, args.limit, args.concurrency)
    base = results["model oracle"][0]
    print(f"home_search, {args.limit} samples, --concurrency {args.concurrency}")
    for label, (seconds, rate) in results.items():
        print(
            f"  {label:<26} {seconds / args.limit:6.3f} s/sample  "
            f"{seconds / base:5.2f}x the model path  success {rate:.3f}"
        )


if __name__ == "__main__":
    main()
