"""Fuzzing the path from model text to the run log (target: 0 uncaught exceptions).

1. Reply extraction (``toolbench.prompts.extract``): hypothesis-generated replies, from random
   text (every code point, lone surrogates and NUL included) to hostile shapes scaled up to
   ~100k characters (open brackets, "(\\n" runs, repetition loops, fences, deep nesting).
   Checked per case: no exception, the result is a stripped substring of the reply, the same
   reply gives the same result, parse attempts and parsed characters stay under the caps.
2. Record writing and reading (``toolbench.runner``): hypothesis-generated records with hostile
   values (deep and cyclic nesting, NaN/Infinity, huge ints, odd keys, lone surrogates, giant
   strings) appended through ``RunStore`` and read back: every line strict JSON under the byte
   cap, every record read back equal to the bounded record, the checksum chain verified.

Run: ``python benchmarks/fuzz_extract.py [--cases N]`` (default 10,000 per target; about a
minute). Prints the case counts, uncaught exceptions, property failures and timing; exits 1 if
any case failed.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolbench.core.bounded import MAX_RECORD_BYTES, safe_record
from toolbench.prompts import extract
from toolbench.runner.chain import CHAIN_RESERVE
from toolbench.runner.store import RunStore, load_log, read_run_info

ANY_CHAR = st.characters(codec=None, categories=None)
PIECES = [
    "(", ")", "[", "]", "{", "}", "(\n", "```", "```python\n", "\n", "\r\n", " ", "\t", "\x00",
    "\ud800", "\udfff", "\u2028", "=", "#", '"', "'", "\\", "f'{", "lambda:", "not ", "-",
    "API.search()", 'API.set_location("Austin")\n', "x = 1\n", "if x:\n", "Here is the code:\n",
    "Done.", "import os\n", "I think that ",
]  # fmt: skip
REPLIES = st.one_of(
    st.text(ANY_CHAR, max_size=400),
    st.lists(st.one_of(st.sampled_from(PIECES), st.text(ANY_CHAR, max_size=6)), max_size=120).map(
        "".join
    ),
    # One piece repeated up to 30,000 times: the shapes that made extraction slow.
    st.tuples(st.sampled_from(PIECES), st.integers(1, 30_000)).map(lambda p: p[0] * p[1]),
    st.tuples(st.text(ANY_CHAR, max_size=3), st.integers(1, 100_000)).map(lambda p: p[0] * p[1]),
)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**200), max_value=2**200)
    | st.floats()
    | st.sampled_from([math.nan, math.inf, -math.inf])
    | st.integers(4_000, 6_000).map(lambda digits: 10**digits)  # str() of it raises
    | st.text(ANY_CHAR, max_size=40)
    | st.integers(1, 300_000).map(lambda n: "\u00e9" * n)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.tuples(inner, inner)
        | st.dictionaries(
            st.one_of(st.text(ANY_CHAR, max_size=6), st.integers(), st.none(), st.floats()),
            inner,
            max_size=6,
        )
    ),
    max_leaves=60,
)


def fuzz_settings(cases: int) -> settings:
    """Exactly ``cases`` examples, no example database, no deadline (we time cases ourselves)."""
    return settings(
        max_examples=cases, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )


class Tally:
    def __init__(self, name: str) -> None:
        self.name = name
        self.cases = 0
        self.uncaught = 0
        self.failed = 0
        self.durations: list[float] = []
        self.examples: list[str] = []

    def note(self, kind: str, detail: str) -> None:
        if kind == "uncaught":
            self.uncaught += 1
        else:
            self.failed += 1
        if len(self.examples) < 5:
            self.examples.append(f"{kind}: {detail[-600:]}")

    def timed(self, seconds: float) -> None:
        self.durations.append(seconds)

    def line(self, elapsed: float) -> str:
        times = sorted(self.durations) or [0.0]
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        return (
            f"{self.name:<18} {self.cases:6d} cases  uncaught exceptions {self.uncaught}  "
            f"property failures {self.failed}  per case: mean {statistics.fmean(times) * 1e3:.2f}"
            f" ms, p99 {p99 * 1e3:.1f} ms, max {times[-1] * 1e3:.1f} ms (GC pauses included)  "
            f"total {elapsed:.1f} s"
        )


class CountingParser:
    def __init__(self) -> None:
        self.calls = self.chars = 0

    def __call__(self, source: str) -> object:
        self.calls += 1
        self.chars += len(source)
        return ast.parse(source)


def fuzz_extraction(cases: int) -> Tally:
    tally = Tally("reply extraction")
    parser = CountingParser()
    extract.parse = parser

    @fuzz_settings(cases)
    @given(REPLIES)
    def one(reply: str) -> None:
        tally.cases += 1
        parser.calls = parser.chars = 0
        start = time.perf_counter()
        try:
            result = extract.extract_program(reply)
            again = extract.extract_program(reply)
        except Exception:
            tally.note("uncaught", traceback.format_exc(limit=-3))
            return
        tally.timed((time.perf_counter() - start) / 2)
        if not isinstance(result, str) or result not in reply or result != result.strip():
            tally.note("not a stripped substring", repr(reply[:200]))
        elif again != result:
            tally.note("not deterministic", repr(reply[:200]))
        elif parser.calls > 2 * extract.MAX_PARSE_ATTEMPTS:  # two calls per case
            tally.note("too many parses", f"{parser.calls} for {reply[:100]!r}")
        elif parser.chars > 2 * extract.PARSE_BUDGET_CHARS:
            tally.note("too much parsed", f"{parser.chars} for {reply[:100]!r}")

    try:
        one()
    finally:
        extract.parse = ast.parse
    return tally


def fuzz_records(cases: int) -> Tally:
    tally = Tally("record write/read")
    folder = Path(tempfile.mkdtemp(prefix="tb-fuzz-"))
    store = RunStore(folder)
    store.write_info({"fingerprint": "fuzz", "status": "running"})
    expected: list[dict[str, Any]] = []

    @fuzz_settings(cases)
    @given(
        details=VALUES,
        metrics=st.dictionaries(st.text(max_size=5), LEAVES, max_size=4),
        message=st.text(ANY_CHAR, max_size=200),
        prediction=st.text(ANY_CHAR, max_size=200),
    )
    def one(details: Any, metrics: dict[str, Any], message: str, prediction: str) -> None:
        tally.cases += 1
        record = {"task": "fuzz", "id": str(tally.cases), "epoch": 0, "status": "scored",
                  "success": False, "metrics": metrics, "message": message,
                  "prediction": prediction, "details": {"v": details}}  # fmt: skip
        start = time.perf_counter()
        try:
            store.append(record)
            expected.append(safe_record(record, CHAIN_RESERVE))
        except Exception:
            tally.note("uncaught", traceback.format_exc(limit=-3))
        tally.timed(time.perf_counter() - start)

    one()
    store.close()
    store.write_info({"fingerprint": "fuzz", "status": "complete"})
    try:
        _check_log(folder, expected, tally)
    except Exception:
        tally.note("uncaught", traceback.format_exc(limit=-3))
    return tally


def _check_log(folder: Path, expected: list[dict[str, Any]], tally: Tally) -> None:
    for number, line in enumerate((folder / "samples.jsonl").read_bytes().splitlines(), 1):
        if len(line) > MAX_RECORD_BYTES:
            tally.note("over the byte cap", f"line {number}: {len(line)} bytes")
        try:
            json.loads(line, parse_constant=_refuse)
        except ValueError as exc:
            tally.note("not strict JSON", f"line {number}: {exc}")
    records, check = load_log(folder, read_run_info(folder))
    if not check.ok:
        tally.note("chain not verified", str(check))
    if len(records) != len(expected):
        tally.note("record count", f"{len(records)} read, {len(expected)} written")
    for got, want in zip(records, expected, strict=False):
        if got != want:
            tally.note("round trip", f"{str(got)[:150]} != {str(want)[:150]}")


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases per target")
    args = parser.parse_args()
    tallies = []
    for fuzz in (fuzz_extraction, fuzz_records):
        start = time.perf_counter()
        tally = fuzz(args.cases)
        print(tally.line(time.perf_counter() - start), flush=True)
        for example in tally.examples:
            print(f"    {example}")
        tallies.append(tally)
    total = sum(t.cases for t in tallies)
    bad = sum(t.uncaught + t.failed for t in tallies)
    uncaught = sum(t.uncaught for t in tallies)
    print(f"total {total} cases, {uncaught} uncaught exceptions, {bad} failures")
    return 1 if bad or any(t.cases < args.cases for t in tallies) else 0


if __name__ == "__main__":
    sys.exit(main())
