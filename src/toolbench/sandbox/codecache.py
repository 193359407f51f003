"""Compiled-code caches for restricted programs, inside a worker.

RestrictedPython compilation (parse, a Python-level AST rewrite, compile) costs ~0.5 ms for a
ten-line program: more than everything else a worker does for it. Model programs are mostly
unique as wholes, but they are made of a few *line shapes* that differ only in literal values::

    API.set_location("El Paso")          API.set_location("Denver")
    API.set_num_beds(20)                 API.set_num_beds(3)

So a program whose top-level statements are one per line runs as a sequence of per-line code
objects, each taken from a template cache: the line with its simple literals (plain '...'/"..."
strings, decimal ints and floats) replaced by unique placeholders, compiled once; a new line of a
known shape gets its code by swapping the literal values into ``co_consts`` (microseconds). Any
program this cannot handle exactly (multi-line statements, backslashes, ``global``) is compiled
whole, as usual. An exact-source cache sits in front of both.

Why this is sound:

* Executing the lines one after another in one namespace is executing the program: a line that
  compiles on its own ends outside any bracket, string or block, so it is a complete top-level
  statement in the whole program too; the only module-wide compile-time rules (``__future__``
  placement, ``global``/``nonlocal``) disable line mode. If any line fails alone, the whole
  program is compiled instead, so errors are always the whole program's errors.
* RestrictedPython's checks and rewrites look at names, attributes and structure, never at
  constant values, so a template is rejected or accepted exactly as its originals are. A template
  is only used if every placeholder survives compilation as exactly one whole constant; if
  constant folding merged or dropped one, or it landed inside a comment or longer string, the
  line is not templated. A placeholder is a whole constant only if the tokenizer saw it as a
  whole literal token, so the original line, whose literals were checked to be valid tokens of
  the same kind, tokenizes identically except for those values. Comments are dropped first (a
  '#' inside a string we did not match leaves an unterminated string, so no template).
* The compiler's only value-dependent choices are constant folding (which consumes the
  placeholder, so no template) and truthiness (``if 0:`` bodies are dropped, ``while 1:`` tests
  too), so only truthy literals are replaced, by truthy placeholders; ``0``, ``0.0`` and ``""``
  stay in the shape. Number placeholders are random per template, so no other constant in a
  line can be made to coincide with one.
"""

from __future__ import annotations

import ast
import contextlib
import marshal
import os
import re
from collections import OrderedDict
from types import CodeType
from typing import Any

from RestrictedPython import compile_restricted_exec

from toolbench.sandbox.policy import describe_exception, one_line
from toolbench.sandbox.rewrite import rewrite_augmented_assignments

Codes = tuple[CodeType, ...]
Compiled = tuple[Codes | None, str | None]  # (code objects to run in order, None) or (None, error)

_MARK = "\ue000"  # private-use character; line mode is off for sources containing it
_NO_LINE_MODE = ("\\", _MARK, "__future__", "global", "nonlocal")
_LITERAL = re.compile(
    r"""(?<![\w'"])"([^"\\\n\r]*)"(?!["'\w])"""
    r"""|(?<![\w'"])'([^'\\\n\r]*)'(?!["'\w])"""
    r"""|(?<![\w.'"])((?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?)(?![\w.'"])"""
    r"""|#.*"""  # a comment (a '#' inside a string we did not match breaks the template)
)
_MARKER = re.compile(f"{_MARK}(\\d+)([if]?){_MARK}")
MAX_PRECOMPILED_BYTES = 1 << 20  # code objects sent to a program process with one answer


class _Template:
    __slots__ = ("code", "keys")

    def __init__(self, code: CodeType, keys: list[tuple[type, Any]]) -> None:
        self.code = code
        self.keys = keys  # placeholder (type, value) per literal, in source order


def _split(line: str) -> tuple[str, list[Any]]:
    """(the line's shape, its literal values in order).

    The shape has each literal replaced by a marker naming its position and kind: a string
    becomes the string ``"<mark>3<mark>"`` (already a placeholder: no line can contain the mark),
    a number becomes ``<mark>3i<mark>`` or ``<mark>3f<mark>`` (given a random value when the
    template is built).
    """
    values: list[Any] = []

    def replace(match: re.Match[str]) -> str:
        double, single, number = match.groups()
        index = len(values)
        if double is None and single is None and number is None:
            return ""  # comment
        if number is not None:
            is_float = "." in number
            value = float(number) if is_float else int(number)
            if not value:  # falsy literals stay: see the module docstring
                return match.group(0)
            values.append(value)
            return f"{_MARK}{index}{'f' if is_float else 'i'}{_MARK}"
        text = double if double is not None else single
        if not text or not text.isprintable():  # empty (falsy), tabs, control chars, surrogates
            return match.group(0)
        values.append(text)
        return f'"{_MARK}{index}{_MARK}"'

    return _LITERAL.sub(replace, line), values


def _random_bits(bits: int) -> int:
    """``secrets.randbits`` without importing ``secrets`` (and with it OpenSSL's hashlib) into
    every worker template."""
    return int.from_bytes(os.urandom((bits + 7) // 8), "big") >> (-bits % 8)


def _placeholder(kind: str, used: set[Any]) -> Any:
    while True:
        if kind == "i":
            value: Any = _random_bits(62) | (1 << 62)  # 19 digits: never a swapped literal
        else:
            value = 1.0 + _random_bits(52) / (1 << 52)  # exact; repr() round-trips
        if value not in used:
            used.add(value)
            return value


def _build(shape: str) -> _Template | None:
    """Compile a line shape with placeholders; None if it cannot serve as a template."""
    keys: list[tuple[type, Any]] = []
    used: set[Any] = set()

    def fill(match: re.Match[str]) -> str:
        if not match.group(2):  # a string marker: its text is the placeholder value
            keys.append((str, match.group(0)))
            return match.group(0)
        value = _placeholder(match.group(2), used)
        keys.append((type(value), value))
        return repr(value)

    code, _ = compile_program(_MARKER.sub(fill, shape))
    if code is None:
        return None
    seen = dict.fromkeys(keys, 0)
    _walk(code, None, seen)
    if len(seen) != len(keys) or any(count != 1 for count in seen.values()):
        return None
    return _Template(code, keys)


def _walk(value: Any, swap: dict[tuple[type, Any], Any] | None, seen: dict[Any, int]) -> Any:
    """Count placeholder constants (``seen``) or replace them (``swap``), recursively."""
    kind = type(value)
    if kind is CodeType:
        consts = tuple(_walk(item, swap, seen) for item in value.co_consts)
        return value.replace(co_consts=consts) if swap is not None else value
    if kind is tuple or kind is frozenset:
        items = [_walk(item, swap, seen) for item in value]
        return kind(items) if swap is not None else value
    if kind is str or kind is int or kind is float:
        key = (kind, value)
        if swap is not None:
            return swap.get(key, value)
        if key in seen:
            seen[key] += 1
    return value


class CodeCache:
    """Exact-source LRU in front of per-line templates in front of ``compile_program``."""

    def __init__(self, size: int = 512, templates: int = 4096, max_source: int = 20_000) -> None:
        self.size = size
        self.template_size = templates
        self.max_source = max_source  # longer programs are compiled every time, never cached
        self.exact: OrderedDict[str, Compiled] = OrderedDict()
        self.templates: OrderedDict[str, _Template | None] = OrderedDict()
        self.lines: OrderedDict[str, CodeType] = OrderedDict()  # exact lines ("API.search()")

    def get(self, source: str) -> Compiled:
        cached = self.exact.get(source)
        if cached is not None:
            self.exact.move_to_end(source)
            return cached
        if len(source) > self.max_source:
            return _whole(source)
        compiled = self._by_lines(source) or _whole(source)
        self.exact[source] = compiled
        if len(self.exact) > self.size:
            self.exact.popitem(last=False)
        return compiled

    def precompile(self, sources: list[str]) -> bytes:
        """Compile ``sources`` into this cache (a worker template, for a program process that
        will run them); the marshalled code objects of those that were not already cached,
        for ``install`` in that process (b"" if none). A program process forked from here has
        the cache as it was at the fork, plus what it was sent since: what was already cached
        it has. Sources the cache would not keep, or that fail to compile, are left to the
        program process, which compiles them itself and so gets the same errors."""
        fresh = []
        for source in dict.fromkeys(sources):
            if not isinstance(source, str) or len(source) > self.max_source:
                continue
            if source in self.exact:
                continue
            codes, _ = self.get(source)
            if codes is not None:
                fresh.append((source, codes))
        if not fresh:
            return b""
        blob = marshal.dumps(tuple(fresh))
        return blob if len(blob) <= MAX_PRECOMPILED_BYTES else b""

    def install(self, blob: bytes) -> None:
        """Program process side of ``precompile``: its code objects, into this cache. The
        blob comes from the template (trusted), never from a program."""
        for source, codes in marshal.loads(blob):
            self.exact[source] = (codes, None)
        while len(self.exact) > self.size:
            self.exact.popitem(last=False)

    def _by_lines(self, source: str) -> Compiled | None:
        if any(word in source for word in _NO_LINE_MODE):
            return None
        lines = []
        for line in source.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            if line[0] in " \t":  # a block's body: no line of it compiles alone
                return None
            lines.append(line)
        codes = []
        for line in lines:
            code = self._line(line)
            if code is None:
                return None
            codes.append(code)
        return tuple(codes), None

    def _line(self, line: str) -> CodeType | None:
        code = self.lines.get(line)
        if code is not None:
            self.lines.move_to_end(line)
            return code
        code = self._line_from_template(line)
        if code is not None:
            self.lines[line] = code
            if len(self.lines) > self.template_size:
                self.lines.popitem(last=False)
        return code

    def _line_from_template(self, line: str) -> CodeType | None:
        shape, values = _split(line)
        if shape in self.templates:
            self.templates.move_to_end(shape)
            template = self.templates[shape]
        else:
            template = _build(shape)
            self.templates[shape] = template
            if len(self.templates) > self.template_size:
                self.templates.popitem(last=False)
        if template is None:
            return None
        if not values:
            return template.code
        result: CodeType = _walk(template.code, dict(zip(template.keys, values, strict=True)), {})
        return result


def _whole(source: str) -> Compiled:
    code, error = compile_program(source)
    return ((code,), None) if code is not None else (None, error)


def compile_program(source: str) -> tuple[CodeType | None, str | None]:
    """Compile under RestrictedPython; return (code, None) or (None, one-line reason)."""
    try:
        program: str | ast.Module = source  # on a SyntaxError RestrictedPython reports it
        with contextlib.suppress(SyntaxError):
            program = rewrite_augmented_assignments(ast.parse(source, "<program>"))
        result = compile_restricted_exec(program, filename="<program>")
    except Exception as exc:  # e.g. ValueError for NUL bytes, RecursionError for deep nesting
        return None, describe_exception(exc)
    if result.errors:
        more = f" (and {len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        return None, one_line(_reword(str(result.errors[0])) + more)
    return result.code, None


def _reword(error: str) -> str:
    """RestrictedPython says 'Line 3: ...'; we say 'SyntaxError: line 3: ...' like exceptions."""
    match = re.match(
        r"Line (\w+): (?:(\w+Error): )?(.*?)(?: at statement: None)?$", error, re.DOTALL
    )
    if match is None:
        return f"SyntaxError: {error}"
    line, kind, message = match.groups()
    where = f"line {line}: " if line.isdigit() else ""
    return f"{kind or 'SyntaxError'}: {where}{message}"
