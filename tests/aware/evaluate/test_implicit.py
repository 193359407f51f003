from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.aware.evaluate.implicit_replies import CASES, OFFERED, Case, native
from toolbench.aware.evaluate.implicit import BUCKETS, MAX_CHARS, classify_reply


@pytest.mark.parametrize("case", CASES, ids=[f"{c.bucket}-{c.id}" for c in CASES])
def test_hand_written_reply(case: Case) -> None:
    verdict = classify_reply(case.text, case.apis, case.tool_calls)
    assert verdict.bucket == case.bucket, verdict.reason
    assert verdict.reason
    if case.bucket == "call":
        assert (verdict.api, verdict.offered) == (case.api, case.offered)
        assert isinstance(verdict.arguments, dict)
        if case.arguments is not None:
            assert verdict.arguments == case.arguments
    else:
        assert (verdict.api, verdict.arguments, verdict.offered) == (None, None, None)


def test_every_bucket_has_enough_cases() -> None:
    counts = Counter(case.bucket for case in CASES)
    assert set(counts) == set(BUCKETS)
    assert min(counts.values()) >= 8
    assert len(CASES) >= 60
    assert len({(case.bucket, case.id) for case in CASES}) == len(CASES)


def test_malformed_reasons_say_what_broke() -> None:
    verdict = classify_reply("API-Request: [GetWeather(city='Paris'", OFFERED)
    assert verdict.reason == "malformed call: unbalanced brackets"
    verdict = classify_reply("API-Request: [GetWeather(city=get_city())]", OFFERED)
    assert verdict.reason == "malformed call: arguments are not literals"


def test_first_call_in_reading_order_is_reported() -> None:
    text = "QueryStock(symbol='A')\nAPI-Request: [GetWeather(city='B')]"
    assert classify_reply(text, OFFERED).api == "QueryStock"
    native_first = classify_reply(text, OFFERED, [native("BookFlight", "{}")])
    assert native_first.api == "BookFlight"


def test_nothing_past_the_cap_is_read() -> None:
    text = "x" * MAX_CHARS + "API-Request: [GetWeather(city='Paris')]"
    assert classify_reply(text, OFFERED).bucket == "answer"


def test_no_offered_apis() -> None:
    assert classify_reply("GetWeather(city='Paris')", []).bucket == "answer"
    assert classify_reply("API-Request: [GetWeather(city='Paris')]", []).offered is False


@pytest.mark.parametrize(
    "text",
    [
        "GetWeather(" * 3000,
        '{"name": "GetWeather", "arguments": ' * 600,
        "API-Request: [" * 1500,
        "(" * MAX_CHARS,
        "'\"" * MAX_CHARS,
        "Action: GetWeather\nAction Input: {" * 700,
        "<tool_call>{" * 1500,
        "none of the " * 2000,
        "a" * 200_000,
        "```" * 7000,
        '{"function": ' * 900 + "{}" + "}" * 900,
        '{"name": "GetWeather", "arguments": ' + "[" * 900 + "]" * 900 + "}",
        "GetWeather(a=" + "[" * 400 + "]" * 400 + ")",
        '{"name": "' + "a." * 9000 + '", "arguments": {}}',
    ],
    ids=lambda text: repr(text[:16]),
)
def test_hostile_input_stays_fast(text: str) -> None:
    started = time.perf_counter()
    verdict = classify_reply(text, OFFERED)
    assert verdict.bucket in BUCKETS
    assert time.perf_counter() - started < 2.0


# -- properties ----------------------------------------------------------------------------------

FRAGMENTS = [
    "API-Request:",
    "API-Request: [",
    "GetWeather",
    "BookFlight(",
    "api.",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "'",
    '"',
    "\\",
    ",",
    "=",
    "...",
    "<city>",
    "\n",
    " ",
    "?",
    "Action:",
    "Action Input:",
    "<tool_call>",
    "</tool_call>",
    '{"name":',
    '"arguments":',
    "```",
    "```json",
    "User:",
    "none of the available APIs",
    "Could you tell me",
    "def ",
    "true",
    "Finish",
]
texts = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=40).map("".join)
any_texts = texts | st.text(max_size=300)
names = st.lists(
    st.sampled_from(OFFERED) | st.text(min_size=0, max_size=8), max_size=4, unique=True
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)
tool_calls = st.lists(
    st.dictionaries(
        st.sampled_from(["id", "type", "function", "name", "arguments"]),
        json_values | st.builds(native, st.none() | st.text(max_size=8), st.text(max_size=20)),
    ),
    max_size=3,
)
relaxed = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@relaxed
@given(any_texts, names, tool_calls)
def test_never_raises_and_is_deterministic(
    text: str, api_names: list[str], calls: list[dict[str, Any]]
) -> None:
    first = classify_reply(text, api_names, calls)
    assert first.bucket in BUCKETS
    assert first.reason
    assert (first.api is not None) == (first.bucket == "call")
    assert classify_reply(text, api_names, calls) == first


@relaxed
@given(any_texts, st.sampled_from(OFFERED), st.booleans())
def test_adding_a_well_formed_request_makes_a_call(text: str, api: str, at_end: bool) -> None:
    line = f"API-Request: [{api}(a=1)]"
    if at_end and "user" not in text.lower() and "human" not in text.lower():
        reply = f"{text}\n{line}"
    else:
        reply = f"{line}\n{text}"
    verdict = classify_reply(reply, OFFERED)
    assert verdict.bucket == "call"
    assert verdict.offered is True
