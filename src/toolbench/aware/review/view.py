"""How one instance looks to a reviewer: everything needed to judge it, on one screen.

A reviewer decides whether a manipulated instance is *really* incomplete and still natural, so
besides the dialogue and the offered APIs the view shows exactly what the manipulation changed:
which API was swapped for which (and how similar they were), and the removed words marked
inside the complete twin's dialogue when the twin is in the same file. Markers are textual
(``[-removed-]`` and ``{+added+}``, as in ``git diff --word-diff``) as well as coloured, so a
piped transcript without colours still shows them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from toolbench.aware.schema import Instance, Turn

DESCRIPTION_WIDTH = 110
_ROLE_STYLE = {"user": "bold cyan", "assistant": "bold magenta", "tool": "bold yellow"}
_REMOVED = "bold red strike"
_ADDED = "bold green"


def one_line(text: str, width: int = DESCRIPTION_WIDTH) -> str:
    """The first line of ``text``, cut to ``width`` characters with an ellipsis."""
    first = " ".join(text.strip().splitlines()[:1]).strip()
    return first if len(first) <= width else first[: width - 1].rstrip() + "…"


def word_diff(before: str, after: str) -> Text:
    """``after`` with the words removed from ``before`` shown as ``[-...-]`` (and additions)."""
    old = re.findall(r"\S+|\s+", before)
    new = re.findall(r"\S+|\s+", after)
    text = Text()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            text.append("".join(old[i1:i2]))
            continue
        if op in ("delete", "replace"):
            _marked(text, "".join(old[i1:i2]), "[-", "-]", _REMOVED)
        if op in ("insert", "replace"):
            _marked(text, "".join(new[j1:j2]), "{+", "+}", _ADDED)
    return text


def _marked(text: Text, chunk: str, opening: str, closing: str, style: str) -> None:
    # Keep surrounding spaces outside the markers: "the [-in Paris-] weather", not "[-in Paris -]".
    core = chunk.strip()
    if not core:
        return
    start = chunk.index(core)
    text.append(chunk[:start])
    text.append(opening + core + closing, style=style)
    text.append(chunk[start + len(core) :])


def _turn_line(role: str, body: Text, marker: str = "") -> Text:
    line = Text(f"{marker}{role:>9}: ", style=_ROLE_STYLE.get(role, "bold"))
    line.append_text(body)
    return line


def _turn_body(turn: Turn) -> Text:
    body = Text(turn.content)
    if turn.tool_name:
        body = Text(f"[{turn.tool_name}] ", style="dim") + body
    return body


def dialogue_lines(instance: Instance, twin: Instance | None) -> list[Text]:
    """The dialogue; against the twin (if given), removed turns and words are marked."""
    if twin is None:
        return [_turn_line(t.role, _turn_body(t)) for t in instance.dialogue]
    old = [(t.role, t.content) for t in twin.dialogue]
    new = [(t.role, t.content) for t in instance.dialogue]
    lines: list[Text] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            lines += [_turn_line(t.role, _turn_body(t)) for t in instance.dialogue[j1:j2]]
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(paired):
            before, after = twin.dialogue[i1 + k], instance.dialogue[j1 + k]
            lines.append(_turn_line(after.role, word_diff(before.content, after.content)))
        for turn in twin.dialogue[i1 + paired : i2]:
            lines.append(_turn_line(turn.role, Text(f"[-{turn.content}-]", _REMOVED), "-"))
        for turn in instance.dialogue[j1 + paired : j2]:
            lines.append(_turn_line(turn.role, Text(f"{{+{turn.content}+}}", _ADDED), "+"))
    return lines


def changes_lines(instance: Instance, twin_found: bool) -> list[Text]:
    """What the manipulation did, from the provenance and any automatic verdict."""
    prov = instance.provenance
    lines: list[Text] = []
    for rep in prov.replacements:
        lines.append(
            Text.assemble(
                "replaced API ",
                (rep.original, _REMOVED),
                " → ",
                (rep.replacement, _ADDED),
                f"  (similarity {rep.similarity:.3f}, rank {rep.rank})",
            )
        )
    if prov.removed_text:
        removed = ", ".join(f"«{span}»" for span in prov.removed_text)
        where = "  (marked [-…-] in the dialogue)" if twin_found else ""
        lines.append(Text.assemble("removed text: ", (removed, _REMOVED), where))
    if prov.removed_slots:
        lines.append(Text("removed slots: " + ", ".join(prov.removed_slots)))
    if prov.removed_apis:
        lines.append(Text("removed APIs: " + ", ".join(prov.removed_apis)))
    if prov.missing:
        lines.append(Text("missing: " + prov.missing))
    if instance.twin_id and not twin_found:
        lines.append(Text(f"complete twin {instance.twin_id} is not in this file", "dim"))
    if prov.generator:
        lines.append(Text(f"generator: {prov.generator}", "dim"))
    verification = instance.verification
    if verification.status != "pending":
        by = f" by {verification.by}" if verification.by else ""
        style = "bold red" if verification.status == "rejected" else "green"
        lines.append(Text(f"in the file: {verification.status}{by}", style))
        lines += [Text(f"  - {reason}", style) for reason in verification.reasons]
    return lines or [Text("(no provenance recorded)", "dim")]


def apis_table(instance: Instance) -> Table:
    replaced_in = {rep.replacement for rep in instance.provenance.replacements}
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("API", no_wrap=True)
    table.add_column("description")
    for api in instance.apis:
        name = Text(api.name, _ADDED if api.name in replaced_in else "")
        if api.name in replaced_in:
            name.append(" (replacement)", "dim")
        elif api.name in instance.relevant_apis:
            name.append(" (relevant)", "dim")
        table.add_row(name, one_line(api.description) or Text("(no description)", "dim"))
    if not instance.apis:
        table.add_row(Text("(no APIs offered)", "dim"), "")
    return table


def render_instance(
    console: Console,
    instance: Instance,
    twin: Instance | None,
    *,
    reviewed: int,
    total: int,
    notice: Sequence[str] = (),
) -> None:
    """Print one instance for review, with progress and any notice (e.g. "undone")."""
    console.rule(
        Text.assemble(
            (instance.id, "bold"),
            f"  {instance.source} · {instance.manipulation}  ",
            (f"{reviewed}/{total} reviewed", "dim"),
        )
    )
    for line in notice:
        console.print(Text(line, "bold yellow"))
    parts: list[Table | Text] = [apis_table(instance)]
    console.print(Panel(Group(*parts), title="APIs offered", title_align="left"))
    console.print(
        Panel(
            Group(*dialogue_lines(instance, twin)),
            title="dialogue" + (f" (against twin {twin.id})" if twin else ""),
            title_align="left",
        )
    )
    console.print(
        Panel(
            Group(*changes_lines(instance, twin is not None)),
            title="what changed",
            title_align="left",
        )
    )
