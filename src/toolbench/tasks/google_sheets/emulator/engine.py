"""Recalculation of a spreadsheet's formulas, in dependency order, lazily and on demand.

Writes only mark what changed; the next read recalculates, and only what it needs. Formulas
whose inputs may have changed are *stale*: a change of plain values makes the formulas that
(transitively) read them stale, following the plan; anything structural (a formula written or
removed, rows inserted, a sheet renamed, ...) rebuilds the plan and makes every formula stale.
A read of one sheet evaluates the stale formulas of that sheet and the stale formulas they read,
directly or not, and nothing else (a program that inserts a column in a sheet without formulas
does not pay for every formula of the workbook). Invariant: whatever reads a stale formula is
stale too, so a fresh formula never needs anything re-evaluated. Formulas that read cells their
references do not name (OFFSET, INDIRECT) make a read evaluate everything stale. Cells on a
reference cycle get `#REF!`, as Sheets shows them. The plan is immutable and keyed by sheet ids,
so a cloned spreadsheet shares it.
"""

from __future__ import annotations

import re
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
Raw = tuple[int, int, int, str, tuple[Target, ...]]  # a formula: sheet, row, col, text, targets
_INCREMENTAL_LIMIT = 256
# Functions whose inputs are computed at run time, not named by the formula's references.
_READS_UNNAMED_CELLS = re.compile(r"\b(?:INDIRECT|OFFSET)\s*\(", re.IGNORECASE)


@dataclass(frozen=True)
class Node:
    sheet: int
    row: int
    col: int
    text: str
    targets: tuple[Target, ...]
    cyclic: bool


@dataclass(frozen=True)
class Plan:
    """Every formula in evaluation order, with what each reads (positions in ``nodes``)."""

    nodes: tuple[Node, ...]
    reads: tuple[tuple[int, ...], ...]
    by_sheet: Mapping[int, tuple[int, ...]]
    reads_unnamed: frozenset[int]  # positions of OFFSET/INDIRECT formulas


class Engine:
    def __init__(self, plan: Plan | None = None) -> None:
        self.plan = plan
        self.full = plan is None
        self.pending: set[tuple[int, int, int]] = set()
        self.stale: set[int] = set()

    def clone(self) -> Engine:
        twin = Engine(self.plan)
        twin.full, twin.pending, twin.stale = self.full, set(self.pending), set(self.stale)
        return twin

    def value_changed(self, sheet: int, row: int, col: int) -> None:
        if not self.full:
            self.pending.add((sheet, row, col))
            if len(self.pending) > _INCREMENTAL_LIMIT:
                self.invalidate()

    def invalidate(self) -> None:
        self.full, self.pending, self.stale = True, set(), set()

    @property
    def dirty(self) -> bool:
        return self.full or bool(self.pending) or bool(self.stale)

    def recalc(self, sheets: Sheets, sheet: int | None = None) -> None:
        """Bring the formulas of ``sheet`` (every sheet when None) up to date."""
        if self.full or self.plan is None:
            self.plan = _plan(sheets)
            self.stale = set(range(len(self.plan.nodes)))
        elif self.pending:
            self.stale.update(_affected(self.plan, self.pending))
        self.full, self.pending = False, set()
        if not self.stale:
            return
        needed = self.stale if sheet is None else _needed(self.plan, self.stale, sheet)
        if not needed.isdisjoint(self.plan.reads_unnamed):
            needed = self.stale
        _evaluate([self.plan.nodes[i] for i in sorted(needed)], sheets)
        self.stale -= needed


def _needed(plan: Plan, stale: set[int], sheet: int) -> set[int]:
    """The stale formulas of ``sheet`` and every stale formula they read, transitively."""
    needed: set[int] = set()
    todo = [i for i in plan.by_sheet.get(sheet, ()) if i in stale]
    while todo:
        i = todo.pop()
        if i in needed:
            continue
        needed.add(i)
        todo.extend(j for j in plan.reads[i] if j in stale and j not in needed)
    return needed


def _titles(sheets: Sheets) -> dict[str | None, int]:
    return {sheet_key(title): sid for sid, (title, _) in sheets.items()}


def _plan(sheets: Sheets) -> Plan:
    titles = _titles(sheets)
    raw: list[Raw] = []
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
    return _ordered(raw, deps)


def _ordered(raw: list[Raw], deps: list[list[int]]) -> Plan:
    """The plan: formulas in dependency order (cycles marked), reads renumbered to match."""
    order = [(i, len(c) > 1 or c[0] in deps[c[0]]) for c in _components(deps) for i in c]
    position = {raw_index: pos for pos, (raw_index, _) in enumerate(order)}
    nodes = tuple(Node(*raw[i], cyclic=cyclic) for i, cyclic in order)
    by_sheet: dict[int, list[int]] = {}
    for pos, node in enumerate(nodes):
        by_sheet.setdefault(node.sheet, []).append(pos)
    return Plan(
        nodes=nodes,
        reads=tuple(tuple(position[j] for j in deps[i]) for i, _ in order),
        by_sheet={sid: tuple(found) for sid, found in by_sheet.items()},
        reads_unnamed=frozenset(
            pos for pos, node in enumerate(nodes) if _READS_UNNAMED_CELLS.search(node.text)
        ),
    )


def _affected(plan: Plan, pending: set[tuple[int, int, int]]) -> list[int]:
    """Positions of the formulas that read a changed cell, directly or through another one."""
    changed: dict[int, list[tuple[int, int]]] = {}
    for sid, r, c in pending:
        changed.setdefault(sid, []).append((r, c))
    out = []
    for pos, node in enumerate(plan.nodes):
        if node.cyclic:
            continue
        hit = any(
            target is not None and any(rng.contains(r, c) for r, c in changed.get(target, ()))
            for target, rng in node.targets
        )
        if hit:
            out.append(pos)
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
