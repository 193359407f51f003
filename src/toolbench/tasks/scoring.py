"""Scoring helpers shared by tasks: state comparison and metric aggregation."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from toolbench.types import Outcome, Status


def dict_prf(predicted: Mapping[str, Any], label: Mapping[str, Any]) -> tuple[float, float, float]:
    """Precision, recall and F1 over equal key-value pairs (the original ToolBench measure).

    An empty prediction scores 0; an empty label only matches an empty prediction.
    """
    if not label:
        return (1.0, 1.0, 1.0) if not predicted else (0.0, 0.0, 0.0)
    if not predicted:
        return 0.0, 0.0, 0.0
    overlap = sum(1 for key, value in predicted.items() if key in label and label[key] == value)
    precision = overlap / len(predicted)
    recall = overlap / len(label)
    if precision + recall == 0:
        return 0.0, 0.0, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)


def best_match(
    predicted: Mapping[str, Any], golds: Sequence[Mapping[str, Any]]
) -> tuple[int, tuple[float, float, float]]:
    """The label index with the highest F1 (first one on ties) and its scores."""
    best_index, best = 0, (-1.0, -1.0, -1.0)
    for index, gold in enumerate(golds):
        scores = dict_prf(predicted, gold)
        if scores[2] > best[2]:
            best_index, best = index, scores
    return best_index, best


def mean_metrics(outcomes: Sequence[Outcome], names: Sequence[str]) -> dict[str, float]:
    """Average each metric over outcomes that count (scored and model errors, not infra errors).

    A model error counts as a failure with every metric 0 except ``crash_rate``.
    """
    counted = [o for o in outcomes if o.status is not Status.INFRA_ERROR]
    if not counted:
        return {}
    result: dict[str, float] = {}
    for name in names:
        if name == "success_rate":
            values = [1.0 if o.success else 0.0 for o in counted]
        elif name == "crash_rate":
            values = [1.0 if o.status is Status.MODEL_ERROR else 0.0 for o in counted]
        else:
            values = [float(o.metrics.get(name, 0.0)) for o in counted]
        # fsum is exactly rounded, so the result does not depend on completion order.
        result[name] = math.fsum(values) / len(values)
    return result
