"""Reading demonstration programs as templates: their literal values, blocks and rendering.

The baseline treats a program as text with holes: numbers, strings, lists, Date-like number
triples and URL query values are the holes, and the rest is a template to fill again. Nothing
here executes a program; it only parses text.
"""

from __future__ import annotations

import ast
import calendar
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus

from toolbench.models.reference.entities import Entity, words

_PARAM = re.compile(r"(?<=[?&])[\w.]+=([^&'\"\s#]*)")
_LITERAL = re.compile(
    r"(?P<list>\[\s*(?:(?:\"[^\"\n]*\"|'[^'\n]*')\s*,?\s*)*\])"
    r"|(?P<str>\"[^\"\n]*\"|'[^'\n]*')"
    r"|(?P<num>(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]))"
)
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)")
QUOTED = re.compile(r"(?<![A-Za-z])(?:'([^']+)'|\"([^\"]+)\")(?![A-Za-z])")
_DATE_ORDERS = ((0, 1, 2), (1, 0, 2), (2, 0, 1), (2, 1, 0), (0, 2, 1), (1, 2, 0))
EPOCH = (-1,)  # a date written as Unix seconds at midnight UTC ('start=1673308800')
_URL = re.compile(r"https?://[^?'\"\s]+")
_PARAM_LINE = re.compile(r"^\s*([\w.]+(?:,\s*[\w.]+)*):\s*\((optional|required)\)(.*)$")
DROP = "\x00"  # the rendered value of a URL parameter to leave out
_GLOSS_STOP = frozenset(["the", "a", "an", "or", "and", "of", "in", "to", "default"])


@dataclass
class Lit:
    """A literal in a block: kind 'num', 'str', 'list', 'param' or 'date' (three numbers)."""

    kind: str
    spans: list[tuple[int, int]]
    value: Any
    quote: str = '"'
    name: str = ""  # a URL query value's parameter name


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
    found = list(_PARAM.finditer(block))
    params = [(m.span(1), unquote_plus(m.group(1))) for m in found]
    lits = [
        Lit("param", [span], value, name=m.group().split("=")[0])
        for (span, value), m in zip(params, found, strict=True)
    ]
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


def statements(program: str) -> list[str]:
    """The program's non-empty lines, with the lines that continue a statement joined to it: an
    indented line (a loop's or a condition's body), a line after one ending in ':' and a line
    closing a bracket. A block is then always whole: dropping or copying it never leaves a
    header without its body or half a list behind."""
    out: list[str] = []
    for line in program.strip().splitlines():
        if not line.strip():
            continue
        continues = line[:1].isspace() or line.lstrip()[:1] in ")]}"
        if out and (continues or out[-1].rstrip().endswith((":", "(", "[", "{", ",", "\\"))):
            out[-1] += "\n" + line
        else:
            out.append(line)
    return out


def split_blocks(program: str) -> list[str]:
    """Statements, with ``x = ...`` joined to the next statement when that one uses ``x``."""
    lines = statements(program)
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


def free_names(program: str) -> set[str] | None:
    """The names a Python program reads before any of its statements binds them (what it
    expects to be given), or None when it does not parse. A statement's own bindings count
    for it (a loop's variable, a comprehension's), so ``for c in x: f(c)`` reads only x, f."""
    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError):
        return None
    bound: set[str] = set()
    free: set[str] = set()
    for stmt in tree.body:
        mine: set[str] = set()
        reads: set[str] = set()
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                (reads if isinstance(node.ctx, ast.Load) else mine).add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                mine.add(node.name)
            elif isinstance(node, ast.arg):
                mine.add(node.arg)
            elif isinstance(node, ast.alias):
                mine.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                mine.add(node.name)
        free |= reads - bound - mine
        bound |= mine
    return free


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


@dataclass(frozen=True)
class ParamDoc:
    """What an endpoint's docs say of one URL parameter: whether it may be left out, and the
    words that name each of its documented values ('metric' (degrees Celsius) -> celsius)."""

    optional: bool
    glosses: dict[str, frozenset[str]]

    def named(self, query_words: list[str]) -> str | None:
        """The documented value the query names by its gloss or itself, or None."""
        said = set(query_words)
        hits = [v for v, gloss in self.glosses.items() if gloss & said]
        return hits[0] if len(hits) == 1 else None


def url_path(text: str) -> str:
    m = _URL.search(text)
    return m.group() if m else ""


def param_docs(texts: list[str]) -> dict[str, dict[str, ParamDoc]]:
    """Per endpoint path, its documented parameters ('units: (optional) ... 'metric' (degrees
    Celsius, m/s) ...'). A gloss is the words after a quoted value up to the next comma or
    bracket, less the words that also gloss another value or another parameter's values."""
    docs: dict[str, dict[str, ParamDoc]] = {}
    for text in texts:
        path, params = url_path(text), docs.setdefault(url_path(text), {})
        for line in text.splitlines() if path else ():
            m = _PARAM_LINE.match(line)
            if m is None:
                continue
            glosses = _glosses(m.group(3))
            for name in re.split(r",\s*", m.group(1)):
                params[name] = ParamDoc(m.group(2) == "optional", glosses)
    for params in docs.values():
        seen = Counter(w for d in params.values() for w in set().union(*d.glosses.values()))
        for name, d in params.items():
            glosses = {v: frozenset(w for w in g if seen[w] == 1) for v, g in d.glosses.items()}
            params[name] = ParamDoc(d.optional, glosses)
    return docs


def _glosses(desc: str) -> dict[str, frozenset[str]]:
    """Each quoted value of a parameter description with the words naming it."""
    quoted = list(QUOTED.finditer(desc))
    raw: dict[str, set[str]] = {}
    for i, q in enumerate(quoted):
        end = quoted[i + 1].start() if i + 1 < len(quoted) else len(desc)
        gloss = re.split(r"[,;)]|\.\s", desc[q.end() : end])[0]
        value = q.group(1) or q.group(2)
        own = {value.lower()} if len(value) >= 3 and value.isalpha() else set()
        raw[value] = (set(words(gloss)) - _GLOSS_STOP) | own
    return {
        v: frozenset(g - set().union(*(o for w, o in raw.items() if w != v)))
        for v, g in raw.items()
    }


def finish_url(text: str, extra: list[tuple[str, str]]) -> str:
    """Leave out the parameters rendered as DROP and add ``extra`` (name, value) pairs to the
    first URL's query."""
    text = re.sub(r"&[\w.]+=\x00(?=[&'\"\s#]|$)", "", text)
    text = re.sub(r"\?[\w.]+=\x00(?:&|(?=['\"\s#]|$))", "?", text)
    m = _URL.search(text)
    if m is None or not extra:
        return text
    end = m.end()
    while end < len(text) and text[end] not in "'\" \t\n#":
        end += 1
    added = "".join(f"&{name}={value}" for name, value in extra)
    return text[:end] + added + text[end:]


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
    if e.kind == "date" and order == EPOCH:
        month, day, year = e.value
        return [str(calendar.timegm((year, month, day, 0, 0, 0)))]
    if e.kind == "date":
        return [str(e.value[c]) for c in order]
    if e.kind == "number":
        v = float(e.value)
        return [str(int(v)) if v.is_integer() else repr(v)]
    value = str(e.value)
    if lit.kind == "param":
        return [value.replace(" ", "+")]
    return [f"{lit.quote}{value}{lit.quote}"]


@dataclass(frozen=True)
class Mode:
    """A choice that decides a program's shape, learned from the demonstrations.

    In booking, the value given to the first call ('hotels', 'trip tickets', 'both') decides
    which other calls may and must appear; a program mixing the shapes of two values is what
    crashes. Knowing the shape per value lets the predictor write one consistent program per
    value and keep the one that explains the query best.
    """

    key: str
    demos: dict[str, tuple[int, ...]]  # value -> demonstrations that chose it
    compatible: dict[str, frozenset[str]]  # value -> block keys seen with it
    required: dict[str, frozenset[str]]  # value -> block keys in every one of its demos


def find_mode(
    demo_keys: list[list[str]], templates: dict[str, Template], slots: set[str]
) -> Mode | None:
    """The choices-only block in (nearly) every demonstration whose values best separate
    block sets, or None when no choice separates them (then there is nothing to enforce).

    A value separates when a block seen at least twice with another value never appears with
    it; each value needs two demonstrations, so one odd example does not forbid anything.
    """
    best: tuple[int, str] | None = None
    modes: dict[str, Mode] = {}
    for key in sorted(templates):
        tpl = templates[key]
        having = [d for d, keys in enumerate(demo_keys) if key in keys]
        if key in slots or len(tpl.lits) != 1 or tpl.lits[0].kind != "str":
            continue
        if len(having) < 0.9 * len(demo_keys):
            continue
        by_value: dict[str, list[int]] = {}
        for demo, value in tpl.values.get(0, []):
            by_value.setdefault(str(value), []).append(demo)
        if len(by_value) < 2 or any(len(ds) < 2 for ds in by_value.values()):
            continue
        seen = {v: Counter(k for d in ds for k in set(demo_keys[d])) for v, ds in by_value.items()}
        separating = sum(
            1
            for v in seen
            for k in set().union(*seen.values())
            if seen[v][k] == 0 and any(seen[w][k] >= 2 for w in seen if w != v)
        )
        if separating >= 2 and (best is None or separating > best[0]):
            best = (separating, key)
        modes[key] = Mode(
            key,
            {v: tuple(ds) for v, ds in by_value.items()},
            {v: frozenset(c) for v, c in seen.items()},
            {
                v: frozenset(k for k, n in c.items() if n == len(by_value[v]))
                for v, c in seen.items()
            },
        )
    return modes[best[1]] if best else None
