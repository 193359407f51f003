"""The awareness reply parsers stay linear on hostile replies, and read what they read before.

``parse_yes_no``'s cue pattern once had three adjacent ``\\s*``: "answer" and 1,000 spaces
took 18 s, 2,000 took 86 s. The judge's VERDICT line and the rewrite reply's turn number had
the same fault. Each pattern here is checked against the old one on generated text.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from tests.worst_case import assert_linear
from toolbench.aware.evaluate.answers import _CUE, parse_yes_no
from toolbench.aware.manipulate import replacement_judge
from toolbench.aware.manipulate.rewrite_parse import _as_turn

_OLD_CUE = re.compile(r"\banswer\s*(?:is|would be|:)?\s*[*_`\"':]*\s*(yes|no)\b", re.I)
_OLD_VERDICT = re.compile(r"^\s*\**\s*verdict\s*\**\s*[:=]\s*\**\s*(yes|no)\b", re.I | re.M)
_OLD_TURN = re.compile(r"\s*(?:user\s+)?(?:turn\s*)?#?\s*(-?\d{1,6})\s*", re.I)


def test_implicit_classifier_is_linear_on_worst_case_shapes() -> None:
    assert_linear("aware implicit classifier: classify_reply")


def test_yes_no_reader_is_linear_on_worst_case_shapes() -> None:
    assert_linear("aware Yes/No answer: parse_yes_no")


def test_judge_verdict_reader_is_linear_on_worst_case_shapes() -> None:
    assert_linear("aware judge verdict: replacement_judge.parse_verdict")


def test_rewrite_reader_is_linear_on_worst_case_shapes() -> None:
    assert_linear("aware rewrite reply: parse_rewrite")


_CUE_PARTS = ["answer", "Answer", " ", "  ", "\n", "is", "would be", ":", "*", "'", "`", "yes"]


@given(st.lists(st.sampled_from([*_CUE_PARTS, "no", "NO", "x"]), max_size=10))
def test_the_cue_matches_where_the_old_pattern_matched(parts: list[str]) -> None:
    text = "".join(parts)
    old, new = _OLD_CUE.search(text), _CUE.search(text)
    assert (old and (old.span(), old.group(1))) == (new and (new.span(), new.group(1)))


@given(st.lists(st.sampled_from(["verdict", "VERDICT", " ", "\n", "\t", "*", "**", ":", "=",
                                 "yes", "no", "x", "\r"]), max_size=10))  # fmt: skip
def test_the_verdict_line_reads_as_the_old_pattern_read_it(parts: list[str]) -> None:
    text = "".join(parts)
    old, new = _OLD_VERDICT.search(text), replacement_judge._VERDICT.search(text)
    assert (old and (old.end(), old.group(1))) == (new and (new.end(), new.group(1)))


@given(st.lists(st.sampled_from(["user", "turn", " ", "\n", "#", "-", "1", "23", "x", "\u3000"]),
                max_size=8))  # fmt: skip
def test_the_turn_number_reads_as_the_old_pattern_read_it(parts: list[str]) -> None:
    text = "".join(parts)
    old = _OLD_TURN.fullmatch(text)
    assert _as_turn(text) == (int(old.group(1)) if old else None)


def test_the_cases_that_stalled_now_read_at_once() -> None:
    assert parse_yes_no("I think the answer" + " " * 3_000 + "x") is None
    assert parse_yes_no("The answer is:  ** yes **") == "yes"
    verdict = replacement_judge.parse_verdict("\n" * 3_000 + "**VERDICT:** no. None fits.")
    assert verdict.serves is False
    assert _as_turn("user " + " " * 10_000 + "turn #3") == 3
