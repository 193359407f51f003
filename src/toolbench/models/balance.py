"""Spreading requests over several servers of one model: endpoints (``--base-url`` repeated)
or Ray replicas of a local model (``--model-replicas``).

Each request goes to the member with the fewest requests in flight (ties: the one picked
longest ago), so a slow or busy member gets less work without any tuning. A member can be
taken out of service for a while (it failed its health check, or kept failing); the pool's
owner decides when, and when to probe it back in. Per-member counts (calls, errors, latency)
are kept for ``run.json`` and the report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass
class Member:
    """One server of the pool and what it did."""

    name: str  # what run.json and the report call it (a URL, "replica 0")
    index: int
    in_flight: int = 0
    calls: int = 0  # requests answered (any answer, errors included)
    errors: int = 0  # requests that failed (connection, 5xx, timeout)
    latency_s: float = 0.0  # summed over answered requests
    out_until: float | None = None  # out of service until then (clock time); None: in
    last_picked: int = -1
    taken_out: int = 0  # times it was taken out of service
    failing: int = 0  # failures in a row since its last good answer

    @property
    def answered(self) -> int:
        return self.calls - self.errors

    def as_json(self) -> dict[str, Any]:
        answered = self.calls - self.errors
        mean = round(self.latency_s / answered, 4) if answered > 0 else None
        return {
            "calls": self.calls,
            "errors": self.errors,
            "latency_s": round(self.latency_s, 4),
            "mean_latency_s": mean,
            "taken_out": self.taken_out,
        }


class Balancer:
    """Least-outstanding choice among the members in service."""

    def __init__(self, names: Sequence[str], clock: Callable[[], float] = time.monotonic) -> None:
        if not names:
            raise ValueError("a pool needs at least one member")
        self.members = [Member(name, i) for i, name in enumerate(names)]
        self.clock = clock
        self._picks = 0

    def in_service(self, member: Member) -> bool:
        until = member.out_until
        return until is None or self.clock() >= until

    def pick(self, skip: Collection[Member] = ()) -> Member | None:
        """The member to send the next request to (counted in flight), or None when every
        member is out of service (or in ``skip``: the ones this request already failed on)."""
        ready = [m for m in self.members if m not in skip and self.in_service(m)]
        if not ready:
            return None
        member = min(ready, key=lambda m: (m.in_flight, m.last_picked))
        self._picks += 1
        member.last_picked = self._picks
        member.in_flight += 1
        return member

    def finished(self, member: Member, *, ok: bool, latency_s: float = 0.0) -> None:
        """A request sent to ``member`` ended (``ok``: it answered)."""
        member.in_flight = max(0, member.in_flight - 1)
        member.calls += 1
        if ok:
            member.latency_s += latency_s
            member.failing = 0
        else:
            member.errors += 1
            member.failing += 1

    def abandoned(self, member: Member) -> None:
        """A request sent to ``member`` was cancelled before it ended: no longer in flight,
        and neither an answer nor an error (Ctrl-C, the run stopping)."""
        member.in_flight = max(0, member.in_flight - 1)

    def take_out(self, member: Member, seconds: float) -> None:
        """Out of service for ``seconds`` (then it is picked again: the next request probes
        it, unless the owner probes it first). Counted once per time it goes out."""
        if member.out_until is None:
            member.taken_out += 1
        member.out_until = self.clock() + seconds

    def put_back(self, member: Member) -> None:
        member.out_until = None
        member.failing = 0

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per member (by name): calls, errors, mean latency of answered calls, times taken
        out."""
        return {m.name: m.as_json() for m in self.members}


#: The fields of a member's stats that add up over processes and sessions.
SUMMED = ("calls", "errors", "latency_s", "taken_out")


def merge_stats(parts: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Several ``stats()`` of one pool as one (the sample actors of a Ray run, the sessions
    of a resumed run): per member, the counts and latency summed and the mean latency of the
    answered calls recomputed from the sums. Members keep the order they are first seen in;
    entries that are not the expected shape (a hand-edited run.json) are skipped."""
    merged: dict[str, dict[str, Any]] = {}
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        for name, values in part.items():
            if not isinstance(values, Mapping):
                continue
            sums = merged.setdefault(str(name), dict.fromkeys(SUMMED, 0))
            for key in SUMMED:
                value = values.get(key)
                if _count(value):
                    sums[key] += value
    for sums in merged.values():
        sums["latency_s"] = round(sums["latency_s"], 4)
        answered = sums["calls"] - sums["errors"]
        sums["mean_latency_s"] = round(sums["latency_s"] / answered, 4) if answered > 0 else None
    return {name: {k: sums[k] for k in _FIELDS} for name, sums in merged.items()}


_FIELDS = ("calls", "errors", "latency_s", "mean_latency_s", "taken_out")


def _count(value: Any) -> bool:
    """A finite number >= 0 (not a bool): what a well-formed count or duration is."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )
