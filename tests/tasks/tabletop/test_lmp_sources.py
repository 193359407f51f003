"""An LMP's code runs as its context and then its (shifted) code, which must be exactly what
the original's ``exec(context + "\\n" + code)`` did: same values, same errors, same line
numbers, whatever the model wrote in either piece (the whole is run when a piece cannot be).
"""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.sandbox import host, policy
from toolbench.sandbox.codecache import CodeCache, compile_program
from toolbench.sandbox.limits import Limits
from toolbench.tasks.tabletop.lmp import lmp_sources, run_lmp_code


@pytest.fixture(autouse=True)
def channel() -> Iterator[None]:
    """A program process's channel without a template: compiling and running only."""
    host.bind(-1, -1, Limits(), SimpleNamespace(expired=None), CodeCache())
    host.enter_program(
        policy.make_globals({}, frozenset(), policy.OutputBuffer(10_000), frozenset())
    )
    yield
    host._channel = None


def _outcome(run: Any) -> tuple[str, Any]:
    scope = host.scope_for({})
    try:
        run(scope)
    except Exception as exc:  # the program's errors, as its record would show them
        return type(exc).__name__, policy.describe_exception(exc)
    return "ok", {k: v for k, v in scope.items() if not k.startswith("_") and k != "f"}


def _same_as_the_original(context: str, code: str) -> None:
    split = _outcome(lambda scope: run_lmp_code(context, code, scope))
    whole = _outcome(lambda scope: host.execute(f"{context}\n{code}" if context else code, scope))
    assert split == whole


CASES = [
    ("objects = ['red block', 'blue bowl']", "ret_val = [o for o in objects if 'block' in o]"),
    ("objects = ['a']", "x = 1\nret_val = ("),  # the code's syntax error, on line 3
    ("objects = ['a']", "x = 1\nret_val = 1 / 0"),  # a runtime error on line 3
    ("objects = [", "'a']\nret_val = objects"),  # neither piece compiles alone
    ("if True:\n    x = 1", "    y = 2\nret_val = x + y"),  # the code continues the block
    ("x = 1\r", "ret_val = x"),  # a carriage return ends a line for Python too
    ("x = 1\ry = 2\r", "ret_val = ("),  # ... so the syntax error is on line 4
    ("x = 1\r\n\r\n", "ret_val = x\nret_val = undefined"),
    ("a = 1 \\", "+ 2\nret_val = a"),  # a line continuation across the pieces
    ("x = '''open", "'''\nret_val = x"),  # a string across the pieces
    ("", "ret_val = 3"),
    ("# only a comment", "ret_val = 4"),
    ("x = 5", "def f():\n    return missing\nret_val = f()"),
    ("x = ().__class__", "ret_val = 1"),  # the context is refused by the policy
    ("x = 1", "ret_val = ().__class__"),
]


@pytest.mark.parametrize(("context", "code"), CASES)
def test_split_run_is_the_original_run(context: str, code: str) -> None:
    _same_as_the_original(context, code)


def test_pieces_keep_the_codes_line_numbers() -> None:
    assert lmp_sources("", "a = 1") == ("a = 1",)
    assert lmp_sources("objects = []", "a = 1") == ("objects = []", "\na = 1")
    assert lmp_sources("x = 1\r\ny = 2\n", "a = 1") == ("x = 1\r\ny = 2\n", "\n\n\na = 1")
    assert lmp_sources("x = 1\ry = 2\r", "a") == ("x = 1\ry = 2\r", "\n\na")  # "\r" + "\n": one


_LINES = st.sampled_from(
    ["x = 1", "y = x + 1", "if x:", "    z = 2", "for i in [1]:", "  w = i", "ret_val = (",
     ")", "ret_val = y", "'''", "# note", "a = 1 \\", "del q", "", "ret_val = 1 / 0"]
)  # fmt: skip
_BREAKS = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_LINES, _BREAKS), max_size=4).map(lambda ls: "".join(a + b for a, b in ls)),
    st.lists(_LINES, max_size=5).map("\n".join),
)
def test_split_run_is_the_original_run_on_random_pieces(context: str, code: str) -> None:
    _same_as_the_original(context, code)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_LINES, _BREAKS), max_size=4).map(lambda ls: "".join(a + b for a, b in ls))
)
def test_the_code_starts_on_the_line_it_had_in_the_whole(context: str) -> None:
    """Where the code's first line lands: a syntax error there is reported on the same line
    in the shifted piece as in the original's whole program."""
    code = "ret_val = ("
    whole = compile_program(f"{context}\n{code}" if context else code)[1] or ""
    shifted = compile_program(lmp_sources(context, code)[-1])[1] or ""
    if "was never closed" in whole:  # the context did not swallow the code's line
        assert shifted.split(":")[1] == whole.split(":")[1]
