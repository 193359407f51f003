"""Fuzz the curl tasks' HTTP path and count uncaught exceptions (the target is 0).

Model output is hostile input, so every curl line must end as a per-sample outcome. This throws
hypothesis-generated cases at three targets, each with the executor's catch-all bypassed so that
a bug is counted rather than absorbed:

1. the curl parser (``parse_curl``/``first_curl_line``): curl lines built from real endpoints
   with hostile values, and raw garbage; anything but ``CurlError`` escaping, or an accepted
   request that httpx could not send, is a failure;
2. the open_weather service and 3. the_cat_api service, called as raw ASGI apps on a fresh
   world (as uvicorn calls them under ``toolbench serve``): structured requests with hostile
   values, and raw garbage (method, path, query bytes, header bytes, body); an exception out of
   the app or a 5xx answer is a failure.

Run: ``python benchmarks/fuzz_http.py [--cases N]`` (N defaults to 10,000 per strategy; about
two minutes). Generation is derandomised per round, so a run is reproducible. Prints the cases
and failures per target and exits 1 if any target had a failure. The pytest version
(``tests/kinds/test_http_fuzz.py``) runs the same checkers with a few hundred cases in CI.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tests.kinds.http_fuzz import (
    cat_cases,
    cat_fuzzer,
    check_parser,
    curl_lines,
    raw_cases,
    scope_of,
    weather_cases,
    weather_fuzzer,
)

BATCH = 2_000  # examples per hypothesis round; rounds continue until the target count


class Tally:
    """Cases run and failures seen for one target, with the first few failures kept."""

    def __init__(self, name: str) -> None:
        self.name, self.cases, self.failures = name, 0, 0
        self.examples: list[str] = []

    def record(self, problem: str | None, case: Any) -> None:
        self.cases += 1
        if problem is not None:
            self.failures += 1
            if len(self.examples) < 5:
                self.examples.append(f"{problem}  <- {case!r:.200}")


def drive(
    tally: Tally, strategy: st.SearchStrategy[Any], check: Callable[[Any], str | None], n: int
) -> None:
    """Feed ``check`` at least ``n`` generated cases, in derandomised rounds of ``BATCH``.

    Failures are recorded, never raised, so hypothesis neither stops nor shrinks; each round
    has its own fixed seed, so the whole run is reproducible and keeps finding new cases."""
    target = tally.cases + n
    round_ = 0
    while tally.cases < target:
        size = min(BATCH, target - tally.cases)

        @seed(round_)
        @settings(
            max_examples=size, database=None, deadline=None, phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )  # fmt: skip
        @given(strategy)
        def one(case: Any) -> None:
            tally.record(check(case), case)

        before = tally.cases
        one()
        round_ += 1
        if tally.cases == before:  # the strategy's space is exhausted
            break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases per strategy")
    n = parser.parse_args(argv).cases
    weather, cat = weather_fuzzer(), cat_fuzzer()
    Part = tuple[str, st.SearchStrategy[Any], Callable[[Any], str | None]]
    plan: list[tuple[str, list[Part]]] = [
        ("curl parser", [("lines", curl_lines, check_parser)]),
        ("open_weather", [("structured", weather_cases, lambda c: weather.check(scope_of(c))),
                          ("raw", raw_cases, weather.check)]),
        ("the_cat_api", [("structured", cat_cases, lambda c: cat.check(scope_of(c))),
                         ("raw", raw_cases, cat.check)]),
    ]  # fmt: skip
    failed = False
    total_start = time.perf_counter()
    for name, parts in plan:
        tally = Tally(name)
        start = time.perf_counter()
        split = []
        for label, strategy, check in parts:
            before = tally.cases
            drive(tally, strategy, check, n)
            split.append(f"{tally.cases - before} {label}")
        elapsed = time.perf_counter() - start
        print(
            f"fuzz {name:<13} {tally.cases:>6} cases ({' + '.join(split)})  "
            f"{tally.failures} uncaught exceptions  {elapsed:6.1f} s",
            flush=True,
        )
        for example in tally.examples:
            print(f"    {example}")
        failed |= tally.failures > 0 or tally.cases < n * len(parts)
    weather.close()
    cat.close()
    print(f"total {time.perf_counter() - total_start:.1f} s; {'FAILED' if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
