"""Diffs a person reads to see why a sample failed: key by key between the world the
prediction left and the closest gold's, or line by line between the prediction and the gold
program where a task keeps no state. Model text is hostile: every value shown is cut to a
bounded length and the number of lines is capped, whatever the prediction holds.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

MAX_VALUE_CHARS = 300
MAX_KEYS = 200
MAX_LINES = 400
MAX_LINE_CHARS = 500


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def state_diff(predicted: dict[str, Any], gold: dict[str, Any]) -> list[dict[str, str]]:
    """Every key of either state: ``same``, ``changed`` (both hold it, differently),
    ``missing`` (only the gold sets it) or ``extra`` (only the prediction does); differences
    first, then keys in order."""
    rows = []
    for key in sorted(set(predicted) | set(gold), key=str)[:MAX_KEYS]:
        if key not in predicted:
            kind = "missing"
        elif key not in gold:
            kind = "extra"
        else:
            kind = "same" if predicted[key] == gold[key] else "changed"
        rows.append(
            {
                "key": _shown(key).strip('"'),
                "kind": kind,
                "predicted": _shown(predicted[key]) if key in predicted else "",
                "gold": _shown(gold[key]) if key in gold else "",
            }
        )
    rows.sort(key=lambda r: r["kind"] == "same")
    return rows


def _lines(text: str) -> list[str]:
    lines = text.splitlines()[:MAX_LINES]
    return [line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…" for line in lines]


def text_diff(predicted: str, gold: str) -> list[tuple[str, str]]:
    """(tag, line): ``=`` in both, ``-`` only in the gold, ``+`` only in the prediction."""
    a, b = _lines(gold), _lines(predicted)
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out += [("=", line) for line in a[i1:i2]]
        else:
            out += [("-", line) for line in a[i1:i2]]
            out += [("+", line) for line in b[j1:j2]]
    return out


def summary_line(rows: list[dict[str, str]]) -> str:
    """``2 changed, 1 missing, 0 extra of 8 keys``."""
    counts = {kind: sum(1 for r in rows if r["kind"] == kind) for kind in ("changed", "missing")}
    extra = sum(1 for r in rows if r["kind"] == "extra")
    return (
        f"{counts['changed']} changed, {counts['missing']} missing, {extra} extra "
        f"of {len(rows)} keys"
    )
