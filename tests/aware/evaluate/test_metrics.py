"""Awareness metrics: the paper's F1 (incomplete positive), unparseable answers, intervals."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.aware.evaluate.metrics import (
    Judged,
    agreement,
    binary_metrics,
    cohen_kappa,
    confusion,
    paired_metrics,
)


def _items(pairs: list[tuple[str, str | None]]) -> list[Judged]:
    return [Judged(str(n), label, predicted) for n, (label, predicted) in enumerate(pairs)]


def test_counts_by_hand() -> None:
    # 3 incomplete (2 said No, 1 Yes), 3 complete (2 said Yes, 1 unparseable)
    items = _items(
        [("incomplete", "no"), ("incomplete", "no"), ("incomplete", "yes"),
         ("complete", "yes"), ("complete", "yes"), ("complete", None)]
    )  # fmt: skip
    m = binary_metrics(items)
    assert m["accuracy"].mean == pytest.approx(4 / 6)
    # tp=2, fn=1, fp=1 (the unparseable answer on a complete instance), tn=2
    assert m["precision"].mean == pytest.approx(2 / 3)
    assert m["recall"].mean == pytest.approx(2 / 3)
    assert m["f1"].mean == pytest.approx(2 / 3)
    assert m["yes_ratio"].mean == pytest.approx(3 / 6)
    assert m["balanced_accuracy"].mean == pytest.approx((2 / 3 + 2 / 3) / 2)
    assert m["mcc"].mean == pytest.approx((2 * 2 - 1 * 1) / math.sqrt(3 * 3 * 3 * 3))
    assert m["accuracy"].low <= m["accuracy"].mean <= m["accuracy"].high
    assert confusion(items) == {
        "complete": {"yes": 2, "no": 0, "unparseable": 1},
        "incomplete": {"yes": 1, "no": 2, "unparseable": 0},
    }


def test_unparseable_never_helps() -> None:
    labels = ["incomplete", "complete"] * 5
    unread = binary_metrics(_items([(label, None) for label in labels]))
    assert unread["accuracy"].mean == 0.0 and unread["f1"].mean == 0.0


def test_always_yes_and_always_no() -> None:
    labels = ["incomplete", "complete", "incomplete"]
    yes = binary_metrics(_items([(label, "yes") for label in labels]))
    assert yes["f1"].mean == 0.0 and yes["yes_ratio"].mean == 1.0
    assert math.isnan(yes["precision"].mean)  # never predicted incomplete: undefined
    no = binary_metrics(_items([(label, "no") for label in labels]))
    assert no["recall"].mean == 1.0 and no["yes_ratio"].mean == 0.0


def test_paired_difference_and_agreement() -> None:
    labels = ["incomplete", "complete"] * 20
    a = _items([(label, "yes") for label in labels])
    perfect = [(label, "no" if label == "incomplete" else "yes") for label in labels]
    b = _items(perfect)
    diff = paired_metrics(a, b)
    assert diff["accuracy"].mean == pytest.approx(0.5)
    assert diff["accuracy"].low > 0
    assert agreement(a, b) == (0.5, 40)
    assert cohen_kappa([(True, True), (False, False)]) == 1.0
    assert cohen_kappa([(True, False), (False, True)]) == -1.0


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["complete", "incomplete"]), st.sampled_from(["yes", "no", None])
        ),
        min_size=1,
        max_size=40,
    )
)
def test_metrics_are_bounded_and_intervals_contain_the_estimate(
    pairs: list[tuple[str, str | None]],
) -> None:
    for name, e in binary_metrics(_items(pairs)).items():
        if math.isnan(e.mean):  # undefined when a class (or a prediction) never occurs
            assert name in ("precision", "recall", "balanced_accuracy")
            continue
        assert (-1.0 if name == "mcc" else 0.0) <= e.mean <= 1.0
        assert e.low <= e.mean + 1e-9 and e.mean <= e.high + 1e-9


def test_a_constant_answer_cannot_game_balanced_accuracy_or_mcc() -> None:
    """The paper's F1 rewards always-no (0.667 on a balanced set); these two do not."""
    labels = ["incomplete", "complete"] * 10
    for constant in ("yes", "no"):
        m = binary_metrics(_items([(label, constant) for label in labels]))
        assert m["balanced_accuracy"].mean == pytest.approx(0.5)
        assert m["mcc"].mean == 0.0
    always_no = binary_metrics(_items([(label, "no") for label in labels]))
    assert always_no["f1"].mean == pytest.approx(2 / 3)
    perfect = [(label, "no" if label == "incomplete" else "yes") for label in labels]
    m = binary_metrics(_items(perfect))
    assert m["balanced_accuracy"].mean == 1.0 and m["mcc"].mean == pytest.approx(1.0)
    inverted = [(label, "yes" if label == "incomplete" else "no") for label in labels]
    assert binary_metrics(_items(inverted))["mcc"].mean == pytest.approx(-1.0)


def test_balanced_accuracy_weighs_both_classes_on_an_unbalanced_set() -> None:
    # 2 incomplete twins per complete original, as the datasets are built; always-no
    labels = ["incomplete", "incomplete", "complete"] * 10
    m = binary_metrics(_items([(label, "no") for label in labels]))
    assert m["accuracy"].mean == pytest.approx(2 / 3)
    assert m["balanced_accuracy"].mean == pytest.approx(0.5)
