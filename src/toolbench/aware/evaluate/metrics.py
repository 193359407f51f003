"""Awareness metrics: accuracy, F1 with *incomplete* as the positive class (as the paper),
precision, recall, yes-ratio and the confusion matrix, with 95% bootstrap intervals; and beside
the paper's, balanced accuracy and the Matthews correlation coefficient, which a constant answer
cannot game: on a balanced set ``always-no`` has the paper's F1 0.667 but balanced accuracy 0.5
and MCC 0 (MCC is 0, by convention, whenever one row or column of the matrix is empty).

A prediction is "yes" (the APIs can be invoked now), "no" (they cannot) or ``None``
(unparseable). ``None`` is wrong whatever the label: it is a false negative on an incomplete
instance and a false positive on a complete one, so an unreadable reply can never raise a
score. Intervals resample instances (the unit that was drawn); F1 is recomputed on every
resample rather than averaged, because F1 is not a mean of per-instance values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolbench.tables.bootstrap import Estimate

METRICS = ("accuracy", "balanced_accuracy", "mcc", "f1", "precision", "recall", "yes_ratio")
PAPER_METRICS = ("accuracy", "f1", "precision", "recall", "yes_ratio")
UNGAMEABLE_METRICS = ("balanced_accuracy", "mcc")  # a constant answer scores 0.5 and 0
RESAMPLES = 2000


@dataclass(frozen=True)
class Judged:
    """One scored instance: its id, its label and the prediction."""

    id: str
    label: str  # "complete" | "incomplete"
    predicted: str | None  # "yes" | "no" | None


def _arrays(items: Sequence[Judged]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positive = np.array([i.label == "incomplete" for i in items], dtype=bool)
    said_no = np.array([i.predicted == "no" for i in items], dtype=bool)
    said_yes = np.array([i.predicted == "yes" for i in items], dtype=bool)
    return positive, said_no, said_yes


def _stats(
    positive: np.ndarray, said_no: np.ndarray, said_yes: np.ndarray
) -> dict[str, np.ndarray]:
    """Each metric along the last axis (works for one sample or a matrix of resamples)."""
    n = positive.shape[-1]
    tp = (positive & said_no).sum(-1).astype(float)
    tn = (~positive & said_yes).sum(-1).astype(float)
    fn = positive.sum(-1) - tp
    fp = (~positive).sum(-1) - tn
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tp / (tp + fp)
        recall = tp / (tp + fn)
        f1 = np.where(tp > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        balanced = (recall + tn / (tn + fp)) / 2
        denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        mcc = np.where(denominator > 0, (tp * tn - fp * fn) / denominator, 0.0)
    return {
        "accuracy": (tp + tn) / n,
        "balanced_accuracy": balanced,
        "mcc": mcc,
        "f1": f1,
        "precision": precision,
        "recall": recall,
        "yes_ratio": said_yes.sum(-1) / n,
    }


def confusion(items: Sequence[Judged]) -> dict[str, dict[str, int]]:
    table = {label: {"yes": 0, "no": 0, "unparseable": 0} for label in ("complete", "incomplete")}
    for item in items:
        table[item.label][item.predicted or "unparseable"] += 1
    return table


def binary_metrics(items: Sequence[Judged], seed: int = 0) -> dict[str, Estimate]:
    """Each metric with its 95% percentile-bootstrap interval (``nan`` where undefined)."""
    if not items:
        return {}
    positive, said_no, said_yes = _arrays(items)
    point = _stats(positive, said_no, said_yes)
    picks = np.random.default_rng(seed).integers(0, len(items), size=(RESAMPLES, len(items)))
    resampled = _stats(positive[picks], said_no[picks], said_yes[picks])
    return {name: _estimate(float(point[name]), resampled[name], len(items)) for name in METRICS}


def paired_metrics(a: Sequence[Judged], b: Sequence[Judged], seed: int = 0) -> dict[str, Estimate]:
    """Interval of (b - a) for each metric over the instances both scored, resampled jointly."""
    ids = sorted({i.id for i in a} & {i.id for i in b})
    if not ids:
        return {}
    by_a, by_b = {i.id: i for i in a}, {i.id: i for i in b}
    arrays_a = _arrays([by_a[i] for i in ids])
    arrays_b = _arrays([by_b[i] for i in ids])
    point_a, point_b = _stats(*arrays_a), _stats(*arrays_b)
    picks = np.random.default_rng(seed).integers(0, len(ids), size=(RESAMPLES, len(ids)))
    res_a = _stats(*(x[picks] for x in arrays_a))
    res_b = _stats(*(x[picks] for x in arrays_b))
    return {
        name: _estimate(float(point_b[name] - point_a[name]), res_b[name] - res_a[name], len(ids))
        for name in METRICS
    }


def _estimate(point: float, resampled: np.ndarray, n: int) -> Estimate:
    finite = resampled[np.isfinite(resampled)]
    if math.isnan(point) or finite.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), n)
    low, high = np.percentile(finite, [2.5, 97.5])
    return Estimate(point, float(low), float(high), n)


def agreement(a: Sequence[Judged], b: Sequence[Judged]) -> tuple[float, int]:
    """Instance-wise agreement of two modes' predictions (paper Table 6 "Corr."), and n."""
    by_b = {i.id: i.predicted for i in b}
    shared = [i for i in a if i.id in by_b]
    if not shared:
        return float("nan"), 0
    same = sum(1 for i in shared if i.predicted == by_b[i.id])
    return same / len(shared), len(shared)


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float:
    """Chance-corrected agreement of two binary raters (judge vs hand labels)."""
    if not pairs:
        return float("nan")
    n = len(pairs)
    observed = sum(1 for x, y in pairs if x == y) / n
    p_x = sum(1 for x, _ in pairs if x) / n
    p_y = sum(1 for _, y in pairs if y) / n
    expected = p_x * p_y + (1 - p_x) * (1 - p_y)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)
