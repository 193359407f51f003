"""Bootstrap confidence intervals over samples (the unit that was drawn), seeded to repeat."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float
    high: float
    n: int

    def fmt(self, digits: int = 3) -> str:
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


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
