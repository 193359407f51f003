"""Reading the rewriting model's reply: hostile text in, an answer or None out, never an error."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.aware.manipulate.rewrite_parse import (
    MAX_REPLY_CHARS,
    RewriteReply,
    parse_rewrite,
)


def test_json_in_a_fence_after_reasoning() -> None:
    reply = (
        "The id comes from turn 2.\nSo I remove it.\n\n```json\n"
        '{"turn": 2, "rewritten": "Please cancel it.", "removed": ["appointment 123"]}\n```'
    )
    parsed = parse_rewrite(reply)
    assert parsed == RewriteReply(
        turn=2,
        rewritten="Please cancel it.",
        removed=("appointment 123",),
        reasoning="The id comes from turn 2.\nSo I remove it.",
    )


def test_bare_json_object() -> None:
    parsed = parse_rewrite('{"turn": 1, "rewritten": "Book a room.", "removed": ["in Oslo"]}')
    assert parsed is not None
    assert (parsed.turn, parsed.rewritten, parsed.removed) == (1, "Book a room.", ("in Oslo",))
    assert parsed.reasoning == ""


def test_the_last_answer_wins_and_objects_without_rewritten_are_ignored() -> None:
    reply = (
        'Draft: {"turn": 1, "rewritten": "first try", "removed": ["a"]}\n'
        'Better: {"turn": 1, "rewritten": "second try", "removed": ["b"]}\n'
        'Schema I followed: {"type": "object", "required": ["turn"]}'
    )
    parsed = parse_rewrite(reply)
    assert parsed is not None and parsed.rewritten == "second try" and parsed.removed == ("b",)


def test_nested_answer_and_braces_inside_strings() -> None:
    reply = json.dumps(
        {"answer": {"turn": "2", "rewritten": "Use {x} for it}", "removed": "the {id}"}}
    )
    parsed = parse_rewrite(reply)
    assert parsed is not None
    assert parsed.turn == 2 and parsed.rewritten == "Use {x} for it}"
    assert parsed.removed == ("the {id}",)


def test_single_quotes_trailing_commas_and_python_literals_via_fallback() -> None:
    reply = (
        "Here it is:\n{'turn': 1, 'rewritten': 'Move it to \"later\", please.', "
        "'removed': ['to May 9th',], 'done': True,}"
    )
    parsed = parse_rewrite(reply)
    assert parsed is not None
    assert parsed.turn == 1
    assert parsed.rewritten == 'Move it to "later", please.'
    assert parsed.removed == ("to May 9th",)
    assert parsed.reasoning == "Here it is:"


def test_bare_keys_via_fallback() -> None:
    parsed = parse_rewrite("{turn: 2, rewritten: 'Cancel it.', removed: ['48213057']}")
    assert parsed is not None
    assert (parsed.turn, parsed.rewritten, parsed.removed) == (2, "Cancel it.", ("48213057",))


def test_strict_json_is_preferred_over_a_later_near_json_object() -> None:
    reply = (
        '{"turn": 1, "rewritten": "strict", "removed": ["x"]}\n'
        "{'turn': 1, 'rewritten': 'relaxed', 'removed': ['y'],}"
    )
    parsed = parse_rewrite(reply)
    assert parsed is not None and parsed.rewritten == "strict"


def test_plain_text_fallback() -> None:
    reply = (
        "Reasoning: the city is the only required value.\n"
        "Turn: 1\n"
        '**Rewritten:** "What will the weather be like this weekend?"\n'
        'Removed: "in Porto", “on the coast”\n'
    )
    parsed = parse_rewrite(reply)
    assert parsed is not None
    assert parsed.turn == 1
    assert parsed.rewritten == "What will the weather be like this weekend?"
    assert parsed.removed == ("in Porto", "on the coast")


def test_plain_text_fallback_with_bullets_and_no_turn() -> None:
    reply = "Rewritten: Send the money to my landlord.\nRemoved:\n- to account 55120983\n- now\n"
    parsed = parse_rewrite(reply)
    assert parsed is not None
    assert parsed.turn is None
    assert parsed.removed == ("to account 55120983", "now")


def test_turn_values_that_are_not_numbers_become_none() -> None:
    for turn in ('"last"', "true", "[1]", "null", "1.5"):
        parsed = parse_rewrite(f'{{"turn": {turn}, "rewritten": "x y", "removed": []}}')
        assert parsed is not None and parsed.turn is None, turn
    parsed = parse_rewrite('{"turn": "User turn 3", "rewritten": "x y", "removed": [1, "a"]}')
    assert parsed is not None and parsed.turn == 3 and parsed.removed == ("a",)


def test_no_answer_gives_none() -> None:
    for reply in (
        "",
        "   ",
        "I cannot help with that.",
        '{"turn": 1, "removed": ["x"]}',
        '{"turn": 1, "rewritten": 42}',
        "{'rewritten': 'unterminated",
        "Rewritten:   ",
        "{" * 5000,
    ):
        assert parse_rewrite(reply) is None, reply[:40]


def test_model_output_is_never_evaluated() -> None:
    # Python expressions where a value should be: read as text or rejected, never run.
    reply = "{'turn': __import__('os').getpid(), 'rewritten': 'x y', 'removed': []}"
    parsed = parse_rewrite(reply)
    assert parsed is None or parsed.turn is None


def test_huge_reply_is_read_from_its_end() -> None:
    answer = '{"turn": 1, "rewritten": "short", "removed": ["long"]}'
    parsed = parse_rewrite("{[" * (MAX_REPLY_CHARS // 2) + "\n" + answer)
    assert parsed is not None and parsed.rewritten == "short"


@pytest.mark.parametrize(
    "text",
    [
        "{" * 400 + "a" * 59_000,
        '{"' * 400 + "a" * 59_000,
        "{'" * 400 + "a" * 59_000,
        "{[" * 30_000,
        "Rewritten: x\n" * 5_000,
        "{'x': 'y',} " * 5_000,
    ],
)
def test_hostile_replies_cost_bounded_time(text: str) -> None:
    started = time.perf_counter()
    parse_rewrite(text)
    assert time.perf_counter() - started < 1.0


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_arbitrary_text(text: str) -> None:
    result = parse_rewrite(text)
    assert result is None or isinstance(result, RewriteReply)


_JSONISH = st.text(alphabet="{}[]\"':,0123456789 rewritnturmvdTNF\\\n", max_size=300)


@settings(max_examples=300, deadline=None)
@given(_JSONISH)
def test_never_raises_on_json_like_garbage(text: str) -> None:
    result = parse_rewrite(text)
    assert result is None or isinstance(result, RewriteReply)


@settings(max_examples=200, deadline=None)
@given(
    prefix=st.text(max_size=200),
    suffix=st.text(max_size=200).filter(lambda s: "{" not in s),
    turn=st.integers(min_value=1, max_value=50),
    rewritten=st.text(min_size=1, max_size=80).filter(lambda s: s.strip() == s and s),
    removed=st.lists(st.text(min_size=1, max_size=30).filter(lambda s: s.strip() == s), max_size=3),
    fenced=st.booleans(),
)
def test_a_json_answer_in_prose_is_recovered(
    prefix: str, suffix: str, turn: int, rewritten: str, removed: list[str], fenced: bool
) -> None:
    body = json.dumps(
        {"turn": turn, "rewritten": rewritten, "removed": removed}, ensure_ascii=False
    )
    if fenced:
        body = f"```json\n{body}\n```"
    parsed = parse_rewrite(f"{prefix}\n{body}\n{suffix}")
    assert parsed is not None
    assert parsed.turn == turn
    assert parsed.rewritten == rewritten
    assert parsed.removed == tuple(span for span in removed if span.strip())
