"""tabletop's callee scan and LMP source handling: linear, and the same answers as before."""

from __future__ import annotations

import ast
import re

from hypothesis import given
from hypothesis import strategies as st

from tests.worst_case import assert_linear
from toolbench.tasks.tabletop.lmp import call_sites, lmp_sources


def test_call_sites_is_linear_on_worst_case_shapes() -> None:
    assert_linear("tabletop callee scan: call_sites")


def test_lmp_sources_is_linear_on_worst_case_shapes() -> None:
    assert_linear("tabletop LMP sources: lmp_sources")


def _call_sites_recursive(code: str) -> dict[str, ast.AST]:
    """The earlier recursive walk (the original's visitor order): the reference."""
    calls: dict[str, ast.AST] = {}
    assigns: dict[str, ast.AST] = {}

    def visit(node: ast.AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item)
            elif isinstance(value, ast.AST):
                visit(value)
        if type(node) is ast.Call and type(node.func) is ast.Name:
            calls[node.func.id] = node
        elif type(node) is ast.Assign:
            call = node.value
            if type(call) is ast.Call and type(call.func) is ast.Name:
                assigns[call.func.id] = node

    visit(ast.parse(code))
    return {name: assigns.get(name, node) for name, node in calls.items()}


_NAMES = st.sampled_from(["f", "g", "h", "make_line", "x"])


@st.composite
def _expressions(draw: st.DrawFn, depth: int = 3) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(["1", "x", "'a'", "pts"]))
    name = draw(_NAMES)
    args = draw(st.lists(_expressions(depth - 1), max_size=3))
    kind = draw(st.sampled_from(["call", "method", "list", "lambda"]))
    if kind == "method":
        return f"({draw(_expressions(depth - 1))}).{name}({', '.join(args)})"
    if kind == "list":
        return f"[{', '.join(args)}]"
    if kind == "lambda":
        return f"(lambda v: {name}(v, {', '.join(args) or '0'}))"
    return f"{name}({', '.join(args)})"


@st.composite
def _programs(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        target, value = draw(_NAMES), draw(_expressions())
        form = draw(st.sampled_from(["assign", "expr", "for", "def"]))
        if form == "assign":
            lines.append(f"{target} = {value}")
        elif form == "for":
            lines.append(f"for {target} in {value}:\n    {draw(_expressions())}")
        elif form == "def":
            lines.append(f"def {target}(a):\n    return {value}")
        else:
            lines.append(value)
    return "\n".join(lines)


@given(_programs())
def test_call_sites_finds_what_the_recursive_walk_found_in_its_order(code: str) -> None:
    found, expected = call_sites(code), _call_sites_recursive(code)
    assert list(found) == list(expected)
    assert all(found[name] is not None and ast.dump(found[name]) == ast.dump(expected[name])
               for name in expected)  # fmt: skip


def test_call_sites_handles_an_ast_as_deep_as_the_parser_allows() -> None:
    code = "x = " + "f(" * 190 + "1" + ")" * 190  # near ast.parse's nesting limit
    assert list(call_sites(code)) == ["f"]
    deep = "y = x" + ".a" * 900 + "\nf(y)"
    assert list(call_sites(deep)) == ["f"]


_BREAKS = re.compile(r"\r\n|\r|\n")


@given(st.text(alphabet="\r\na ", max_size=30), st.text(alphabet="\r\nb", max_size=5))
def test_lmp_sources_shifts_the_code_by_the_contexts_line_breaks(context: str, code: str) -> None:
    pieces = lmp_sources(context, code)
    if not context:
        assert pieces == (code,)
    else:
        lines = len(_BREAKS.split(context + "\n")) - 1  # the tokenizer's line breaks
        assert pieces == (context, "\n" * lines + code)
