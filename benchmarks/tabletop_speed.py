"""tabletop throughput with the oracle, nested model calls included (target >= 100 samples/s).

Every sample runs its program in the sandbox (``--no-cache``: no execution memo), and every
LMP call and generated function inside it is a host call back to the harness, which asks the
model (the oracle, answering instantly) and hands the code back to the same worker. So the
rate measures the sandbox round trips, the table and the checks; the images of each sample's
initial and final table are part of a run and are counted too (and reported apart).

Run: ``python benchmarks/tabletop_speed.py [--epochs N]``. Prints samples/s, nested calls per
sample and the image share; exits 1 if the rate misses the target. Epochs repeat samples, and
a worker compiles each distinct piece of model code once and a run draws each distinct table
once, so it also prints the rate of a single epoch on fresh workers, where nothing repeats but
the code pieces samples share.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolbench.cli import main

TARGET = 100.0


def run(*args: str) -> tuple[float, dict, Path]:
    out = Path(tempfile.mkdtemp(prefix="tb-bench-")) / "run"
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, "--out", str(out)])
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"toolbench {' '.join(args)} exited {code}")
    return elapsed, json.loads((out / "run.json").read_text()), out


def image_seconds(out: Path, n: int = 20) -> float:
    """Seconds per sample spent drawing its two images, re-measured on this run's records."""
    from toolbench.tasks.tabletop import images
    from toolbench.tasks.tabletop.world import Table

    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    from toolbench.tasks.registry import get_task

    data = get_task("tabletop").load("v0", None)
    by_id = {s.id: s for s in data.samples}
    start = time.perf_counter()
    for record in records[:n]:
        snapshot = Table(by_id[record["id"]].fields["configs"]).snapshot()
        images.render_png(snapshot, "initial")
        images.render_png(snapshot, "final")
    return (time.perf_counter() - start) / min(n, len(records))


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--sandbox-workers", type=int, default=None, help="default: one per CPU")
    args = parser.parse_args()
    n_workers = args.sandbox_workers
    workers = () if n_workers is None else ("--sandbox-workers", str(n_workers))
    run("run", "tabletop", "--model", "oracle", "--limit", "10", "--no-cache")  # warm up
    oracle = ("run", "tabletop", "--model", "oracle", "--no-cache", *workers)
    part_s, _, _ = run(*oracle, "--limit", "100")
    whole_s, first_info, _ = run(*oracle)
    first = _rate(first_info)
    steady = (sum(first_info["counts"]["tabletop"].values()) - 100) / (whole_s - part_s)
    _, info, out = run(
        "run", "tabletop", "--model", "oracle", "--no-cache",
        "--epochs", str(args.epochs), "--concurrency", str(args.concurrency), *workers,
    )  # fmt: skip
    done = sum(info["counts"]["tabletop"].values())
    rate = _rate(info)
    calls = info["model_calls"]["live"] + info["model_calls"]["cached"]
    strict = info["metrics"]["tabletop"]["success_rate_strict"]
    per_image = image_seconds(out)
    print(
        f"tabletop oracle  {done} samples ({n_workers or 'default'} workers)  "
        f"{rate:7.1f} samples/s  (target {TARGET:.0f}: "
        f"{rate / TARGET:.2f}x)  model calls {calls} ({calls / done:.2f}/sample, each a host "
        f"call from the sandbox)  strict={strict:.3f}  images {1000 * per_image:.1f} ms/sample "
        f"({100 * per_image * rate:.0f}% of the time at this rate)"
    )
    print(
        f"one epoch on fresh workers (nothing compiled or drawn yet): {first:7.1f} samples/s "
        f"with the workers' start-up, {steady:7.1f}/s without it (samples 101-300, by "
        "difference of a 100-sample and a 300-sample run)"
    )
    return 0 if rate >= TARGET else 1


def _rate(info: dict) -> float:
    return float(info["timing"]["last_session_samples_per_s"])


if __name__ == "__main__":
    raise SystemExit(main_())
