"""The demonstration file format: one query and its gold program per file.

    Task: <the user's request, one line>
    Action:
    <program, one or more lines>

The original ToolBench files use the same shape (some write ``Actions:``); both are read.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*Task:\s*(?P<query>.*?)\s*\n\s*Actions?:\s*\n", re.DOTALL)


def format_example(query: str, program: str) -> str:
    return f"Task: {query.strip()}\nAction:\n{program.strip()}\n"


def parse_example(text: str) -> tuple[str, str] | None:
    """Split a demonstration into (query, program); None when the text is not in that shape."""
    match = _HEADER.match(text)
    if match is None:
        return None
    return match.group("query").strip(), text[match.end() :].strip()
