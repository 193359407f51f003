"""Worst-case inputs for every parser the harness runs on model text, and how to time them.

Each ``Parser`` names a harness-side function that reads a reply (extraction, grounding, an
action grammar, the curl lexer, the LMP source handling, the awareness classifiers) and the
hostile shapes that matter to it: one character repeated, bracket floods, one long line, many
lines, deep nesting. ``growth`` times a parser on a shape at 100 KB and at 1 MB; a linear
parser takes about 10x longer on the larger input, a quadratic one 100x. Parsers with a
documented input cap are timed with the cap lifted (``uncapped``): the cap bounds the work, and
this shows the work under it grows linearly too.

Used by the per-parser tests (``tests/**/test_*worst_case.py``) and by
``benchmarks/parser_worst_case.py``, which prints the table.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

SMALL = 100_000
LARGE = 1_000_000
#: t(1 MB) / t(100 KB) above this is worse than linear (linear is ~10, quadratic ~100).
MAX_RATIO = 25.0
#: Times under this are noise on a shared machine: below it no ratio is judged.
FLOOR_S = 0.02
#: A hang guard, not a speed target: a shape this slow at 100 KB is not timed at 1 MB.
GIVE_UP_S = 5.0

Shape = Callable[[int], str]


def fill(unit: str, n: int, prefix: str = "") -> str:
    """``prefix`` then ``unit`` repeated, cut to ``n`` characters."""
    body = unit * ((n - len(prefix)) // max(1, len(unit)) + 1)
    return (prefix + body)[:n]


def nested(opener: str, closer: str, n: int, prefix: str = "") -> str:
    """``prefix`` and ``n`` characters of brackets opened then closed (maximal nesting)."""
    half = (n - len(prefix)) // 2
    return prefix + opener * half + closer * half


def common_shapes(specials: str, prefix: str = "", line: str = "") -> dict[str, Shape]:
    """The shapes every parser gets: each special character repeated, a long line after
    ``prefix``, many copies of ``line`` (or of ``prefix`` + a special), and a nesting flood."""
    shapes: dict[str, Shape] = {}
    for char in specials:
        shapes[f"{char!r} repeated"] = functools.partial(fill, char)
    first = specials[0]
    shapes["long line"] = lambda n: fill(first, n, prefix)
    unit = line or f"{prefix}{first}\n"
    shapes["many lines"] = lambda n: fill(unit, n)
    shapes["nesting"] = lambda n: nested("([{", "}])", n // 3 * 3, prefix)
    shapes["blank lines"] = lambda n: fill(" \n", n)
    return shapes


@dataclass(frozen=True)
class Parser:
    """One harness-side parser: a call on a text, its shapes, and any cap to lift while timing
    (``(module, attribute, value)``)."""

    name: str
    call: Callable[[str], Any]
    shapes: dict[str, Shape]
    uncapped: tuple[tuple[str, str, Any], ...] = ()
    note: str = ""
    #: Shapes too slow for a unit test (still linear; the benchmark times them).
    bench_only: tuple[str, ...] = ()


@contextlib.contextmanager
def lifted(parser: Parser) -> Iterator[None]:
    """The parser's caps raised for timing, restored after."""
    saved = []
    for module_name, attribute, value in parser.uncapped:
        module = importlib.import_module(module_name)
        saved.append((module, attribute, getattr(module, attribute)))
        setattr(module, attribute, value)
    try:
        yield
    finally:
        for module, attribute, value in saved:
            setattr(module, attribute, value)


def best_time(call: Callable[[str], Any], text: str, repeats: int) -> float:
    """The fastest of ``repeats`` runs (the least disturbed by other work on the machine)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        call(text)
        best = min(best, time.perf_counter() - start)
    return best


@dataclass(frozen=True)
class Growth:
    small_s: float
    large_s: float

    @property
    def ratio(self) -> float:
        return self.large_s / self.small_s if self.small_s > 0 else float("inf")

    @property
    def linear(self) -> bool:
        """At most ``MAX_RATIO`` times slower on 10x the input, or too fast to judge."""
        return self.large_s <= max(MAX_RATIO * self.small_s, FLOOR_S)


#: Rounds a ratio over the limit is measured again before it counts: load on a shared machine
#: (the perf tier runs in parallel in CI) slows single runs, never a linear parser's best one.
RETRY_ROUNDS = 3


def growth(parser: Parser, shape: str) -> Growth:
    """Time ``parser`` on ``shape`` at 100 KB and 1 MB (caps lifted). Each size keeps its
    fastest run; while the ratio is over the limit, both sizes are timed again, interleaved,
    for up to ``RETRY_ROUNDS`` rounds. Load inflates some runs, so a true quadratic's ratio
    (~100) stays over the limit in every round, while a linear parser's ratio comes back
    under it as soon as one round runs undisturbed."""
    make = parser.shapes[shape]
    small, large = make(SMALL), make(LARGE)
    with lifted(parser):
        parser.call(small[:1000])  # warm caches and imports outside the timing
        small_s = best_time(parser.call, small, 3)
        if small_s > GIVE_UP_S:
            return Growth(small_s, float("inf"))
        result = Growth(small_s, best_time(parser.call, large, 2))
        for _ in range(RETRY_ROUNDS):
            if result.linear:
                break
            result = Growth(
                min(result.small_s, best_time(parser.call, small, 2)),
                min(result.large_s, best_time(parser.call, large, 1)),
            )
    return result


# -- the parsers -----------------------------------------------------------------------------------


def _quiet(call: Callable[[str], Any], *errors: type[BaseException]) -> Callable[[str], Any]:
    """``call`` with the refusals it is meant to raise on bad input swallowed."""

    def run(text: str) -> Any:
        try:
            return call(text)
        except errors:
            return None

    return run


def _extraction() -> list[Parser]:
    from toolbench.prompts.extract import extract_program
    from toolbench.sandbox.curl import first_curl_line

    program = common_shapes("`(\n\"'", prefix="```python\n", line="(\n")
    program["fence headers"] = lambda n: fill("```" + "x" * 70 + "\n", n)
    program["backticks, one line break"] = lambda n: fill("`", n - 1) + "\n"
    program["prose around code"] = lambda n: fill("Here is the code.\nx = f(1)\n", n)
    curl = common_shapes("c`\n ", prefix="curl ", line="curlx\n")
    curl["'curl' repeated"] = lambda n: fill("curl", n)
    curl["curl after many lines"] = lambda n: fill("\r\n", n - 30) + "curl https://a.b/ -H 'x: y'"
    return [
        Parser("reply extraction: extract_program", extract_program, program),
        Parser("reply extraction: first_curl_line", first_curl_line, curl),
    ]


def _curl_lexer() -> Parser:
    from toolbench.sandbox.curl import CurlError, parse_curl

    shapes = common_shapes("'\"\\$a-", prefix="curl https://api.x.com/")
    shapes["quoted words"] = lambda n: fill("'a b' ", n, "curl ")
    shapes["unclosed double quote"] = lambda n: fill("a", n, 'curl "')
    shapes["many options"] = lambda n: fill("-H 'a: b' ", n, "curl https://api.x.com/ ")
    shapes["many URLs"] = lambda n: fill("https://a.b/?x=1 ", n, "curl ")
    return Parser(
        "curl lexer: parse_curl",
        _quiet(lambda text: parse_curl(text, allowed_hosts=None), CurlError),
        shapes,
        uncapped=(
            ("toolbench.sandbox.curl", "MAX_LINE", 10**9),
            ("toolbench.sandbox.curl", "MAX_TOKENS", 10**9),
        ),
        note="capped at MAX_LINE=8,000 characters and 64 words; timed with the caps lifted",
    )


def _virtual_home() -> Parser:
    from toolbench.tasks import registry
    from toolbench.tasks.virtual_home.task import score_sample

    task = registry.get_task("virtual_home")
    data = task.load(task.versions()[-1], None)
    import asyncio

    asyncio.run(task.prepare(data, None))  # type: ignore[arg-type]  # no sandbox needed
    sample = data.samples[0]
    shapes = common_shapes('()";1', prefix="Agent.WalkTo")
    shapes["12 lines of 40,000 '('"] = lambda n: fill("Agent.WalkTo" + "(" * 40_000 + "\n", n)
    shapes["executable lines"] = lambda n: fill("Agent.WalkTo(kitchen)\n", n)
    shapes["numbered lines"] = lambda n: fill("1. Agent.Find(cup)\n", n)
    shapes["unclosed calls"] = lambda n: fill("Agent.Grab(", n)
    return Parser(
        "virtual_home grounding + LCS + world: score_sample",
        lambda text: score_sample(data, sample, text),
        shapes,
        note="the task refuses plans over MAX_PLAN_CHARS=100,000; score_sample itself is timed",
    )


def _web_shop() -> Parser:
    from toolbench.tasks.web_shop.actions import parse_action

    shapes = common_shapes("[]\n", prefix="search")
    shapes["'[' then one ']'"] = lambda n: fill("[", n - 1) + "]"
    shapes["actions on many lines"] = lambda n: fill("click[b]\n", n)
    return Parser("web_shop action grammar: parse_action", parse_action, shapes)


def _tabletop() -> list[Parser]:
    from toolbench.tasks.tabletop.lmp import call_sites, lmp_sources

    code = common_shapes("(\n", prefix="x = ", line="y = f(x, g(1))\n")
    code["calls"] = lambda n: fill("f(1)\n", n)
    code["attribute chain"] = lambda n: fill(".a", n, "x")
    code["unary chain"] = lambda n: fill("-", n - 1) + "1"
    code["sum chain"] = lambda n: fill("+1", n, "1")[: n - (n % 2 == 0)]
    errors = (SyntaxError, ValueError, RecursionError, MemoryError)
    split = {
        "'\\n' repeated": lambda n: "\n" * n,
        "'\\r' repeated": lambda n: "\r" * n,
        "'\\r\\n' repeated": lambda n: fill("\r\n", n),
        "one long line": lambda n: fill("objects = ['a'] ", n),
    }
    return [
        Parser(
            "tabletop callee scan: call_sites",
            _quiet(call_sites, *errors),
            code,
            note="runs in the sandbox worker; ast.parse is most of the time",
            bench_only=("calls",),
        ),
        Parser("tabletop LMP sources: lmp_sources", lambda t: lmp_sources(t, "pass"), split),
    ]


def _aware() -> list[Parser]:
    from toolbench.aware.evaluate.answers import parse_yes_no
    from toolbench.aware.evaluate.implicit import classify_reply
    from toolbench.aware.manipulate.replacement_judge import parse_verdict
    from toolbench.aware.manipulate.rewrite_parse import parse_rewrite

    apis = ["GetWeather", "search", "BookFlight"]
    implicit = common_shapes("{([\"'<?.", prefix="GetWeather")
    implicit["tool_call tags"] = lambda n: fill("<tool_call>{", n)
    implicit["API-Request heads"] = lambda n: fill("API-Request: [GetWeather(", n)
    implicit["ReAct actions"] = lambda n: fill("Action: GetWeather\nAction Input: {\n", n)
    implicit["JSON call objects"] = lambda n: fill('{"name": "GetWeather", "arguments": {', n)
    implicit["refusal sentences"] = lambda n: fill("none of the available tools fit. ", n)
    implicit["adjective runs"] = lambda n: fill("suitable ", n, "no ")
    implicit["questions"] = lambda n: fill("which city? ", n)
    yes_no = common_shapes(" *\n", prefix="answer")
    yes_no["yes and no"] = lambda n: fill("yes no ", n)
    verdict = common_shapes("\n *", prefix="verdict")
    verdict["verdict lines"] = lambda n: fill("**verdict** " + " " * 40 + "\n", n)
    rewrite = common_shapes('{"\n[', prefix='{"rewritten": "')
    rewrite["turn lines"] = lambda n: fill("Turn: " + " " * 60 + "x\n", n)
    rewrite["objects"] = lambda n: fill('{"turn": 1, "rewritten": "a"} ', n)
    return [
        Parser(
            "aware implicit classifier: classify_reply",
            lambda text: classify_reply(text, apis),
            implicit,
            uncapped=(("toolbench.aware.evaluate.implicit", "MAX_CHARS", 10**9),),
            note="reads at most MAX_CHARS=20,000 characters; timed with the cap lifted",
        ),
        Parser(
            "aware Yes/No answer: parse_yes_no",
            parse_yes_no,
            yes_no,
            uncapped=(("toolbench.aware.evaluate.answers", "MAX_CHARS", 10**9),),
            note="reads at most 4,000 characters; timed with the cap lifted",
        ),
        Parser(
            "aware judge verdict: replacement_judge.parse_verdict",
            parse_verdict,
            verdict,
            uncapped=(("toolbench.aware.manipulate.replacement_judge", "READ_CHARS", 10**9),),
            note="reads at most 4,000 characters; timed with the cap lifted",
        ),
        Parser(
            "aware rewrite reply: parse_rewrite",
            parse_rewrite,
            rewrite,
            note="reads at most MAX_REPLY_CHARS=60,000 characters (timed as called)",
        ),
    ]


@functools.cache
def parsers() -> dict[str, Parser]:
    """Every harness-side parser of model text, by name."""
    found = [*_extraction(), _curl_lexer(), _virtual_home(), _web_shop(), *_tabletop(), *_aware()]
    return {parser.name: parser for parser in found}


def assert_linear(name: str) -> None:
    """Every test shape of parser ``name`` grows at most linearly from 100 KB to 1 MB. A
    shape that already takes over ``GIVE_UP_S`` at 100 KB fails at once (no hour-long wait
    for a quadratic parser's 1 MB run)."""
    parser = parsers()[name]
    failures = []
    for shape in parser.shapes:
        if shape in parser.bench_only:
            continue
        result = growth(parser, shape)
        if not result.linear:
            failures.append(
                f"{shape}: {result.small_s:.4f} s at 100 KB, {result.large_s:.4f} s at 1 MB "
                f"(x{result.ratio:.1f}, limit x{MAX_RATIO:g})"
            )
    assert not failures, f"{name} grows worse than linearly: " + "; ".join(failures)
