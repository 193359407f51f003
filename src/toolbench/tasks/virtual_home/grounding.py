r"""The original ToolBench virtual_home scorer: per-line grounding against allow-lists, and LCS.

These rules are kept exactly as the original evaluator applied them, so that our
``executability_rate``, ``lcs_score`` and ``lcs_score_if_executable`` are comparable with
published numbers. Deliberate quirks kept: ``Agent.WalkTo (x)`` (space before the parenthesis)
is not executable; text after ``)`` is ignored by the check but kept in the line; an empty
plan has no non-executable line and so counts as executable (with LCS 0); LCS compares lines
as exact strings, so ``Agent.Put(a,b)`` and ``Agent.Put(a, b)`` differ. What we define that
the original left open: both sides empty scores 0 instead of dividing by zero.

A plan is text: it is parsed here, never executed as Python. It is model output, so every
step is linear in the line's length: the original's lazy ``\((.*?)\)`` search (quadratic on a
line of ``(`` with no ``)``: 300,000 of them stalled a run for minutes) is computed with two
``str.find`` calls, which find exactly the span that search found (a test pins the equality).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.errors import UserError

# action name ("Agent.Grab") -> {} (no argument) | {"object": [...]} | {"object1", "object2"}
AllowLists = Mapping[str, Mapping[str, Sequence[str]]]

_REMOVED = re.compile(r"[\"';]")
_LIST_NUMBER = re.compile(r"\d+\.\s*")  # only ever matched at the start of the line


def arguments_of(line: str) -> str | None:
    r"""What the original's ``re.search(r"\((.*?)\)", line).group(1)`` returns (None for no
    match), in linear time. The leftmost match opens at the first ``(`` that has a ``)`` after
    it on the same ``\n``-free stretch, and closes at the first such ``)``; when the first
    ``(`` of a stretch has none, no later ``(`` of that stretch has one either. (Lines from
    ``ground`` hold no ``\n``, so there the loop runs once)."""
    start = line.find("(")
    while start >= 0:
        stop = line.find("\n", start + 1)
        end = line.find(")", start + 1, len(line) if stop < 0 else stop)
        if end >= 0:
            return line[start + 1 : end]
        if stop < 0:
            return None
        start = line.find("(", stop + 1)
    return None


def ground_line(line: str, allow: AllowLists) -> tuple[str, bool]:
    """(cleaned line, executable): the original's per-line check, in its order of steps."""
    if '"' in line or "'" in line or ";" in line:  # the regexes cost; most lines need neither
        line = _REMOVED.sub("", line)
    if line[:1].isdigit():
        number = _LIST_NUMBER.match(line)
        line = line[number.end() :] if number else line
    cleaned = line.strip()
    if "(" not in cleaned:
        return cleaned, False
    entry = allow.get(cleaned[: cleaned.index("(")])
    arguments = arguments_of(cleaned)
    if entry is None or arguments is None:
        return cleaned, False
    pieces = arguments.split(",")
    if len(pieces) == 2:
        if set(entry) != {"object1", "object2"}:
            return cleaned, False
        first, second = (piece.strip() for piece in pieces)
        return cleaned, first in entry["object1"] and second in entry["object2"]
    if len(pieces) == 1:
        argument = pieces[0].strip()
        if not argument:
            return cleaned, len(entry) == 0
        return cleaned, argument in entry.get("object", ())
    return cleaned, False


@dataclass(frozen=True)
class Grounded:
    """A whole output after grounding: the kept lines (non-executable ones included, as the
    original kept them for LCS) and the cleaned text of every non-executable line."""

    lines: tuple[str, ...]
    non_executable: tuple[str, ...]

    @property
    def executable(self) -> bool:
        return not self.non_executable

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def ground(text: str, allow: AllowLists) -> Grounded:
    """Ground every line up to the first line starting with ``Task:`` (an echoed next task)."""
    kept: list[str] = []
    bad: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("Task:"):
            break
        if not line:
            continue
        cleaned, executable = ground_line(line, allow)
        if not executable:
            bad.append(cleaned)
        if cleaned:
            kept.append(cleaned)
    return Grounded(tuple(kept), tuple(bad))


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Longest common subsequence of two line lists, exact string equality per line."""
    if not a or not b:
        return 0
    if a == b:  # the oracle's and any verbatim gold's case, without the quadratic table
        return len(a)
    previous = [0] * (len(b) + 1)
    for item in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if item == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


def lcs_score(prediction: str, label: str) -> float:
    """LCS length over the longer side's line count; 0 when both are empty (the original
    divided by zero there)."""
    pred, gold = _lines(prediction), _lines(label)
    longest = max(len(pred), len(gold))
    return lcs_length(pred, gold) / longest if longest else 0.0


@dataclass(frozen=True)
class LcsResult:
    grounded: Grounded
    score: float
    closest_label: int


def score_plan(prediction: str, labels: Sequence[str], allow: AllowLists) -> LcsResult:
    """Ground the prediction and keep the best LCS over the grounded labels (the first label
    reaching the maximum wins ties, as the original's strict ``>`` from -1 did)."""
    return score_grounded(ground(prediction, allow), ground_labels(labels, allow))


def ground_labels(labels: Sequence[str], allow: AllowLists) -> tuple[tuple[str, ...], ...]:
    """Each label's grounded lines: labels never change, so the task grounds them once."""
    return tuple(ground(label, allow).lines for label in labels)


def score_grounded(grounded: Grounded, labels: Sequence[Sequence[str]]) -> LcsResult:
    """``score_plan`` on already grounded lines (a line list is what the original's LCS saw
    after joining and re-splitting the grounded text: lines are stripped and non-empty)."""
    best, index = -1.0, 0
    pred = grounded.lines
    for i, gold in enumerate(labels):
        longest = max(len(pred), len(gold))
        score = lcs_length(pred, gold) / longest if longest else 0.0
        if score > best:
            best, index = score, i
            if best == 1.0:
                break  # nothing later can be strictly better
    return LcsResult(grounded, max(best, 0.0), index)


def check_labels(labels: Sequence[str], allow: AllowLists, where: str) -> None:
    """Every gold line must ground; the original asserted this mid-run and aborted, we refuse
    the data file up front with the record's file:line."""
    for i, label in enumerate(labels):
        grounded = ground(label, allow)
        if not grounded.lines:
            raise UserError(f"{where}: gold plan {i + 1} has no action line; fix or remove it")
        if grounded.non_executable:
            raise UserError(
                f"{where}: gold plan {i + 1} line {grounded.non_executable[0]!r} fails "
                "grounding against valid_object_lists.json; fix the line or the allow-list"
            )


def read_allow_lists(path: Path) -> dict[str, dict[str, list[str]]]:
    """Read and validate ``valid_object_lists.json`` (shape errors name the file and key)."""
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: file not found; virtual_home needs its allow-lists") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: not valid JSON ({exc}); regenerate or fix it") from None
    if not isinstance(raw, dict) or not raw:
        raise UserError(f"{path}: expected an object mapping 'Agent.<Action>' to its objects")
    allow: dict[str, dict[str, list[str]]] = {}
    for action, entry in raw.items():
        keys = set(entry) if isinstance(entry, dict) else None
        if keys not in (set(), {"object"}, {"object1", "object2"}) or not all(
            isinstance(v, list) and all(isinstance(o, str) for o in v) for v in entry.values()
        ):
            raise UserError(
                f"{path}: entry {action!r} must be {{}}, {{'object': [...]}} or "
                "{'object1': [...], 'object2': [...]} with string lists"
            )
        allow[str(action)] = {key: list(value) for key, value in entry.items()}
    return allow
