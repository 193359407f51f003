"""web_shop speed: oracle episodes per second and search latency.

1. Oracle episodes through the real ``toolbench run`` path (every turn a recorded model call,
   the prompt with retrieved demonstrations, the store step, the run log): target >= 200
   episodes/s (about 1,000 store steps/s). The rate is the runner's own samples/s of the
   session (``run.json`` timing: loading the shop is not in it); the store alone (expert
   policy driving sessions, no runner) is printed too.
2. Search latency over the catalogue: bm25s over 1,000+ products, distinct queries (goal
   instructions, the memo bypassed): target <= 2 ms per query (mean; the 95th percentile is
   printed).

Run: ``python benchmarks/web_shop_speed.py`` (about 20 s). Exits 1 when a target is missed.
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolbench.cli import main
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.world import Store

EPISODES_TARGET = 200.0
SEARCH_TARGET_MS = 2.0


def oracle_through_the_runner(version: str) -> tuple[float, int, int]:
    """(episodes/s, episodes, model calls) of one ``toolbench run web_shop --model oracle``."""
    with tempfile.TemporaryDirectory(prefix="tb-webshop-") as tmp:
        out = Path(tmp) / "run"
        args = ["run", "web_shop", "--model", "oracle", "--version", version, "--out", str(out),
                "--cache-dir", str(Path(tmp) / "cache")]  # fmt: skip
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(args)
        if code != 0:
            raise SystemExit(f"toolbench {' '.join(args)} exited {code}")
        info = json.loads((out / "run.json").read_text())
    done = sum(info["counts"]["web_shop"].values())
    calls = int(info["model_calls"]["live"]) + int(info["model_calls"]["cached"])
    return float(info["timing"]["last_session_samples_per_s"]), done, calls


def store_alone(store: Store, n: int) -> tuple[float, float]:
    """(episodes/s, steps/s) with the expert driving sessions directly."""
    steps = 0
    started = time.perf_counter()
    for goal_id in range(n):
        session = store.new_session(goal_id)
        while not session.done:
            session.step(ideal_action(session))
            _ = session.observation
        steps += session.steps
    elapsed = time.perf_counter() - started
    return n / elapsed, steps / elapsed


def search_latency(store: Store, n: int) -> tuple[float, float]:
    """(mean ms, p95 ms) of the index's search on distinct goal instructions."""
    queries = list(dict.fromkeys(goal.instruction_text for goal in store.goals))[:n]
    times = []
    for query in queries:
        started = time.perf_counter()
        store.index.search(query)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.fmean(times), statistics.quantiles(times, n=20)[-1]


def main_() -> int:
    started = time.perf_counter()
    store = Store.load()
    print(f"store load (catalogue, goals, index): {time.perf_counter() - started:.2f} s, "
          f"{len(store.products)} products, {len(store.goals)} goals")  # fmt: skip
    missed = False
    for version in ("v0", "v1"):
        rate, done, calls = oracle_through_the_runner(version)
        ok = rate >= EPISODES_TARGET
        missed |= not ok
        print(f"oracle through toolbench run ({version}): {rate:,.0f} episodes/s "
              f"({done} episodes, {calls} model calls, {rate * calls / done:,.0f} steps/s); "
              f"target >= {EPISODES_TARGET:.0f}: {'PASS' if ok else 'MISS'}")  # fmt: skip
    episodes, steps = store_alone(store, 1000)
    print(f"store alone (expert policy, v0 text rendered each step): {episodes:,.0f} episodes/s, "
          f"{steps:,.0f} steps/s")  # fmt: skip
    mean_ms, p95_ms = search_latency(store, 2000)
    ok = mean_ms <= SEARCH_TARGET_MS
    missed |= not ok
    print(f"search latency: mean {mean_ms:.3f} ms, p95 {p95_ms:.3f} ms per query; "
          f"target <= {SEARCH_TARGET_MS} ms: {'PASS' if ok else 'MISS'}")  # fmt: skip
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main_())
