"""Bootstrap confidence intervals over samples (the unit that was drawn), seeded to repeat."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float
    high: float
    n: int

    @property
    def defined(self) -> bool:
        """False for an estimate over nothing (or of an undefined value): shown as ``-``."""
        return self.n > 0 and self.mean == self.mean

    def fmt(self, digits: int = 3) -> str:
        if not self.defined:
            return "-"
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


def seed_for(name: str) -> int:
    """A resampling seed from a name (a task's): an interval then depends only on that task's
    values, not on which other tasks share the run or in which order they were written."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8", "replace")).digest()[:8], "big")


def bootstrap_mean(
    values: Sequence[float], resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> Estimate:
    """Percentile bootstrap interval of the mean."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, data.size, size=(resamples, data.size))
    means = data[picks].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Estimate(float(data.mean()), float(low), float(high), int(data.size))


def paired_difference(
    a: Sequence[float], b: Sequence[float], resamples: int = 2000, seed: int = 0
) -> Estimate:
    """Interval of mean(b - a) over the same samples: the right test for 'is B better than A'."""
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    return bootstrap_mean(diffs.tolist(), resamples=resamples, seed=seed)
