"""Recalculation of every formula of a spreadsheet, in dependency order, lazily.

Writes only mark what changed; the next read recalculates. A change of plain values re-evaluates
only the formulas that (transitively) read them, following the plan of the last full pass; anything
structural (a formula written or removed, rows inserted, a sheet renamed, ...) triggers a full pass
that rebuilds the plan. Cells on a reference cycle get `#REF!`, as Sheets shows them. The plan is
immutable and keyed by sheet ids, so a cloned spreadsheet shares it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolbench.tasks.google_sheets.emulator.a1 import GridRange
from toolbench.tasks.google_sheets.emulator.formula import empty, error, evaluate, to_input
from toolbench.tasks.google_sheets.emulator.grid import Grid
from toolbench.tasks.google_sheets.emulator.refs import sheet_key, template
from toolbench.tasks.google_sheets.emulator.values import ErrorValue, Formula

Sheets = Mapping[int, tuple[str, Grid]]  # sheet id -> (title, grid)
Target = tuple[int | None, GridRange]  # (sheet id or None when unknown, range)
_INCREMENTAL_LIMIT = 256


@dataclass(frozen=True)
class Node:
    sheet: int
    row: int
    col: int
    text: str
    targets: tuple[Target, ...]
    cyclic: bool


class Engine:
    def __init__(self, plan: tuple[Node, ...] | None = None) -> None:
        self.plan = plan
        self.full = plan is None
        self.pending: set[tuple[int, int, int]] = set()

    def clone(self) -> Engine:
        twin = Engine(self.plan)
        twin.full, twin.pending = self.full, set(self.pending)
        return twin

    def value_changed(self, sheet: int, row: int, col: int) -> None:
        if not self.full:
            self.pending.add((sheet, row, col))
            if len(self.pending) > _INCREMENTAL_LIMIT:
                self.invalidate()

    def invalidate(self) -> None:
        self.full, self.pending = True, set()

    @property
    def dirty(self) -> bool:
        return self.full or bool(self.pending)

    def recalc(self, sheets: Sheets) -> None:
        if self.full or self.plan is None:
            self.plan = _plan(sheets)
            nodes: Any = self.plan
        elif self.pending:
            nodes = _affected(self.plan, self.pending)
        else:
            return
        self.full, self.pending = False, set()
        _evaluate(nodes, sheets)


def _titles(sheets: Sheets) -> dict[str | None, int]:
    return {sheet_key(title): sid for sid, (title, _) in sheets.items()}


def _plan(sheets: Sheets) -> tuple[Node, ...]:
    titles = _titles(sheets)
    raw: list[tuple[int, int, int, str, tuple[Target, ...]]] = []
    where: dict[tuple[int, int, int], int] = {}
    by_col: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for sid, (_, grid) in sheets.items():
        for (r, c), stored in grid.cells.items():
            if isinstance(stored, Formula):
                refs = template(stored.text)[1]
                targets = tuple(
                    (sid if rng.sheet is None else titles.get(sheet_key(rng.sheet)), rng)
                    for rng in refs
                )
                where[(sid, r, c)] = len(raw)
                by_col.setdefault((sid, c), []).append((r, len(raw)))
                raw.append((sid, r, c, stored.text, targets))
    for rows in by_col.values():
        rows.sort()
    deps: list[list[int]] = []
    for _, _, _, _, targets in raw:
        found: list[int] = []
        for target, rng in targets:
            if target is None:
                continue
            if rng.is_cell:
                j = where.get((target, rng.r1 or 0, rng.c1 or 0))
                if j is not None:
                    found.append(j)
                continue
            grid = sheets[target][1]
            r1, c1, r2, c2 = rng.bounded(grid.rows, grid.cols)
            for c in range(c1, min(c2, grid.cols) + 1):
                col = by_col.get((target, c))
                if col:
                    lo, hi = bisect_left(col, (r1, -1)), bisect_right(col, (r2, len(raw)))
                    found.extend(j for _, j in col[lo:hi])
        deps.append(found)
    nodes = []
    for component in _components(deps):
        cyclic = len(component) > 1 or component[0] in deps[component[0]]
        for i in component:
            nodes.append(Node(*raw[i], cyclic=cyclic))
    return tuple(nodes)


def _affected(plan: tuple[Node, ...], pending: set[tuple[int, int, int]]) -> list[Node]:
    """The plan's nodes that read a changed cell, directly or through another affected node."""
    changed: dict[int, list[tuple[int, int]]] = {}
    for sid, r, c in pending:
        changed.setdefault(sid, []).append((r, c))
    out = []
    for node in plan:
        if node.cyclic:
            continue
        hit = any(
            target is not None and any(rng.contains(r, c) for r, c in changed.get(target, ()))
            for target, rng in node.targets
        )
        if hit:
            out.append(node)
            changed.setdefault(node.sheet, []).append((node.row, node.col))
    return out


def _evaluate(nodes: Any, sheets: Sheets) -> None:
    titles = _titles(sheets)
    areas: dict[tuple[int, int, int, int, int], Any] = {}

    def resolver(own: int) -> Any:
        def resolve(rng: GridRange) -> Any:
            sid = own if rng.sheet is None else titles.get(sheet_key(rng.sheet))
            if sid is None:
                return error("#REF!")
            grid = sheets[sid][1]
            if rng.is_cell:
                r, c = rng.r1 or 0, rng.c1 or 0
                return (
                    to_input(grid.value(r, c))
                    if r <= grid.rows and c <= grid.cols
                    else error("#REF!")
                )
            r1, c1, r2, c2 = rng.bounded(grid.rows, grid.cols)
            if r2 > grid.rows or c2 > grid.cols or r1 > r2 or c1 > c2:
                return error("#REF!")
            key = (sid, r1, c1, r2, c2)
            if key not in areas:
                areas[key] = _area(grid, r1, c1, r2, c2)
            return areas[key]

        return resolve

    for node in nodes:
        if node.cyclic:
            sheets[node.sheet][1].computed[(node.row, node.col)] = ErrorValue("#REF!")
    for node in nodes:
        if node.cyclic:
            continue
        grid = sheets[node.sheet][1]
        grid.computed[(node.row, node.col)] = evaluate(
            node.text, node.row, node.col, resolver(node.sheet)
        )


def _area(grid: Grid, r1: int, c1: int, r2: int, c2: int) -> Any:
    out = np.full((r2 - r1 + 1, c2 - c1 + 1), empty(), dtype=object)
    if (r2 - r1 + 1) * (c2 - c1 + 1) <= len(grid.cells):
        for r in range(r1, r2 + 1):
            for c in range(c1, c2 + 1):
                if (r, c) in grid.cells:
                    out[r - r1, c - c1] = to_input(grid.value(r, c))
    else:
        for r, c in grid.cells:
            if r1 <= r <= r2 and c1 <= c <= c2:
                out[r - r1, c - c1] = to_input(grid.value(r, c))
    return out


def _components(deps: list[list[int]]) -> list[list[int]]:
    """Tarjan's strongly connected components, iteratively; dependencies come out first."""
    n = len(deps)
    index: list[int | None] = [None] * n
    low, on_stack, stack, out = [0] * n, [False] * n, [], []
    counter = 0
    for root in range(n):
        if index[root] is not None:
            continue
        work = [(root, 0)]
        while work:
            v, pos = work.pop()
            if pos == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            descended = False
            children = deps[v]
            while pos < len(children):
                w = children[pos]
                pos += 1
                iw = index[w]
                if iw is None:
                    work.append((v, pos))
                    work.append((w, 0))
                    descended = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], iw)
            if descended:
                continue
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component.append(w)
                    if w == v:
                        break
                out.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out
