"""What each endpoint of a pool (``--base-url`` repeated) did in a run, from ``run.json``'s
``endpoints`` field: one line per endpoint, for the summary a run prints and for ``toolbench
report``, so that a replica that was slow, failing or down for a while is seen next to the
scores it did not change.

``run.json`` may have been edited by hand: anything that is not the expected shape is skipped,
never an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Endpoints named at most (a pool of hundreds would drown the summary); the rest are summed.
MAX_LINES = 32


def endpoint_stats(info: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``info["endpoints"]`` with only well-formed entries (URL -> counts)."""
    endpoints = info.get("endpoints")
    if not isinstance(endpoints, Mapping):
        return {}
    return {
        str(url): dict(entry)
        for url, entry in endpoints.items()
        if isinstance(entry, Mapping) and _count(entry, "calls") is not None
    }


def _count(entry: Mapping[str, Any], name: str) -> int | None:
    value = entry.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _seconds(entry: Mapping[str, Any], name: str) -> float | None:
    value = entry.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value)


def endpoint_line(url: str, entry: Mapping[str, Any], width: int = 0) -> str:
    """``  http://a:8000/v1  1,204 calls, 3 errors, mean 0.412 s, taken out 1x``."""
    calls = _count(entry, "calls") or 0
    parts = [f"{calls:,} calls"]
    errors = _count(entry, "errors") or 0
    parts.append(f"{errors:,} error{'' if errors == 1 else 's'}")
    mean = _seconds(entry, "mean_latency_s")
    parts.append(f"mean {mean:.3f} s" if mean is not None else "mean -")
    taken_out = _count(entry, "taken_out")
    if taken_out:
        parts.append(f"taken out {taken_out}x")
    return f"  {url.ljust(width)}  {', '.join(parts)}"


def endpoint_lines(info: Mapping[str, Any]) -> list[str]:
    """The lines for a run (empty when the run did not use a pool): a heading, then one line
    per endpoint in the order they were given."""
    stats = endpoint_stats(info)
    if not stats:
        return []
    shown = list(stats.items())[:MAX_LINES]
    width = max(len(url) for url, _ in shown)
    lines = [f"endpoints ({len(stats)}): calls, errors, mean latency of answered calls"]
    lines += [endpoint_line(url, entry, width) for url, entry in shown]
    rest = list(stats.values())[MAX_LINES:]
    if rest:
        calls = sum(_count(e, "calls") or 0 for e in rest)
        errors = sum(_count(e, "errors") or 0 for e in rest)
        lines.append(f"  ... {len(rest)} more endpoints: {calls:,} calls, {errors:,} errors")
    return lines
