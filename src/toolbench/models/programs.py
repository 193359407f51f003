"""Reading demonstration programs as templates: their literal values, blocks and rendering.

The baseline treats a program as text with holes: numbers, strings, lists, Date-like number
triples and URL query values are the holes, and the rest is a template to fill again. Nothing
here executes a program; it only parses text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus

from toolbench.models.entities import Entity

_PARAM = re.compile(r"(?<=[?&])[\w.]+=([^&'\"\s#]*)")
_LITERAL = re.compile(
    r"(?P<list>\[\s*(?:(?:\"[^\"\n]*\"|'[^'\n]*')\s*,?\s*)*\])"
    r"|(?P<str>\"[^\"\n]*\"|'[^'\n]*')"
    r"|(?P<num>(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]))"
)
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)")
QUOTED = re.compile(r"(?<![A-Za-z])(?:'([^']+)'|\"([^\"]+)\")(?![A-Za-z])")
_DATE_ORDERS = ((0, 1, 2), (1, 0, 2), (2, 0, 1), (2, 1, 0), (0, 2, 1), (1, 2, 0))


@dataclass
class Lit:
    """A literal in a block: kind 'num', 'str', 'list', 'param' or 'date' (three numbers)."""

    kind: str
    spans: list[tuple[int, int]]
    value: Any
    quote: str = '"'


@dataclass
class Template:
    """A block with its literals masked, as first seen, plus what the demonstrations put in."""

    key: str
    text: str
    lits: list[Lit]
    functions: tuple[str, ...]
    positions: list[float] = field(default_factory=list)
    values: dict[int, list[tuple[int, Any]]] = field(default_factory=dict)  # p -> (demo, value)


def parse_literals(block: str) -> list[Lit]:
    """The literals of a block, with three integers in a row in one call merged into a date."""
    params = [(m.span(1), unquote_plus(m.group(1))) for m in _PARAM.finditer(block)]
    lits = [Lit("param", [span], value) for span, value in params]
    for m in _LITERAL.finditer(block):
        if any(m.start() <= span[0] < m.end() for span, _ in params):
            continue  # a URL: the values of its query parameters are the literals
        if m.group("list"):
            items = [a or b for a, b in re.findall(r"\"([^\"]*)\"|'([^']*)'", m.group())]
            lits.append(Lit("list", [m.span()], items, (re.findall(r"[\"']", m.group()) or '"')[0]))
        elif m.group("str"):
            lits.append(Lit("str", [m.span()], m.group()[1:-1], m.group()[0]))
        else:
            lits.append(Lit("num", [m.span()], float(m.group())))
    merged: list[Lit] = []
    for lit in sorted(lits, key=lambda x: x.spans[0]):
        a, b = merged[-2:] if len(merged) >= 2 else (None, None)
        if (
            a is not None
            and b is not None
            and lit.kind == a.kind == b.kind == "num"
            and re.fullmatch(r"\s*,\s*", block[a.spans[0][1] : b.spans[0][0]])
            and re.fullmatch(r"\s*,\s*", block[b.spans[0][1] : lit.spans[0][0]])
        ):
            merged[-2:] = [
                Lit("date", a.spans + b.spans + lit.spans, (a.value, b.value, lit.value))
            ]
        else:
            merged.append(lit)
    return merged


def split_blocks(program: str) -> list[str]:
    """Lines, with ``x = ...`` joined to the next line when that line uses ``x``."""
    lines = [line for line in program.strip().splitlines() if line.strip()]
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        m = _ASSIGN.match(lines[i])
        if m and i + 1 < len(lines) and re.search(rf"\b{m.group(1)}\b", lines[i + 1]):
            blocks.append(lines[i] + "\n" + lines[i + 1])
            i += 2
        else:
            blocks.append(lines[i])
            i += 1
    return blocks


def template_key(block: str, lits: list[Lit]) -> str:
    marks = {"num": "<N>", "str": "<S>", "list": "<L>", "param": "<P>", "date": "<D>"}
    out, pos = [], 0
    for lit in lits:
        out += [block[pos : lit.spans[0][0]], marks[lit.kind]]
        pos = lit.spans[-1][1]
    return "".join([*out, block[pos:]])


def as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def date_order(lit: tuple[float, ...], date: tuple[int, int, int]) -> tuple[int, ...] | None:
    """Which date component (0 month, 1 day, 2 year) fills each of the three literals."""
    for order in _DATE_ORDERS:
        if all(abs(lit[i] - date[c]) < 1e-9 for i, c in enumerate(order)):
            return order
    return None


def render(block: str, lits: list[Lit], raws: dict[int, list[str]]) -> str:
    """``block`` with literal p replaced by ``raws[p]`` (one text per span of the literal)."""
    edits = [
        (s, r)
        for p, lit in enumerate(lits)
        if p in raws
        for s, r in zip(lit.spans, raws[p], strict=True)
    ]
    for (start, end), raw in sorted(edits, reverse=True):
        block = block[:start] + raw + block[end:]
    return block


def entity_raw(lit: Lit, e: Entity, order: tuple[int, ...]) -> list[str]:
    """How a query value is written in place of literal ``lit``."""
    if e.kind == "date":
        return [str(e.value[c]) for c in order]
    if e.kind == "number":
        v = float(e.value)
        return [str(int(v)) if v.is_integer() else repr(v)]
    value = str(e.value)
    if lit.kind == "param":
        return [value.replace(" ", "+")]
    return [f"{lit.quote}{value}{lit.quote}"]
