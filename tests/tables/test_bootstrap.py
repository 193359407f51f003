import pytest

from toolbench.tables.bootstrap import bootstrap_mean, paired_difference


def test_interval_contains_mean_and_is_repeatable() -> None:
    values = [1.0] * 60 + [0.0] * 40
    first = bootstrap_mean(values)
    assert first.mean == pytest.approx(0.6)
    assert first.low < 0.6 < first.high
    assert first.low > 0.45 and first.high < 0.75
    assert bootstrap_mean(values) == first


def test_constant_values_have_zero_width() -> None:
    estimate = bootstrap_mean([0.5] * 10)
    assert estimate.low == estimate.high == 0.5


def test_paired_difference_detects_consistent_improvement() -> None:
    a = [0.0] * 50 + [1.0] * 50
    b = [1.0] * 90 + [0.0] * 10
    diff = paired_difference(a, b)
    assert diff.mean == pytest.approx(0.4)
    assert diff.low > 0


def test_empty_input_gives_nan_not_crash() -> None:
    assert bootstrap_mean([]).n == 0
