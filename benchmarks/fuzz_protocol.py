"""Fuzz the parent's reading of sandbox worker replies (the target is 0 uncaught exceptions).

A worker is hostile as far as the parent is concerned (``toolbench/sandbox/_protocol.py``), so
everything it can send must end as a ``Reply`` or a ``ProtocolError``. Two targets:

1. ``parse_result``, the parent's reader: random bytes, and replies that are almost right
   (known and unknown tags and kinds, heads of the wrong shape or types, error and output
   strings over the caps, states that are deep, huge-integer, NaN/Infinity, overflowing,
   non-UTF-8 or not JSON). Checked per case: only ``Reply``/``ProtocolError`` come out; an
   accepted reply has a known kind, strings within the caps, and a state that is strict JSON
   nested at most ``MAX_STATE_DEPTH`` deep which dumps back to JSON without error.
2. The template's judgement of what a program process wrote (``_template._judge``): the same
   payloads with and without the world-ready marker, with every exit status and timeout flag.
   Checked: it always answers with a result message (``b"R"``), never an ``internal`` one unless
   it was written before the marker, and what it forwards is bounded by the reply cap.

Run: ``python benchmarks/fuzz_protocol.py [--cases N]`` (N defaults to 10,000 per strategy; about
a minute). Generation is derandomised per round, so a run is reproducible. Exits 1 on any
failure. The pytest version (``tests/sandbox/test_protocol.py``) runs a few hundred cases.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_http import Tally, drive
from hypothesis import strategies as st

from toolbench.sandbox._protocol import (
    INTERNAL,
    KINDS,
    MAX_ERROR_CHARS,
    MAX_STATE_DEPTH,
    RESULT,
    ProtocolError,
    Reply,
    parse_result,
)
from toolbench.sandbox._template import WORLD_READY, Template, _kind_of
from toolbench.sandbox.limits import Limits

MAX_STDOUT = 1_000

# -- generated replies ---------------------------------------------------------------------

JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=8),
    st.sampled_from(["NaN", "-Infinity", "1e999", "9" * 400, "-" + "7" * 301, "1" * 300]),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=25,
)


@st.composite
def state_texts(draw: st.DrawFn) -> str:
    """A state as a worker might send it: valid JSON, raw tokens, deep or broken nesting."""
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return json.dumps(draw(JSON_VALUES), allow_nan=True)
    if choice == 1:
        depth = draw(st.integers(MAX_STATE_DEPTH - 2, 5_000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        closed = draw(st.booleans())
        return opener * depth + "1" + (closer * depth if closed else "")
    if choice == 2:
        token = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400"]))
        return f'{{"x": [{token}]}}'
    if choice == 3:
        return "[" + "9" * draw(st.integers(250, 5_000)) + "]"
    if choice == 4:
        return draw(st.text(max_size=60))
    return ""


MUTATIONS = (
    "kind", "error", "stdout", "head shape", "head text", "separator", "state on a failure",
    "truncated", "tag",
)  # fmt: skip


@st.composite
def replies(draw: st.DrawFn) -> bytes:
    """A well-formed result message (kind ``ok`` with a hostile state half the time), then
    zero to two things made wrong, so each check of the schema is reached on its own."""
    kind = draw(st.sampled_from(["ok", *sorted(KINDS), INTERNAL]))
    error: Any = None if kind == "ok" else draw(st.text(min_size=1, max_size=30))
    stdout: Any = draw(st.text(max_size=20))
    body = draw(state_texts()) if kind == "ok" else ""
    head: Any = [kind, error, stdout]
    head_text, separator, tag = None, "\n", RESULT
    wrong = draw(st.lists(st.sampled_from(MUTATIONS), max_size=2, unique=True))
    if "kind" in wrong:
        head[0] = draw(st.sampled_from(["", "OK", "escaped", 1, None, ["ok"]]))
    if "error" in wrong:
        head[1] = draw(st.sampled_from([None, "e" * (MAX_ERROR_CHARS + 1), 7, ["e"]]))
    if "stdout" in wrong:
        head[2] = draw(st.sampled_from(["o" * (MAX_STDOUT + 1), None, 3, {"o": 1}]))
    if "head shape" in wrong:
        head = draw(st.sampled_from([head[:2], [*head, 1], {"kind": kind}, kind]))
    if "head text" in wrong:
        head_text = draw(st.sampled_from(['[NaN, null, ""]', "[" * 3000, "", '["ok", null']))
    if "separator" in wrong:
        separator = draw(st.sampled_from(["", "\r\n", " "]))
    if "state on a failure" in wrong:
        body = draw(state_texts())
    if "tag" in wrong:
        tag = draw(st.sampled_from([b"r", b"l", b"E", b"P", b""]))
    message = ((head_text or json.dumps(head)) + separator + body).encode("utf-8", "surrogatepass")
    if "truncated" in wrong:
        message = message[: draw(st.integers(0, len(message)))] + b"\xff\xfe"
    return tag + message


PAYLOADS = st.one_of(replies(), st.binary(max_size=400).map(lambda data: RESULT + data))

# -- checks ---------------------------------------------------------------------------------


def _nesting(value: Any) -> int:
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth + 1)
            stack.extend(
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def check_reader(message: bytes) -> str | None:
    try:
        reply = parse_result(message, MAX_STDOUT)
    except ProtocolError as exc:
        return None if str(exc) else "ProtocolError without a message"
    except Exception as exc:  # the finding: anything else escaping the reader
        return f"uncaught {type(exc).__name__}: {exc}"[:200]
    if not isinstance(reply, Reply):
        return f"returned {type(reply).__name__}"
    if reply.kind not in KINDS and reply.kind != INTERNAL:
        return f"accepted kind {reply.kind!r}"
    if len(reply.stdout) > MAX_STDOUT or (reply.error and len(reply.error) > MAX_ERROR_CHARS):
        return "accepted a string over its cap"
    try:
        json.dumps(reply.state, allow_nan=False)
    except (ValueError, TypeError, RecursionError) as exc:
        return f"accepted a state that is not strict JSON ({type(exc).__name__})"
    if _nesting(reply.state) > MAX_STATE_DEPTH:
        return "accepted a state nested too deeply"
    return None


class _Judge:
    """The template's judgement without a template process (no fork, no connection)."""

    def __init__(self) -> None:
        self.template = Template.__new__(Template)
        self.template.limits = Limits()
        self.template.max_reply = 4_096

    def __call__(self, case: tuple[bytes, bool, bool, int, bool]) -> str | None:
        payload, marked, timed_out, status, truncate = case
        data = (WORLD_READY if marked else b"") + payload
        if truncate:
            data = data[: self.template.max_reply + 1]
        try:
            verdict = self.template._judge(data, timed_out, status)
        except Exception as exc:
            return f"uncaught {type(exc).__name__}: {exc}"[:200]
        if not verdict.startswith(RESULT):
            return f"answered with tag {verdict[:1]!r}"
        if len(verdict) > self.template.max_reply:
            return "forwarded a reply over the cap"
        if marked and _kind_of(verdict) == INTERNAL:
            return "trusted an 'internal' reply written after program code could run"
        return None


JUDGE_CASES = st.tuples(
    PAYLOADS,
    st.booleans(),
    st.booleans(),
    st.sampled_from([0, 256, 9, 11, 15, 6 << 8, 0x7F]),
    st.booleans(),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases per strategy")
    n = parser.parse_args(argv).cases
    Check = Callable[[Any], str | None]
    plan: list[tuple[str, st.SearchStrategy[Any], Check]] = [
        ("reply reader", PAYLOADS, check_reader),
        ("template judge", JUDGE_CASES, _Judge()),
    ]
    failed = False
    total_start = time.perf_counter()
    for name, strategy, check in plan:
        tally = Tally(name)
        start = time.perf_counter()
        drive(tally, strategy, check, n)
        print(
            f"fuzz {name:<15} {tally.cases:>6} cases  {tally.failures} failures  "
            f"{time.perf_counter() - start:6.1f} s",
            flush=True,
        )
        for example in tally.examples:
            print(f"    {example}")
        failed |= tally.failures > 0 or tally.cases < n
    print(f"total {time.perf_counter() - total_start:.1f} s; {'FAILED' if failed else 'ok'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
