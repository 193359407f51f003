"""A run's token totals and context overflows as one line of text, for every place that prints
a run's numbers (``toolbench run``'s summary, ``report`` in the terminal, its exports and HTML).

run.json's ``tokens`` holds the tokens of calls that were generated (not answered from the
cache) at its top level and the cached ones under ``cached``; ``timing.generated_tokens_per_s``
is the last session's generated completion tokens per second. Runs written before that split
have top-level totals that include cached calls and no rate: the line says so instead of
calling them generated. ``report`` reads any run folder, so every field is checked, never trusted: a
missing or malformed one is left out of the line, and nothing here raises.
"""

from __future__ import annotations

import math
from typing import Any

from toolbench.tables.runs import CONTEXT_OVERFLOW


def _count(value: Any) -> int | None:
    """A token count as run.json should hold it (a non-negative int), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _pair(tokens: Any) -> str | None:
    """``12,345 prompt + 678 completion`` from a ``{"prompt", "completion"}`` mapping."""
    if not isinstance(tokens, dict):
        return None
    parts = [
        f"{n:,} {name}"
        for name in ("prompt", "completion")
        if (n := _count(tokens.get(name))) is not None
    ]
    return " + ".join(parts) or None


def generated_rate(info: dict[str, Any]) -> float | None:
    """``timing.generated_tokens_per_s`` when run.json holds a finite non-negative number."""
    timing = info.get("timing")
    rate = timing.get("generated_tokens_per_s") if isinstance(timing, dict) else None
    if isinstance(rate, bool) or not isinstance(rate, int | float):
        return None
    return float(rate) if math.isfinite(rate) and rate >= 0 else None


def reports_none(tokens: dict[str, Any]) -> bool:
    """Whether run.json's ``tokens`` are all zero: the model reports no tokens (oracle,
    baseline, replay, agents), so a line of zeros and a 0.0 tokens/s rate would say nothing."""
    cached = tokens.get("cached", {})
    if not isinstance(cached, dict):
        return False
    values = [tokens.get(name, 0) for name in ("prompt", "completion")]
    values += [cached.get(name, 0) for name in ("prompt", "completion")]
    return all(_count(value) == 0 for value in values)


def tokens_line(info: dict[str, Any]) -> str | None:
    """``tokens: generated 12,345 prompt + 678 completion (45.6 generated tokens/s); cached
    1,000 prompt + 200 completion`` from a run.json, or None when it records no tokens or
    only zeros (a model that reports none)."""
    tokens = info.get("tokens")
    if not isinstance(tokens, dict) or reports_none(tokens):
        return None
    totals, rate = _pair(tokens), generated_rate(info)
    timing = info.get("timing")
    sessions = timing.get("sessions") if isinstance(timing, dict) else None
    # The rate is the last session's; totals are every session's.
    last = " in the last session" if isinstance(sessions, int) and sessions > 1 else ""
    speed = f" ({rate:,.1f} generated tokens/s{last})" if rate is not None else ""
    if "cached" not in tokens:  # written before generated and cached tokens were apart
        if totals is None:
            return None
        return f"tokens: {totals}{speed} (cached calls included: the run predates the split)"
    cached = _pair(tokens["cached"])
    parts = [
        f"generated {totals or 'not recorded'}{speed}",
        f"cached {cached or 'not recorded'}",
    ]
    return "tokens: " + "; ".join(parts)


#: The numeric token columns of the exports' run status table, as ``token_cells`` fills them.
TOKEN_COLUMNS = (
    "prompt tokens",
    "completion tokens",
    "generated tokens/s",
    "cached prompt tokens",
    "cached completion tokens",
)


def token_cells(info: dict[str, Any]) -> list[str]:
    """A run's tokens as plain numbers for ``TOKEN_COLUMNS`` (``12345``, ``45.6``): exports
    are read by scripts, so a numeric column holds a number or nothing. A count the run.json
    lacks (or holds malformed), and every cell of a model that reports no tokens, is blank."""
    tokens = info.get("tokens")
    if not isinstance(tokens, dict) or reports_none(tokens):
        return [""] * len(TOKEN_COLUMNS)
    cached = tokens.get("cached")
    cached = cached if isinstance(cached, dict) else {}

    def number(value: Any) -> str:
        n = _count(value)
        return "" if n is None else str(n)

    rate = generated_rate(info) if "cached" in tokens else None  # old runs: totals mixed
    return [
        number(tokens.get("prompt")),
        number(tokens.get("completion")),
        "" if rate is None else f"{rate:.1f}",
        number(cached.get("prompt")),
        number(cached.get("completion")),
    ]


def overflow_text(n: int) -> str:
    """``3 context overflows (model errors, in the score)``."""
    plural = "" if n == 1 else "s"
    return f"{n} context overflow{plural} (model errors, in the score)"


def overflows_of(counts: Any) -> int:
    """The context overflows of a counts mapping (``counts_of``'s, or run.json's, where runs
    written before the key have none): 0 when absent or malformed."""
    n = counts.get(CONTEXT_OVERFLOW) if isinstance(counts, dict) else None
    return _count(n) or 0


def overflow_notes(counts_by_task: dict[str, Any], prefix: str = "") -> list[str]:
    """One note per task with context overflows: ``home_search: 3 context overflows (model
    errors, in the score)``, each led by ``prefix`` (a run's name where several are shown)."""
    return [
        f"{prefix}{task}: {overflow_text(n)}"
        for task, counts in counts_by_task.items()
        if (n := overflows_of(counts))
    ]
