"""Scoring helpers shared by tasks: state comparison and metric aggregation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


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
