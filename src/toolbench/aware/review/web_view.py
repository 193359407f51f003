"""One instance as the review page shows it: plain data for the template, never HTML.

The page shows what the terminal view shows (``view.py``): the dialogue with the words the
manipulation removed marked against the complete twin, what the provenance says changed, and the
offered APIs as the model gets them (name, full description, parameter schema). In the browser
the dialogue and the decision come first and the APIs after them, the untagged ones folded: a
google_sheets item offers ~30, whose descriptions alone would fill three screens. Everything here
is text plus a *kind* (``del``/``ins``/``""``) the template turns into a CSS class, so all
escaping happens in one place: Jinja2's autoescaping.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from rich.text import Text

from toolbench.aware.review.view import changes_lines, word_diff
from toolbench.aware.schema import Instance, Turn

Segment = tuple[str, str]  # (kind, text)
PARAMETERS_MAX = 4000


@dataclass(frozen=True)
class ApiView:
    name: str
    tag: str  # "replacement", "relevant" or ""
    description: str
    parameters: str


@dataclass(frozen=True)
class TurnView:
    role: str
    tool: str
    segments: tuple[Segment, ...]
    change: str = ""  # "removed" / "added" for whole turns


def _kind(style: object) -> str:
    text = str(style)
    if "strike" in text:
        return "del"
    if "green" in text:
        return "ins"
    return ""


def segments(text: Text) -> tuple[Segment, ...]:
    """A rich ``Text`` (as ``word_diff`` marks it) as (kind, text) pieces in order."""
    plain = text.plain
    spans = sorted(text.spans, key=lambda s: s.start)
    out: list[Segment] = []
    at = 0
    for span in spans:
        if span.start > at:
            out.append(("", plain[at : span.start]))
        out.append((_kind(span.style), plain[span.start : span.end]))
        at = max(at, span.end)
    if at < len(plain):
        out.append(("", plain[at:]))
    return tuple(piece for piece in out if piece[1])


def _turn(turn: Turn, pieces: tuple[Segment, ...] | None = None, change: str = "") -> TurnView:
    return TurnView(
        role=turn.role,
        tool=turn.tool_name or "",
        segments=pieces if pieces is not None else (("", turn.content),),
        change=change,
    )


def dialogue(instance: Instance, twin: Instance | None) -> list[TurnView]:
    """The dialogue; against the twin, changed turns show removed/added words."""
    if twin is None:
        return [_turn(t) for t in instance.dialogue]
    old = [(t.role, t.content) for t in twin.dialogue]
    new = [(t.role, t.content) for t in instance.dialogue]
    views: list[TurnView] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            views += [_turn(t) for t in instance.dialogue[j1:j2]]
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(paired):
            before, after = twin.dialogue[i1 + k], instance.dialogue[j1 + k]
            views.append(_turn(after, segments(word_diff(before.content, after.content))))
        for turn in twin.dialogue[i1 + paired : i2]:
            views.append(_turn(turn, (("del", turn.content),), "removed"))
        for turn in instance.dialogue[j1 + paired : j2]:
            views.append(_turn(turn, (("ins", turn.content),), "added"))
    return views


def apis(instance: Instance) -> list[ApiView]:
    replaced_in = {rep.replacement for rep in instance.provenance.replacements}
    views = []
    for api in instance.apis:
        tag = "replacement" if api.name in replaced_in else ""
        if not tag and api.name in instance.relevant_apis:
            tag = "relevant"
        parameters = json.dumps(api.parameters, indent=1, ensure_ascii=False, sort_keys=True)
        if len(parameters) > PARAMETERS_MAX:
            parameters = parameters[:PARAMETERS_MAX] + " …"
        views.append(ApiView(api.name, tag, api.description, parameters))
    return views


def changes(instance: Instance, twin_found: bool) -> list[str]:
    """What the manipulation did, the same lines as the terminal view (without colours)."""
    return [line.plain for line in changes_lines(instance, twin_found)]
