"""The LMP runtime on its own (no table): prompt assembly, step labels, nested LMP calls three
levels deep, function generation with recursion, the scoping rule, and hostile host calls,
all through a real sandbox pool and the runner's recording ``generate``."""

from __future__ import annotations

import ast
import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tasks.tabletop.lmp_worlds import runtime_world
from toolbench.core.solve import Recorder, SampleState
from toolbench.models.base import ModelOutputError
from toolbench.models.reference.oracle import OracleModel
from toolbench.prompts.builder import PromptConfig
from toolbench.sandbox import HostRefused, Limits, SandboxPool
from toolbench.tasks.tabletop.lmp import find_calls, first_body, program_for
from toolbench.tasks.tabletop.session import LmpSession, split_prompt
from toolbench.types import Sample

PROMPTS = {
    "tabletop_ui": "# TOP DEMOS",
    "parse_obj_name": "# OBJ DEMOS",
    "parse_position": "# POS DEMOS",
    "parse_question": "",
    "transform_shape_pts": "",
    "fgen": "# FGEN DEMOS",
}
OBJECTS = ["red block", "blue bowl"]
CONTEXT = "objects = ['red block', 'blue bowl']"
LIMITS = Limits(wall_s=2.0, cpu_s=2.0, memory_mb=384, max_host_calls=20, max_host_depth=6)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(workers=2, limits=LIMITS) as sandbox:
        yield sandbox


def solve(
    pool: SandboxPool, answers: dict[tuple[str, str], str], instruction: str = "do it"
) -> tuple[Any, SampleState, LmpSession, list[str]]:
    """Run the sample's program with an oracle answering from ``answers`` (lmp, query)."""
    sample = Sample(id="s1", task="tabletop", query=instruction, labels=())
    state = SampleState(sample=sample, epoch=0)
    prompts: list[str] = []
    recorder = Recorder(OracleModel(), state)

    async def generate(request: Any) -> Any:
        prompts.append(request.prompt)
        return await recorder(request)

    def ideal(lmp: str, query: str, context: str) -> str | None:
        return answers.get((lmp, query))

    session = LmpSession(sample, 0, generate, PromptConfig(), PROMPTS, ideal=ideal)
    program = program_for(instruction, OBJECTS)
    result = asyncio.run(pool.arun(runtime_world, program, session))
    return result, state, session, prompts


NESTED = {
    ("tabletop_ui", "do it"): "name = parse_obj_name('the red one', f'objects = {objects}')\n"
    "record(name)",
    ("parse_obj_name", "the red one"): "pos = parse_position('left of the red one')\n"
    "ret_val = objects[0] if pos[0] < 0 else objects[1]",
    ("parse_position", "left of the red one"): "xs = parse_question('how far left')\n"
    "ret_val = np.array([-xs, 0.0])",
    ("parse_question", "how far left"): "ret_val = 0.25",
}


def test_three_levels_of_lmp_calls_with_prompts_and_steps(pool: SandboxPool) -> None:
    result, state, session, prompts = solve(pool, NESTED)
    assert result.ok, result
    assert result.state["log"] == ["red block"]
    assert [c.step for c in state.calls] == [
        "tabletop_ui",
        "parse_obj_name",
        "parse_position",
        "parse_question",
    ]
    # memo 2.2: base, (session history: empty), context, prefix + query + suffix
    assert prompts[0] == f"# TOP DEMOS\n\n{CONTEXT}\n# do it."
    assert prompts[1] == f"# OBJ DEMOS\n{CONTEXT}\n# the red one."
    assert prompts[2] == "# POS DEMOS\n# left of the red one."
    assert prompts[3] == "\n# how far left."
    assert session.top_code == NESTED[("tabletop_ui", "do it")]
    # the session LMP's names went into the shared variable scope
    assert {"name", "objects"} <= set(result.state["variable"])


def test_repeated_steps_are_numbered(pool: SandboxPool) -> None:
    answers = {
        ("tabletop_ui", "do it"): "record(parse_obj_name('a'))\nrecord(parse_obj_name('b'))",
        ("parse_obj_name", "a"): "ret_val = 'A'",
        ("parse_obj_name", "b"): "ret_val = 'B'",
    }
    result, state, _, _ = solve(pool, answers)
    assert result.ok and result.state["log"] == ["A", "B"]
    assert [c.step for c in state.calls] == ["tabletop_ui", "parse_obj_name", "parse_obj_name#2"]


FGEN = {
    ("tabletop_ui", "do it"): "pts = make_line(start=0, end=4)\nrecord(pts)\n"
    "record(fact(4))\nrecord(len([1, 2, 3]))",
    ("fgen", "pts = make_line(start=0, end=4)"): "def make_line(start, end):\n"
    "    return [scale(i) for i in range(start, end)]",
    ("fgen", "scale(i)"): "def scale(x):\n    return x * 10",
    ("fgen", "fact(4)"): "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)",
}


def test_function_generation_recursive_and_self_calling(pool: SandboxPool) -> None:
    result, state, _, prompts = solve(pool, FGEN)
    assert result.ok, result
    # len exists (a builtin): never generated; scale is generated while make_line is
    assert result.state["log"] == [[0, 10, 20, 30], 24, 3]
    assert [c.step for c in state.calls] == [
        "tabletop_ui",
        "fgen:make_line",
        "fgen:scale",
        "fgen:fact",
    ]
    assert prompts[1] == "# FGEN DEMOS\n# define function: pts = make_line(start=0, end=4)."
    assert {"make_line", "scale", "fact"} <= set(result.state["variable"])


def test_scoping_rule_comprehensions_and_generators_see_assigned_names(pool: SandboxPool) -> None:
    code = (
        "k = 3\nrecord([k * i for i in range(2)])\nrecord(sum(k for j in range(2)))\n"
        "def f():\n    return k + 1\nrecord(f())"
    )
    # The original's fgen quirk, kept: a name the code defines itself is still "missing" (the
    # check looks at the scopes only), so fgen writes one too; the code's own def shadows it.
    answers = {("tabletop_ui", "do it"): code, ("fgen", "f()"): "def f():\n    return -1"}
    result, state, _, _ = solve(pool, answers)
    assert result.ok, result
    assert result.state["log"] == [[0, 3], 6, 4]
    assert [c.step for c in state.calls] == ["tabletop_ui", "fgen:f"]


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("ret = transform_shape_pts('t', shape_pts=1)", "KeyError: 'new_shape_pts'"),
        ("parse_obj_name('x' * 5000)", "longer than 4000"),
        ("import os", "ImportError"),
        ("().__class__", "SyntaxError"),
        ("exec('1')", "SyntaxError"),
    ],
)
def test_failures_are_program_errors(pool: SandboxPool, code: str, error: str) -> None:
    answers = {("tabletop_ui", "do it"): code, ("transform_shape_pts", "t"): "y = 1"}
    result, _, _, _ = solve(pool, answers)
    assert result.kind == "error", result
    assert error in (result.error or "")


DEGENERATE_REPLIES = [
    "(\n" * 3000,  # thousands of open brackets
    "ret_val = " + "[" * 988 + "]" * 988,  # nested past the parser's limit
    "ret_val = 1e308 * 10\n" * 500,  # an overflowing float, repeated
    "ret_val = 1\x00",
    "def f():\n" + "    " * 200 + "pass",
    "record(1)\n" * 3000,  # a repetition loop
]


@pytest.mark.parametrize("reply", DEGENERATE_REPLIES)
@pytest.mark.parametrize("where", ["top", "nested"])
def test_degenerate_replies_end_one_sample_only(pool: SandboxPool, reply: str, where: str) -> None:
    """Whatever the model writes, as the sample's program or as a nested LMP's code, the
    sample ends with a result (a program error or a state), never an exception, and the worker
    serves the next sample."""
    if where == "top":
        answers = {("tabletop_ui", "do it"): reply}
    else:
        answers = {
            ("tabletop_ui", "do it"): "record(parse_obj_name('q', 'objects = []'))",
            ("parse_obj_name", "q"): reply,
        }
    result, _, _, _ = solve(pool, answers)
    assert result.kind in ("ok", "error", "output_limit"), result
    after, _, _, _ = solve(pool, {("tabletop_ui", "do it"): "record(2)"})
    assert after.ok and after.state["log"] == [2]


@pytest.mark.parametrize("code", ["x = parse_obj_name('q')", "undefined_thing()"])
def test_a_nested_model_error_reaches_the_solve_loop(pool: SandboxPool, code: str) -> None:
    """The oracle has no answer for the nested prompt: its error propagates out of the
    sandbox call (the runner makes it the sample's model_error) and the worker is replaced."""
    with pytest.raises(ModelOutputError, match="no gold label"):
        solve(pool, {("tabletop_ui", "do it"): code})
    result, _, _, _ = solve(pool, {("tabletop_ui", "do it"): "record(1)"})
    assert result.ok and result.state["log"] == [1]


# Model text holding a lone surrogate: an escape in the code makes one at run time (the code
# itself is ASCII), or the reply carries one (a replayed or served reply can). No reply holds
# its LMP's stop sequences ("#", "objects = ["): the recorder would cut the reply there.
SURROGATE_CASES = [
    ({("tabletop_ui", "do it"): "record(parse_obj_name('\\ud800', 'objs = []'))"},
     "parse_obj_name's query"),
    ({("tabletop_ui", "do it"): "record(parse_position('left', 'objs = [\\'\\udfff\\']'))"},
     "parse_position's context"),
    ({("tabletop_ui", "do it"): "x = '\ud800'"}, "tabletop_ui's reply"),
    ({("tabletop_ui", "do it"): "record(parse_obj_name('q', 'objs = []'))",
      ("parse_obj_name", "q"): "ret_val = '\udc80'"}, "parse_obj_name's reply"),
    ({("tabletop_ui", "do it"): "record(make_it(1))",
      ("fgen", "make_it(1)"): "def make_it(a):\n    return '\ud800'"},
     "the reply defining make_it"),
]  # fmt: skip


@pytest.mark.parametrize(("answers", "where"), SURROGATE_CASES)
def test_text_utf8_cannot_encode_is_the_models_error(
    pool: SandboxPool, answers: dict[tuple[str, str], str], where: str
) -> None:
    """It was a UnicodeEncodeError in the harness (the prompt's cache key), recorded as an
    internal error; now the program crashes with a message that says whose text it was, no
    prompt is built from it, and the worker serves the next sample."""
    result, _, _, prompts = solve(pool, answers)
    assert result.kind == "error", result
    assert f"{where} holds text that cannot be encoded as UTF-8" in (result.error or "")
    assert "the model wrote it" in (result.error or "")
    for prompt in prompts:  # every prompt built was encodable (raises otherwise)
        (prompt or "").encode("utf-8")
    after, _, _, _ = solve(pool, {("tabletop_ui", "do it"): "record(2)"})
    assert after.ok and after.state["log"] == [2]


def test_infinite_lmp_recursion_stops_at_the_depth_cap(pool: SandboxPool) -> None:
    answers = {
        ("tabletop_ui", "do it"): "parse_obj_name('again')",
        ("parse_obj_name", "again"): "ret_val = parse_obj_name('again')",
    }
    result, state, _, _ = solve(pool, answers)
    assert result.kind == "error" and "nested more than 6 deep" in (result.error or "")
    assert len(state.calls) == 6


def test_find_calls_order_and_assignment_form() -> None:
    code = "a = f(g(1), x=2)\nh(a)\nnp.argsort(a)\nline.interpolate(0.5)\nf(3)"
    assert find_calls(code) == {"g": "g(1)", "f": "a = f(g(1), x=2)", "h": "h(a)"}
    assert first_body("def f(x):\n    return g(x)\nother()") == "return g(x)"
    with pytest.raises(AttributeError):
        first_body("x = 1")


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        ({"lmp": "fgen", "query": "q", "context": ""}, "unknown LMP"),
        ({"lmp": "nope", "query": "q", "context": ""}, "unknown LMP"),
        ({"lmp": "parse_obj_name", "query": 3, "context": ""}, "must be a string"),
        ({"lmp": "parse_obj_name", "query": "q"}, "is {lmp, query, context}"),
        ([1, 2], "is {lmp, query, context}"),
    ],
)
def test_session_refuses_malformed_lmp_calls(payload: Any, why: str) -> None:
    session = LmpSession(Sample("s", "tabletop", "q", ()), 0, _never, PromptConfig(), PROMPTS)
    with pytest.raises(HostRefused, match=why):
        asyncio.run(session("lmp", payload))


@pytest.mark.parametrize("name", ["1abc", "a b", "x" * 65, 7, "make_line\n# define"])
def test_session_refuses_bad_function_names(name: Any) -> None:
    session = LmpSession(Sample("s", "tabletop", "q", ()), 0, _never, PromptConfig(), PROMPTS)
    with pytest.raises(HostRefused):
        asyncio.run(session("fgen", {"name": name, "signature": "f()"}))
    with pytest.raises(HostRefused, match="unknown host function"):
        asyncio.run(session("shell", {}))


async def _never(request: Any) -> Any:
    raise AssertionError("no model call may be made for a refused host call")


def test_split_prompt_reads_back_what_the_session_wrote() -> None:
    prompt = f"# TOP DEMOS\n\n{CONTEXT}\n# put the red block on the blue bowl."
    assert split_prompt("tabletop_ui", prompt, "# TOP DEMOS") == (
        "tabletop_ui",
        "put the red block on the blue bowl",
        CONTEXT,
    )
    assert split_prompt("parse_position#3", "# POS DEMOS\n# a point.", "# POS DEMOS") == (
        "parse_position",
        "a point",
        "",
    )
    fgen = "# FGEN DEMOS\n# define function: y = f(x)."
    assert split_prompt("fgen:f#2", fgen, "# FGEN DEMOS") == ("fgen", "y = f(x)", "")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(max_size=60))
def test_split_prompt_is_total(prompt: str, step: str) -> None:
    lmp, query, context = split_prompt(step, prompt, "# BASE")
    assert isinstance(lmp, str) and isinstance(query, str) and isinstance(context, str)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_find_calls_never_runs_anything_and_fails_only_as_syntax(code: str) -> None:
    try:
        calls = find_calls(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in calls.items())


def test_keyword_arguments_cannot_shadow_the_guards(pool: SandboxPool) -> None:
    """``**{'_getattr_': f}`` reaches the sub-program's scope only without its ``_`` names, so
    the sub-program's attribute reads still go through the sandbox's guard."""
    answers = {
        ("tabletop_ui", "do it"): "def mine(obj, name, *rest):\n    return 'forged'\n"
        "record(transform_shape_pts('t', shape_pts=1, **{'_getattr_': mine}))",
        ("transform_shape_pts", "t"): "new_shape_pts = np.pi",
        ("fgen", "mine(obj, name, *rest)"): "def mine(obj, name, *rest):\n    return 0",
    }
    result, _, _, _ = solve(pool, answers)
    assert result.ok, result
    assert result.state["log"] == [pytest.approx(3.141592653589793)]


class _OriginalFinder(ast.NodeVisitor):
    """The original's way of finding callees (a NodeVisitor), to compare ``call_sites`` with."""

    def __init__(self) -> None:
        self.calls: dict[str, str] = {}
        self.assigns: dict[str, str] = {}

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name):
            self.calls[node.func.id] = ast.unparse(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            self.assigns[node.value.func.id] = ast.unparse(node)


_NAMES = st.sampled_from(["f", "g", "h", "k"])
_EXPRESSIONS = st.recursive(
    st.sampled_from(["x", "1", "'s'", "np.pi"]),
    lambda inner: st.one_of(
        st.builds("{}({})".format, _NAMES, st.lists(inner, max_size=3).map(", ".join)),
        st.builds("{}(a={}, *{})".format, _NAMES, inner, inner),
        st.builds("({} if {} else {})".format, inner, inner, inner),
        st.builds("[{} for x in {}]".format, inner, inner),
        st.builds("{{{}: {}}}".format, inner, inner),
        st.builds("obj.m({})".format, inner),
    ),
    max_leaves=8,
)
_STATEMENTS = st.one_of(
    st.builds("{} = {}".format, st.sampled_from(["a", "b"]), _EXPRESSIONS),
    _EXPRESSIONS,
    st.builds("@{}\ndef q():\n    return {}".format, _EXPRESSIONS, _EXPRESSIONS),
    st.builds("for x in {}:\n    y = {}".format, _EXPRESSIONS, _EXPRESSIONS),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_STATEMENTS, max_size=5).map("\n".join))
def test_call_sites_find_what_the_original_visitor_found(code: str) -> None:
    """Same names, same order (conditional expressions and decorators put fields out of
    source order), same text, on random programs of nested calls."""
    tree = ast.parse(code)
    finder = _OriginalFinder()
    finder.visit(tree)
    expected = {name: finder.assigns.get(name, text) for name, text in finder.calls.items()}
    found = find_calls(code)
    assert list(found.items()) == list(expected.items())
