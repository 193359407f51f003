"""Getting the program out of a model's reply. Parsing only: nothing here executes anything.

Completion-mode replies are taken as they are (stripped), as the original did. Chat models wrap
code in fences and prose, so for them we take the first fenced block, or else drop leading and
trailing prose lines until what remains parses as Python.
"""

from __future__ import annotations

import ast
import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
# Above this size we do not try to parse (a hostile reply must not make extraction slow).
_MAX_PARSE_CHARS = 20_000


def extract_program(text: str) -> str:
    """The program in a reply: a fenced block if there is one, else the parseable core."""
    text = text.strip()
    match = _FENCE.search(text)
    if match:
        return match.group(2).strip()
    if len(text) > _MAX_PARSE_CHARS or _parses(text):
        return text
    lines = text.splitlines()
    for start in range(len(lines)):
        for end in range(len(lines), start, -1):
            candidate = "\n".join(lines[start:end]).strip()
            if candidate and _looks_like_code(candidate) and _parses(candidate):
                return candidate
    return text


def _parses(source: str) -> bool:
    try:
        ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _looks_like_code(source: str) -> bool:
    """Reject prose that happens to parse (e.g. a single word is a valid expression)."""
    return "(" in source or "=" in source
