"""Pure candidate selection for API replacement (no instances, no encoder): similarities in
exact integer millionths, a total order over candidates, and the turn-taking pick that
``api_replacement`` runs per instance. Split out so each part stays readable on its own.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import numpy as np

#: Similarities are kept (and recorded) in millionths: 6 decimals.
SCALE = 1_000_000
#: Key of an ineligible candidate: below every real key (|key| <= 1e6 * pool size), and
#: still negatable without overflow.
NEVER = -(2**62)


def to_micro(similarity: np.ndarray) -> np.ndarray:
    """Similarities as int64 millionths (the 6-decimal values that get recorded)."""
    return np.rint(np.asarray(similarity, dtype=np.float64) * SCALE).astype(np.int64)


def ranking_keys(micro: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """One int64 key per cell that orders candidates totally: higher similarity first, then the
    lower pool index; ``NEVER`` for ineligible cells. No two eligible keys in a row are equal,
    so partitioning needs no tie handling and is deterministic."""
    pool_size = micro.shape[-1]
    reverse_index = np.arange(pool_size - 1, -1, -1, dtype=np.int64)
    keys = micro.astype(np.int64) * pool_size + reverse_index
    return np.where(eligible, keys, NEVER)


def top_candidates(keys: np.ndarray, depth: int) -> np.ndarray:
    """(rows, depth) pool indices best-first per row; -1 past a row's eligible candidates."""
    rows, pool_size = keys.shape
    depth = min(depth, pool_size)
    if depth <= 0 or rows == 0:
        return np.full((rows, max(depth, 0)), -1, dtype=np.int64)
    if depth < pool_size:
        part = np.argpartition(-keys, depth - 1, axis=1)[:, :depth]
    else:
        part = np.broadcast_to(np.arange(pool_size), (rows, pool_size))
    part_keys = np.take_along_axis(keys, part, axis=1)
    order = np.argsort(-part_keys, axis=1, kind="stable")
    best = np.take_along_axis(part, order, axis=1).astype(np.int64)
    best[np.take_along_axis(part_keys, order, axis=1) == NEVER] = -1
    return best


Reject = Callable[[int, int], str | None]


def pick(
    candidates: np.ndarray,
    *,
    rank: int,
    choose_from: int,
    rng: random.Random,
    reject: Reject | None = None,
    rejected: list[tuple[int, int, str]] | None = None,
) -> list[tuple[int, int] | None]:
    """For each row (relevant API of one instance, in order): (pool index, rank) or None.

    Rows take turns, so a candidate chosen for one row is not eligible for the later ones and
    ranks count only what is still available. ``reject(row, column)`` (the pre-verification
    checks) may turn a candidate down with a reason: it is skipped, as if not eligible, and
    ``(row, column, reason)`` is appended to ``rejected``. ``candidates`` must be
    ``top_candidates`` deep enough: rank + choose_from - 1 + (rows - 1), plus room for
    rejections.
    """
    taken: set[int] = set()
    chosen: list[tuple[int, int] | None] = []
    for row_index, row in enumerate(candidates):
        available: list[int] = []
        for value in row:
            column = int(value)
            if column < 0 or column in taken:
                continue
            reason = reject(row_index, column) if reject is not None else None
            if reason is not None:
                if rejected is not None:
                    rejected.append((row_index, column, reason))
                continue
            available.append(column)
            if len(available) >= rank - 1 + choose_from:
                break
        window = available[rank - 1 : rank - 1 + choose_from]
        if not window:
            chosen.append(None)
            continue
        offset = rng.randrange(len(window)) if len(window) > 1 else 0
        taken.add(window[offset])
        chosen.append((window[offset], rank + offset))
    return chosen


def depth_for(rows: int, rank: int, choose_from: int) -> int:
    """How many best candidates ``pick`` may need for ``rows`` relevant APIs of one instance."""
    return rank + choose_from - 1 + max(rows - 1, 0)


def select(
    similarity: np.ndarray,
    eligible: np.ndarray,
    *,
    rank: int,
    choose_from: int,
    rng: random.Random,
) -> list[tuple[int, int] | None]:
    """The whole choice for one instance: (relevant APIs x pool) similarities and eligibility
    -> per relevant API (pool index, rank) or None. ``replace_relevant_apis`` runs the same
    steps on blocks of many instances."""
    keys = ranking_keys(to_micro(similarity), eligible)
    depth = depth_for(len(keys), rank, choose_from)
    return pick(top_candidates(keys, depth), rank=rank, choose_from=choose_from, rng=rng)


def micro_bounds(low: float | None, high: float | None) -> tuple[int | None, int | None]:
    """The window in millionths, exact for the recorded values: m is inside iff m / 1e6 is."""
    low_micro = high_micro = None
    if low is not None:
        low_micro = math.floor(low * SCALE) - 2
        while low_micro / SCALE < low:
            low_micro += 1
    if high is not None:
        high_micro = math.ceil(high * SCALE) + 2
        while high_micro / SCALE > high:
            high_micro -= 1
    return low_micro, high_micro
