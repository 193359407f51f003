import pytest

from toolbench.core.metrics import mean_metrics
from toolbench.kinds.scoring import best_match, dict_prf
from toolbench.types import Outcome, Status


def test_exact_match_is_perfect() -> None:
    assert dict_prf({"a": 1, "b": "x"}, {"b": "x", "a": 1}) == (1.0, 1.0, 1.0)


def test_partial_overlap_matches_original_formula() -> None:
    precision, recall, f1 = dict_prf({"a": 1, "b": 2, "c": 3}, {"a": 1, "b": 9})
    assert precision == pytest.approx(1 / 3)
    assert recall == pytest.approx(1 / 2)
    assert f1 == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))


def test_empty_prediction_scores_zero() -> None:
    assert dict_prf({}, {"a": 1}) == (0.0, 0.0, 0.0)


def test_int_and_float_values_compare_as_python_does() -> None:
    assert dict_prf({"num_baths": 2.0}, {"num_baths": 2})[2] == 1.0


def test_best_match_picks_highest_f1_label() -> None:
    index, scores = best_match({"a": 1, "b": 2}, [{"a": 1}, {"a": 1, "b": 2}, {"b": 2}])
    assert index == 1 and scores[2] == 1.0


def test_mean_metrics_counts_model_errors_as_failures_and_skips_infra() -> None:
    outcomes = [
        Outcome(Status.SCORED, True, {"f1": 1.0}),
        Outcome(Status.MODEL_ERROR, False, {}),
        Outcome(Status.INFRA_ERROR),
    ]
    metrics = mean_metrics(outcomes, ("success_rate", "crash_rate", "f1"))
    assert metrics == {"success_rate": 0.5, "crash_rate": 0.5, "f1": 0.5}
