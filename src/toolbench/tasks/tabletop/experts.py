"""Scripted programs for every LMP prompt: the oracle's expert and the baseline's policy.

``ideal_program`` is what a good model would write. For ``tabletop_ui`` it reads the
instruction (one of the 15 templates), asks the sub-LMPs for what needs looking at
(``parse_obj_name('the block closest to the red bowl', ...)``, ``parse_position('a vertical
line with 4 points', ...)``) and calls helpers nobody defined (``stack_objects_in_order``),
which function generation then asks for. For each sub-LMP query it meets, it writes the
``ret_val`` program, and for each helper the ``def``. Only the query and the context line are
read, never the gold: ``configs`` is accepted for callers that have it, and unused.

``baseline_program`` is a template policy without a model: the same reading of the prompt,
but the plans a hurried programmer writes from the demonstrations, with their failure modes
(``get_corner_name`` for "different corners", whose misspelt "botom right corner" then
crashes; pairing blocks with the next bowl without looking at colours; a line started in the
middle of the table whatever stands there).

Every program is plain top-level statements and loops: no comprehension, lambda or nested
function uses a name the program assigned, so they run the same under the original's split
globals/locals ``exec`` and under merged scopes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from toolbench.tasks.tabletop import programs as p
from toolbench.tasks.tabletop.templates import CHOICES, TEMPLATES

MAX_QUERY_CHARS = 2000
_SLOT = re.compile(r"\\\{(\w+)\\\}")
_VALUES = {
    "block": r"[a-z]+ block",
    "bowl": r"[a-z]+ bowl",
    "object1": r"[a-z]+ (?:block|bowl)",
    **{slot: "|".join(re.escape(v) for v in values) for slot, values in CHOICES.items()},
}


def _pattern(text: str) -> re.Pattern[str]:
    """A template as a regex whose slots accept only their own kind of value."""
    body = _SLOT.sub(lambda m: f"(?P<{m.group(1)}>{_VALUES[m.group(1)]})", re.escape(text))
    return re.compile(body + r"\.?", re.IGNORECASE)


_TEMPLATE_RE = {tid: _pattern(t.text) for tid, t in TEMPLATES.items()}


def match_instruction(query: str) -> tuple[str, dict[str, str]] | None:
    """(tester_id, slot values) of the template the instruction follows, if any."""
    text = " ".join(query[:MAX_QUERY_CHARS].split())
    for tid, pattern in _TEMPLATE_RE.items():
        found = pattern.fullmatch(text)
        if found:
            return tid, {k: v.strip() for k, v in found.groupdict().items()}
    return None


def context_objects(context: str) -> list[str]:
    """The names in an ``objects = [...]`` context line (a literal; nothing is evaluated)."""
    found = re.search(r"objects\s*=\s*(\[[^\]\n]{0,5000}\])", context[:20000])
    if not found:
        return []
    try:
        value = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str)]


def ideal_program(
    lmp: str, query: str, context: str = "", configs: Mapping[str, Any] | None = None
) -> str:
    """A correct program for this LMP prompt (the oracle's answer)."""
    query = query[:MAX_QUERY_CHARS]
    if lmp == "tabletop_ui":
        matched = match_instruction(query)
        if matched is None:
            return f"say({_q('I do not know how to ' + query.strip())})"
        return p.ui_program(*matched)
    if lmp == "parse_obj_name":
        return p.obj_name_program(query, context_objects(context))
    if lmp == "parse_position":
        return p.position_program(query)
    if lmp == "parse_question":
        return "ret_val = None"
    if lmp == "transform_shape_pts":
        return "new_shape_pts = shape_pts"
    if lmp == "fgen":
        return p.function_program(query)
    raise ValueError(f"unknown LMP {lmp!r}")


def baseline_program(lmp: str, query: str, context: str = "") -> str:
    """The template policy's program: right on the plain templates, naive on the rest."""
    query = query[:MAX_QUERY_CHARS]
    if lmp == "tabletop_ui":
        matched = match_instruction(query)
        if matched is None:
            return f"say({_q('I do not know how to ' + query.strip())})"
        tid, slots = matched
        naive = p.naive_ui_program(tid, slots, context_objects(context))
        return naive if naive is not None else p.ui_program(tid, slots)
    if lmp == "parse_obj_name":
        return p.naive_obj_name_program(query, context_objects(context))
    return ideal_program(lmp, query, context)


def _q(text: str) -> str:
    return repr(text[:200])
