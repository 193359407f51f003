"""Cost of the tabletop pictures: every run saves two PNGs per sample (initial and final table),
so drawing one must stay small next to solving the sample.

Renders the initial table of every v0 sample and a final table with towers, repeats, and prints
the median and the 90th percentile of milliseconds per picture. Exits 1 if the median misses
the target (default 15 ms; on a machine shared by other jobs pass a larger ``--target``).

Run: ``python benchmarks/tabletop_images.py [--repeat 3] [--target 15]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from toolbench.tasks.tabletop.images import render_png  # noqa: E402
from toolbench.tasks.tabletop.scenes import read_records  # noqa: E402
from toolbench.tasks.tabletop.world import Table  # noqa: E402

DATA = ROOT / "src/toolbench/tasks/tabletop/data/v0/test.jsonl"


def snapshots() -> list[tuple[dict, str]]:
    """Each sample's initial table, and the same table with every block stacked on the first."""
    out = []
    for record in read_records(DATA):
        table = Table(record["configs"])
        title = record["configs"]["instruction"]
        out.append((table.snapshot(), title))
        blocks = [n for n, k in table.kinds.items() if k == "block"]
        for name in blocks[1:]:
            table.put_first_on_second(name, blocks[0])
        out.append((table.snapshot(), title))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--target", type=float, default=15.0, help="median ms per picture")
    args = parser.parse_args()
    states = snapshots()
    render_png(*states[0])  # fonts and renderer warm-up, paid once per process
    times = []
    for _ in range(args.repeat):
        for snap, title in states:
            start = time.perf_counter()
            render_png(snap, title)
            times.append((time.perf_counter() - start) * 1000)
    median = statistics.median(times)
    p90 = statistics.quantiles(times, n=10)[-1]
    print(
        f"pictures: {len(times)}  median {median:.2f} ms  p90 {p90:.2f} ms  target {args.target} ms"
    )
    if median > args.target:
        print("MISSED the target")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
