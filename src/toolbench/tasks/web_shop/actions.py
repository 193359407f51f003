r"""WebShop's action grammar, quirks included, in linear time on any input.

WebShop matches the whole action with ``re.match(r'(.+)\[(.+)\]', action)``: from the first
character, not across a newline, the name greedy. So the name ends at the *last* ``[`` of the
first line that has a ``]`` at least two characters after it, the argument runs to the last
``]`` of that line, and text after it is ignored. No match: the name is the whole action and
there is no argument (a no-op). ``Action: search[x]`` has the name ``Action: search`` and does
nothing; only the first line counts.

The regex can backtrack quadratically on a line of many ``[`` without ``]``; model output is
hostile, so the same match is computed here with two ``rfind`` calls (proven equal to the
regex by a property test).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Action:
    """A parsed action: ``name`` as written, ``arg`` lower-cased (None: no argument)."""

    name: str
    arg: str | None


def split_action(text: str) -> tuple[str, str | None]:
    """(name, argument) exactly as WebShop's ``parse_action`` returns them (argument not yet
    lower-cased)."""
    line_end = text.find("\n")
    line = text if line_end < 0 else text[:line_end]
    close = line.rfind("]")
    if close < 2:
        return text, None
    # The "[" must leave at least one character before it and one before the "]".
    open_ = line.rfind("[", 1, close - 1)
    if open_ < 0:
        return text, None
    return line[:open_], line[open_ + 1 : close]


def parse_action(text: str) -> Action:
    name, arg = split_action(text)
    return Action(name, None if arg is None else arg.lower())
