"""Source-level edits of Python action programs, shared by the program tasks' generators.

Every edit parses the gold with ``ast`` (the gold is our data, never executed here) and returns
new program text, or None when the edit does not apply. Equivalences that hold for any program
(quoting, keyword arguments, variables, comments, dict key order, ``x op= y``) live here; what is
equivalent only for one task's API lives in that task's generator module.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from tests.judge_validity.cases import fenced

# method name -> its positional parameter names, in order (from the simulators' signatures)
Signatures = Mapping[str, Sequence[str]]


def statements(program: str) -> list[ast.stmt]:
    return list(ast.parse(program).body)


def render(body: Sequence[ast.stmt]) -> str:
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=list(body), type_ignores=[])))


def call_name(node: ast.AST) -> str | None:
    """``API.set_num_beds(3)`` -> 'set_num_beds'; ``Loc('x')`` -> 'Loc'; else None."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    if isinstance(node.func, ast.Name):
        return node.func.id
    return None


def statement_call(stmt: ast.stmt) -> str | None:
    """The method a top-level expression statement calls (None for assignments, loops...)."""
    return call_name(stmt.value) if isinstance(stmt, ast.Expr) else None


# -- rewrites that hold for every program ------------------------------------------------------


def flip_quotes(program: str) -> str | None:
    """Plain string literals in the other quote character (token by token, so the layout and
    everything else stay byte for byte)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(program).readline))
    changed = False
    out = []
    for tok in tokens:
        text = tok.string
        if tok.type == tokenize.STRING and text[:1] in "'\"" and "\\" not in text:
            quote, other = text[0], "'" if text[0] == '"' else '"'
            if text[:3] != quote * 3 and other not in text[1:-1]:
                text = other + text[1:-1] + other
                changed = True
        out.append(tok._replace(string=text))
    return tokenize.untokenize(out) if changed else None


def with_comments(program: str) -> str:
    """A leading comment, a blank line between lines and a closing comment."""
    lines = program.splitlines()
    return "# the same request, spelled out\n\n" + "\n\n".join(lines) + "\n\n# done\n"


def reformatted(program: str) -> str | None:
    """The program as ``ast.unparse`` prints it (its own spacing and quotes)."""
    text = render(statements(program))
    return text if text != program else None


def keyword_arguments(program: str, signatures: Signatures) -> str | None:
    """Positional arguments of known calls passed by keyword instead."""
    tree = ast.parse(program)
    changed = False
    for node in ast.walk(tree):
        names = signatures.get(call_name(node) or "")
        if not names or not isinstance(node, ast.Call) or not node.args:
            continue
        if len(node.args) > len(names) or any(isinstance(a, ast.Starred) for a in node.args):
            continue
        keywords = [ast.keyword(arg=n, value=a) for n, a in zip(names, node.args, strict=False)]
        node.keywords = keywords + node.keywords
        node.args = []
        changed = True
    return render(tree.body) if changed else None


def hoisted_values(program: str) -> str | None:
    """The first literal argument of every top-level call moved into a variable defined just
    before it."""
    body: list[ast.stmt] = []
    count = 0
    for stmt in statements(program):
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call):
            for position, arg in enumerate(call.args):
                if _is_literal(arg):
                    count += 1
                    name = f"value_{count}"
                    body.append(ast.Assign(targets=[ast.Name(name, ast.Store())], value=arg))
                    call.args[position] = ast.Name(name, ast.Load())
                    break
        body.append(stmt)
    return render(body) if count else None


def _is_literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


def reversed_dict_keys(program: str) -> str | None:
    """Every dict literal with its keys in the opposite order."""
    tree = ast.parse(program)
    changed = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and len(node.keys) > 1 and None not in node.keys:
            node.keys.reverse()
            node.values.reverse()
            changed = True
    return render(tree.body) if changed else None


def expanded_augmented(program: str) -> str | None:
    """``t[k] op= v`` written as ``t[k] = t[k] op v`` (the target is a plain subscript)."""
    tree = ast.parse(program)
    changed = False
    for node in ast.walk(tree):
        for field, value in ast.iter_fields(node):
            if not isinstance(value, list):
                continue
            for position, stmt in enumerate(value):
                if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
                    load = ast.parse(ast.unparse(stmt.target), mode="eval").body
                    value[position] = ast.Assign(
                        targets=[stmt.target], value=ast.BinOp(load, stmt.op, stmt.value)
                    )
                    changed = True
            setattr(node, field, value)
    return render(tree.body) if changed else None


def augmented_operator(stmt: ast.AugAssign) -> str:
    """The source spelling of an augmented assignment's operator, e.g. '+='."""
    text = ast.unparse(stmt)
    return text[len(ast.unparse(stmt.target)) :].split()[0]


GENERIC_REWRITES: dict[str, Callable[[str], str | None]] = {
    "fenced_chat_reply": fenced,
    "quoting_style": flip_quotes,
    "comments_and_blank_lines": with_comments,
    "reformatted": reformatted,
    "variables_for_values": hoisted_values,
    "dict_key_order": reversed_dict_keys,
    "augmented_assignment_expanded": expanded_augmented,
}


# -- perturbations: one literal replaced ------------------------------------------------------


def literal_sites(program: str) -> list[tuple[int, Any, str | None, int]]:
    """Every literal of the program as (site number, value, enclosing call name, argument
    position), in source order; literals inside f-strings are left out."""
    tree = ast.parse(program)
    fstrings = [node for node in ast.walk(tree) if isinstance(node, ast.JoinedStr)]
    inside_fstring = {id(part) for node in fstrings for part in ast.walk(node)}
    sites = []
    for number, (node, call, position) in enumerate(_constants(tree)):
        if id(node) not in inside_fstring:
            sites.append((number, node.value, call, position))
    return sites


def _constants(tree: ast.AST) -> list[tuple[ast.Constant, str | None, int]]:
    """Constants with the nearest enclosing call's name and which of its arguments holds them."""
    found: list[tuple[ast.Constant, str | None, int]] = []

    def visit(node: ast.AST, call: str | None, position: int) -> None:
        if isinstance(node, ast.Constant):
            found.append((node, call, position))
            return
        if isinstance(node, ast.Call):
            visit(node.func, call, position)
            arguments = [*node.args, *(k.value for k in node.keywords)]
            for index, arg in enumerate(arguments):
                visit(arg, call_name(node), index)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, call, position)

    visit(tree, None, -1)
    return found


def replace_literal(program: str, site: int, value: Any) -> str:
    """The program with literal number ``site`` (as numbered by ``literal_sites``) replaced."""
    tree = ast.parse(program)
    node = _constants(tree)[site][0]
    node.value = value
    return render(tree.body)


def without_statement(program: str, index: int) -> str:
    body = statements(program)
    del body[index]
    return render(body)


def with_statement(program: str, index: int, line: str) -> str:
    body = statements(program)
    body[index:index] = statements(line)
    return render(body)


def bumped_number(value: Any) -> Any:
    """Another number of the same type: one more (0.5 more for halves such as 4.5 baths)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return value + 1
