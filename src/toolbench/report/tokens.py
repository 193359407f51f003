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


def tokens_line(info: dict[str, Any]) -> str | None:
    """``tokens: generated 12,345 prompt + 678 completion (45.6 generated tokens/s); cached
    1,000 prompt + 200 completion`` from a run.json, or None when it records no tokens."""
    tokens = info.get("tokens")
    if not isinstance(tokens, dict):
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
