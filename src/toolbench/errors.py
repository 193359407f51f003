"""Errors a user can cause. The CLI turns them into one line on stderr and exit code 2."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """Bad input from the user: a flag, a file, a name. The message names what and how to fix."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """A ' (did you mean 'x'?)' suffix, or a list of the valid choices when nothing is close."""
    options = sorted(choices)
    close = difflib.get_close_matches(name, options, n=1, cutoff=0.5)
    if close:
        return f" (did you mean '{close[0]}'?)"
    return f" (choose from: {', '.join(options)})"


def json_problem(exc: ValueError) -> str:
    """What is wrong with a line that is not JSON, for a message: ``Unterminated string at
    column 27`` (the decoder's own text ends in a dangling "starting at" for some errors)."""
    msg = getattr(exc, "msg", None)
    if not isinstance(msg, str):
        return str(exc)[:200]
    text = msg.removesuffix(" at").removesuffix(" starting")
    column = getattr(exc, "colno", None)
    return f"{text} at column {column}" if isinstance(column, int) else text
