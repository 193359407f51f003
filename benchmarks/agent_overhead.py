"""What evaluating an agent costs over evaluating a model, on the same samples, in one run.

Three runs of ``toolbench run home_search --limit N`` through the real command, each its own
process, all at the same ``--concurrency``:

* ``--model oracle``: the model path (prompt, reply, the program run in the sandbox);
* ``--model agent:"python -c pass"``: an agent process that exits at once: what starting one
  process per sample, serving its world over MCP and judging it costs, with no tool call;
* ``--model agent:oracle``: the harness's oracle played by the reference agent's player over
  MCP (the Python start-up and the ``mcp`` client import of each agent process, the calls over
  loopback HTTP, each call's program re-run in the sandbox).

Printed: wall seconds per sample of each (the whole command, loading included), and the
ratios to the model path, plus each run's success rate (the oracle paths must be 1.000, the
empty agent 0.000). No target: the numbers tell a user what an agent run of N samples costs.

Then the price of the OS layer alone (``agents.contain``): ``--attempts`` attempts of an agent
that exits at once (``python -S -c pass``), one at a time, contained (bubblewrap: namespaces,
the hidden folders, prlimit) and as a plain process, in the same run: milliseconds per attempt
of each (median of the attempts) and the difference.

Run: ``python benchmarks/agent_overhead.py [--limit N] [--concurrency C] [--attempts A]``
(about a minute).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

PYTHON = sys.executable
RUNS = {
    "model oracle": "oracle",
    "agent that exits at once": f'agent:"{PYTHON}" -c pass',
    "agent:oracle": "agent:oracle",
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


def attempt_ms(contained: bool, attempts: int) -> float:
    """Median milliseconds of one attempt of an agent that exits at once."""
    import asyncio
    import statistics

    from toolbench.agents import contain
    from toolbench.agents.process import ProcessAgent
    from toolbench.core.agent import AgentBrief, ToolCall, ToolReply
    from toolbench.types import Outcome

    class Empty:
        tools: ClassVar[list[Any]] = []
        request = "nothing"

        async def call(self, name: str, arguments: dict) -> ToolReply:
            return ToolReply("no tools", is_error=True)

        async def outcome(self) -> Outcome:
            return Outcome()

        def failed(self, message: str) -> Outcome:
            return Outcome(message=message)

        async def translate(self, action: str) -> list[ToolCall]:
            return []

        gold_calls = translate

        async def close(self) -> None:
            return None

    agent = ProcessAgent("empty", [PYTHON, "-S", "-c", "pass"])
    if not contained:
        agent.containment = contain.Containment("none", reason="benchmark: plain process")
    elif not agent.containment.namespaces:
        raise SystemExit(f"agents cannot be contained here: {agent.containment.reason}")
    brief = AgentBrief("bench", "s", 0, "nothing", "v0")

    async def go() -> list[float]:
        times = []
        try:
            for _ in range(attempts):
                started = time.perf_counter()
                end = await agent.attempt(Empty(), brief)  # type: ignore[arg-type]
                times.append(time.perf_counter() - started)
                assert end.failure is None, end.failure
        finally:
            await agent.aclose()
        return times

    return statistics.median(asyncio.run(go())) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--attempts", type=int, default=40)
    args = parser.parse_args()
    contained = attempt_ms(True, args.attempts)
    plain = attempt_ms(False, args.attempts)
    print(f"one attempt of an agent that exits at once ({args.attempts} attempts, median):")
    print(f"  contained {contained:7.1f} ms   plain process {plain:7.1f} ms   "
          f"isolation costs {contained - plain:+.1f} ms per attempt")  # fmt: skip
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
