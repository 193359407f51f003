"""Source rewrites applied before RestrictedPython sees a program.

RestrictedPython refuses augmented assignment to items and attributes (``d[k] += 1``,
``obj.n -= 1``) because it cannot route the in-place operator through its guards. Everyday
pandas code is full of it (``df.loc[mask, "Cost"] += 2``), so we turn each one into plain
statements the guards do check, evaluating the container and the key once, as Python does::

    <container> = df.loc
    <key> = (mask, "Cost")
    <container>[<key>] = <container>[<key>] + 2

The temporaries' names contain a dot, which no program can spell, so they never collide with
the program's own names.
"""

from __future__ import annotations

import ast
import itertools
from typing import Any


class _AugmentedTargets(ast.NodeTransformer):
    def __init__(self) -> None:
        self.counter = itertools.count()

    def _temp(self) -> str:
        return f"aug.{next(self.counter)}"

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        self.generic_visit(node)
        target = node.target
        if isinstance(target, ast.Subscript):
            holder, key = self._temp(), self._temp()
            statements: list[ast.stmt] = [
                ast.Assign([ast.Name(holder, ast.Store())], target.value),
                ast.Assign([ast.Name(key, ast.Store())], target.slice),
            ]

            def place(ctx: ast.expr_context) -> ast.expr:
                return ast.Subscript(ast.Name(holder, ast.Load()), ast.Name(key, ast.Load()), ctx)

        elif isinstance(target, ast.Attribute):
            holder = self._temp()
            attr = target.attr
            statements = [ast.Assign([ast.Name(holder, ast.Store())], target.value)]

            def place(ctx: ast.expr_context) -> ast.expr:
                return ast.Attribute(ast.Name(holder, ast.Load()), attr, ctx)

        else:
            return node
        statements.append(
            ast.Assign([place(ast.Store())], ast.BinOp(place(ast.Load()), node.op, node.value))
        )
        for statement in statements:
            ast.copy_location(statement, node)
            ast.fix_missing_locations(statement)
        return statements


def rewrite_augmented_assignments(tree: ast.Module) -> ast.Module:
    """Rewrite in place (and return) every ``x[k] op= v`` and ``x.a op= v`` in the tree."""
    return _AugmentedTargets().visit(tree)
