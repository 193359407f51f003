"""Size and build time of the HTML report for 5 runs of >= 1,000 records each.

Five runs over every task's full v0 data (650 samples) with 2 epochs = 1,300 records each,
all through ``toolbench run``: oracle, baseline, and three replays of the baseline's answers
with different damage (every third swapped for the gold, every fifth emptied, every seventh
given a 3,000-character tail), so prompts, predictions and diffs are realistic. Then
``toolbench report RUN x5 --html`` and the file's size (target < 5 MB) and build time.

Run: ``python benchmarks/report_size.py [--keep DIR]`` (a few minutes on 2 cores, mostly the
runs). Exits 1 on a miss.
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

TASKS = "home_search,booking,open_weather,the_cat_api,google_sheets,virtual_home"
TARGET_BYTES = 5_000_000


def toolbench(*args: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(list(args))
    if code != 0:
        raise SystemExit(f"toolbench {' '.join(args)} exited {code}")


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]


def damaged(baseline: Path, oracle: Path, step: int, out: Path) -> Path:
    golds = {(r["task"], r["id"]): r["prediction"] for r in records(oracle)}
    lines = []
    for r in records(baseline):
        if r["epoch"]:
            continue
        key, text = (r["task"], r["id"]), r["prediction"]
        number = int(r["id"]) if str(r["id"]).isdigit() else 0
        if number % 3 == step % 3:
            text = golds[key]
        elif number % 5 == step % 5:
            text = ""
        elif number % 7 == step % 7:
            text += "\n# " + "tail " * 600
        lines.append({"task": r["task"], "id": r["id"], "prediction": text})
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return out


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="build the runs here and keep them")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="tb-report-size-"))
    root.mkdir(parents=True, exist_ok=True)
    common = ("--epochs", "2", "--concurrency", "16")
    start = time.perf_counter()
    runs = []
    for model in ("oracle", "baseline"):
        out = root / model
        if not (out / "run.json").exists():
            toolbench("run", TASKS, "--model", model, *common, "--out", str(out))
        runs.append(out)
    for step in (1, 2, 3):
        out = root / f"replay{step}"
        if not (out / "run.json").exists():
            replay = damaged(runs[1], runs[0], step, root / f"replay{step}.jsonl")
            toolbench("run", TASKS, "--model", f"replay:{replay}", *common, "--allow-missing",
                      "--out", str(out))  # fmt: skip
        runs.append(out)
    print(f"runs built in {time.perf_counter() - start:.0f} s: "
          + ", ".join(f"{r.name} {len(records(r))} records" for r in runs))  # fmt: skip
    page = root / "report.html"
    start = time.perf_counter()
    toolbench("report", *map(str, runs), "--html", str(page))
    elapsed = time.perf_counter() - start
    size = page.stat().st_size
    verdict = "PASS" if size < TARGET_BYTES else "MISS"
    print(f"report.html: {size / 1e6:.2f} MB for {len(runs)} runs (target < 5 MB: {verdict}); "
          f"built in {elapsed:.1f} s")  # fmt: skip
    return 0 if size < TARGET_BYTES else 1


if __name__ == "__main__":
    raise SystemExit(main_())
