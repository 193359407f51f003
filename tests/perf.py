"""Budgets for the ``perf`` tier that hold on a loaded machine.

A timing target is stated for an idle machine (``toolbench serve --mcp`` answers the
handshake in 2 s). CI runs the perf tier in parallel with everything else, so the machine's
run queue can be several times its cores. ``budget`` scales a target by how much slower this
process runs right now than it does alone: a fixed piece of pure-Python work is timed in this
process (the calibration), against the best time this session has seen for it. A budget that
holds at load 1 then holds at load 5, and a regression of 10x still fails.
"""

from __future__ import annotations

import os
import time

#: The calibration's work: a loop long enough to time (~20 ms idle), short enough to repeat.
_CALIBRATION_STEPS = 400_000
_best_seen_s = float("inf")


def _calibration_s() -> float:
    start = time.perf_counter()
    total = 0
    for step in range(_CALIBRATION_STEPS):
        total += step & 7
    return time.perf_counter() - start


def slowdown() -> float:
    """How many times slower this process runs now than at its best this session (≥ 1),
    from the calibration and, as a floor, the run queue per core."""
    global _best_seen_s
    now = min(_calibration_s() for _ in range(3))
    _best_seen_s = min(_best_seen_s, now)
    measured = now / _best_seen_s
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    return max(1.0, measured, load)


def budget(target_s: float) -> float:
    """``target_s`` scaled to the machine's present load (see the module docstring)."""
    return target_s * slowdown()
