"""Harness benchmarks, measured through the real ``toolbench run`` path.

1. Throughput with the ``oracle`` model, sandbox on (target >= 1,000 samples/s on 2 cores);
   for google_sheets also with every gold re-executed (target >= 100 samples/s: pandas and
   formulas per program).
2. Concurrency efficiency against a local OpenAI-compatible server that answers after 200 ms:
   at --concurrency 32 the ideal is 32 / 0.2 = 160 samples/s (target >= 0.9 of it).
3. Warm-cache rerun vs cold run against that server (target >= 20x faster).

Run: ``python benchmarks/harness.py`` (about a minute). Prints one line per measurement with the
ratio to its target, measured in this run.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakeserver import FakeOpenAIServer
from toolbench.cli import main


def run(*args: str) -> tuple[float, dict]:
    out = Path(tempfile.mkdtemp(prefix="tb-bench-")) / "run"
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, "--out", str(out)])
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"toolbench {' '.join(args)} exited {code}")
    return elapsed, json.loads((out / "run.json").read_text())


def oracle_throughput() -> None:
    for task in ("home_search", "booking", "open_weather", "the_cat_api"):
        run("run", task, "--model", "oracle", "--limit", "20")  # warm imports and file caches
        # --no-cache: every sample really runs in the sandbox (no execution memo).
        _, info = run(
            "run", task, "--model", "oracle", "--epochs", "20", "--concurrency", "64", "--no-cache"
        )
        done = sum(info["counts"][task].values())
        rate = info["timing"]["last_session_samples_per_s"]
        print(
            f"oracle throughput  {task:<12} {done} samples  {rate:8.0f} samples/s  "
            f"(target 1000: {rate / 1000:.2f}x)  "
            f"success={info['metrics'][task]['success_rate']:.3f}"
        )


def virtual_home_throughput() -> None:
    """Plans are parsed and run in the in-process household (no sandbox): target 2,000/s."""
    task = "virtual_home"
    run("run", task, "--model", "oracle", "--limit", "20")
    _, info = run(
        "run", task, "--model", "oracle", "--epochs", "20", "--concurrency", "64", "--no-cache"
    )
    done = sum(info["counts"][task].values())
    rate = info["timing"]["last_session_samples_per_s"]
    print(
        f"oracle throughput  {task:<12} {done} samples  {rate:8.0f} samples/s  "
        f"(target 2000: {rate / 2000:.2f}x)  "
        f"goal_success={info['metrics'][task]['goal_success']:.3f}"
    )


def sheets_throughput() -> None:
    """google_sheets: the oracle's answers are gold verbatim, which the task accepts without
    running (as the original did), so that rate measures the harness alone; the second run
    replays every gold with a trailing comment, so each one really executes in the sandbox on a
    fresh copy of the workbook (pandas, formulas) and is compared with the gold sheet."""
    from toolbench.data.layout import read_test_jsonl
    from toolbench.tasks.registry import get_task

    task = "google_sheets"
    load_start = time.perf_counter()
    run("run", task, "--model", "oracle", "--limit", "1", "--no-cache")  # load runs every gold
    load_s = time.perf_counter() - load_start
    _, info = run("run", task, "--model", "oracle", "--epochs", "20", "--concurrency", "64")
    rate = info["timing"]["last_session_samples_per_s"]
    print(
        f"oracle throughput  {task:<12} {sum(info['counts'][task].values())} samples  "
        f"{rate:8.0f} samples/s (verbatim, not executed)  "
        f"success={info['metrics'][task]['success_rate']:.3f}; cold load incl. every gold "
        f"executed once: {load_s:.1f} s"
    )
    folder = get_task(task).package_dir / "data" / "v0"  # type: ignore[operator]
    replay = Path(tempfile.mkdtemp(prefix="tb-bench-")) / "replay.jsonl"
    with replay.open("w") as handle:
        for sample in read_test_jsonl(folder / "test.jsonl", task):
            line = {"id": sample.id, "prediction": sample.labels[0] + "\n# executed"}
            handle.write(json.dumps(line) + "\n")
    _, info = run(
        "run", task, "--model", f"replay:{replay}", "--epochs", "10", "--concurrency", "64",
        "--no-cache",
    )  # fmt: skip
    done = sum(info["counts"][task].values())
    rate = info["timing"]["last_session_samples_per_s"]
    print(
        f"executed oracle    {task:<12} {done} samples  {rate:8.0f} samples/s  "
        f"(target 100: {rate / 100:.2f}x; {rate / 37:.2f}x the 37/s of shared workers before "
        f"OS isolation)  success={info['metrics'][task]['success_rate']:.3f}"
    )


def server_runs() -> None:
    cache_dir = tempfile.mkdtemp(prefix="tb-cache-")
    os.environ["TOOLBENCH_CACHE_DIR"] = cache_dir
    with FakeOpenAIServer(delay_s=0.2, answer="API.search()", subprocess=True) as server:
        base = (
            "run", "home_search,booking", "--model", "openai:bench",
            "--base-url", server.base_url, "--concurrency", "32",
        )  # fmt: skip
        # Warm the process (SDK imports, connection pool) with requests the measured runs never
        # repeat (another seed), so the measurement is of the pipeline, not of Python's imports.
        run(*base, "--seed", "99", "--limit", "40")
        args = (*base, "--epochs", "5")
        cold_s, info = run(*args)
        n = sum(sum(c.values()) for c in info["counts"].values())
        rate = info["timing"]["last_session_samples_per_s"]
        ideal = 32 / 0.2
        print(
            f"concurrency 32     {n} samples against a 200 ms server: {rate:6.1f} samples/s, "
            f"ideal {ideal:.0f}/s -> efficiency {rate / ideal:.2f} (target 0.90); "
            f"whole command incl. setup {n / cold_s:.1f}/s"
        )
        calls = server.calls
        warm_s, warm = run(*args)
        assert server.calls == calls, "warm run must not call the server"
        print(
            f"warm cache rerun   {warm_s:6.2f} s vs cold {cold_s:6.2f} s (whole commands) -> "
            f"{cold_s / warm_s:5.1f}x faster (target 20x); live calls {warm['model_calls']['live']}"
        )


if __name__ == "__main__":
    oracle_throughput()
    virtual_home_throughput()
    sheets_throughput()
    server_runs()
