"""The symbolic household a plan runs in: pure Python, in-process, deterministic.

The original only checked each line against allow-lists; here each line is an action with
preconditions and effects on a small state (where every object is, what is open, switched on,
dirty, worn, held, what the agent sits on, which room it is in and what it stands next to),
so we can say whether a plan can actually be carried out and whether it gets the chore done.

A scene is plain JSON stored with each record (see ``Scene.from_json``). A plan is a list of
grounded lines ``Agent.Action(a[, b])``: it is parsed, never executed as Python. A run stops
at the first line whose preconditions fail and names the line and the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from toolbench.tasks.virtual_home.actions import apply  # the effects table
from toolbench.tasks.virtual_home.household import (
    MAX_HELD,
    Failure,
    Loc,
    Scene,
    State,
    is_room,
)

__all__ = [
    "MAX_HELD",
    "Failure",
    "Loc",
    "RunResult",
    "Scene",
    "State",
    "is_room",
    "parse_call",
    "run_plan",
]
_CALL_HEAD = "Agent."
_ACTION_NAME = re.compile(r"\w+")


@dataclass(frozen=True)
class RunResult:
    ok: bool
    state: State
    failed_line: int = 0  # 1-based, among the plan's kept lines
    line: str = ""
    reason: str = ""


def parse_call(line: str) -> tuple[str, list[str]] | None:
    """``Agent.Put(a, b)`` -> ("Put", ["a", "b"]); None for a line that is no call. The line is
    ``Agent.``, a word, ``(`` and everything up to the first ``)`` (text after it is ignored,
    as grounding ignores it); scanned in linear time, whatever the line holds."""
    if not line.startswith(_CALL_HEAD):
        return None
    name = _ACTION_NAME.match(line, len(_CALL_HEAD))
    if name is None or line[name.end() : name.end() + 1] != "(":
        return None
    close = line.find(")", name.end() + 1)
    if close < 0 or "\n" in line[name.end() : close]:  # the original's ``.`` stops at "\n"
        return None
    args = [a.strip() for a in line[name.end() + 1 : close].split(",")]
    return name.group(), [] if args == [""] else args


def run_plan(scene: Scene, lines: Sequence[str]) -> RunResult:
    """Run grounded plan lines from the scene's start; stop at the first failure."""
    state = State.start(scene)
    for number, line in enumerate(lines, start=1):
        call = parse_call(line)
        try:
            if call is None:
                raise Failure("not an Agent.<Action>(...) call")
            apply(state, *call)
        except Failure as exc:
            return RunResult(False, state, number, line, str(exc))
    return RunResult(True, state)
