"""The similarity baseline never sees the label of an instance it is scored on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tests.aware.evaluate.test_items import pair
from toolbench.aware.evaluate.baselines import (
    CROSS_FIT_FOLDS,
    SimilarityModel,
    cross_fitted_thresholds,
    fit_threshold,
    fold_of,
)
from toolbench.aware.schema import Instance


class _ScoresByText:
    """An encoder stand-in: a request about Lisbon is close to the weather API, else far."""

    identity = "fake@0"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[1.0, 0.0] if "Lisbon" in t or "city" in t else [0.0, 1.0] for t in texts])


def _instances(n: int) -> list[Instance]:
    return [i for k in range(n) for i in pair(k)]


def test_an_original_and_its_twins_share_a_fold() -> None:
    for complete, twin in (pair(k) for k in range(40)):
        assert fold_of(complete) == fold_of(twin)
    assert len({fold_of(c) for c, _ in (pair(k) for k in range(40))}) == CROSS_FIT_FOLDS


def test_each_fold_is_answered_with_a_threshold_fitted_without_it() -> None:
    instances = _instances(30)
    scores = {
        i.id: (0.9 if i.label == "complete" else 0.2) + 0.001 * n for n, i in enumerate(instances)
    }
    thresholds, per_fold = cross_fitted_thresholds(scores, instances)
    for fold, threshold in enumerate(per_fold):
        others = [i for i in instances if fold_of(i) != fold]
        assert threshold == fit_threshold([scores[i.id] for i in others], [i.label for i in others])
    # flipping the labels inside one fold moves no threshold that fold is answered with
    flipped = [
        i.model_copy(update={"label": "incomplete" if i.label == "complete" else "complete"})
        if fold_of(i) == 0
        else i
        for i in instances
    ]
    again, _ = cross_fitted_thresholds(scores, flipped)
    assert all(again[i.id] == thresholds[i.id] for i in instances if fold_of(i) == 0)


def test_without_a_demo_file_the_model_cross_fits() -> None:
    instances = _instances(10)
    model = SimilarityModel.fitted(_ScoresByText(), instances, instances)  # type: ignore[arg-type]
    assert model.fit_notes["similarity_fit"].startswith("cross-fitted")
    assert len(model.fit_notes["similarity_thresholds"]) == CROSS_FIT_FOLDS


def test_a_demo_file_is_used_minus_the_records_also_evaluated() -> None:
    evaluated = _instances(4)
    demos = evaluated[:2] + [i for k in range(10, 16) for i in pair(k)]
    model = SimilarityModel.fitted(_ScoresByText(), demos, evaluated)  # type: ignore[arg-type]
    note = model.fit_notes["similarity_fit"]
    assert (
        note
        == "demonstration file: 12 instances (2 left out: their source record is also evaluated)"
    )
    assert len(set(model.thresholds.values())) == 1
