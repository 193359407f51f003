"""Reading Yes/No answers and judge verdicts from free text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.aware.evaluate.answers import parse_verdict, parse_yes_no


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Yes", "yes"),
        ("no", "no"),
        ("Yes.", "yes"),
        ("**No**", "no"),
        ("  > No, the date is missing.", "no"),
        ("Answer: No - the user never said which city.", "no"),
        ("Looking at the APIs, I think the answer is yes.", "yes"),
        ("The answer would be **No** because no API converts currency.", "no"),
        ("There is no API for that.", "no"),
        ("Yes, GetWeather can be called with city='Paris'.", "yes"),
        ("Well... yes and no.", None),
        ("I am not sure.", None),
        ("", None),
        ("Yesterday it rained.", None),
        ("Nothing is missing, so the call can go ahead.", None),
    ],
)
def test_yes_no(reply: str, expected: str | None) -> None:
    assert parse_yes_no(reply) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Correct\nIt names the missing date.", True),
        ("Incorrect - it blames the wrong API.", False),
        ("The explanation is correct.", True),
        ("**INCORRECT**", False),
        ("I cannot tell.", None),
    ],
)
def test_verdict(reply: str, expected: bool | None) -> None:
    assert parse_verdict(reply) == expected


@given(st.text(max_size=300))
def test_yes_no_never_raises_and_is_one_of_three(reply: str) -> None:
    assert parse_yes_no(reply) in ("yes", "no", None)


@given(st.sampled_from(["Yes", "No"]), st.text(max_size=200))
def test_a_leading_answer_wins_whatever_follows(answer: str, rest: str) -> None:
    assert parse_yes_no(f"{answer}. {rest}") == answer.lower()
