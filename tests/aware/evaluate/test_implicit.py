from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.aware.evaluate.implicit_replies import CASES, FORMAT_LINE, OFFERED, Case, native
from toolbench.aware.evaluate import implicit_calls
from toolbench.aware.evaluate.implicit import BUCKETS, MAX_CHARS, classify_reply
from toolbench.aware.evaluate.implicit_values import NON_CALL_ACTIONS
from toolbench.aware.evaluate.prompts import IMPLICIT_SYSTEM


@pytest.mark.parametrize("case", CASES, ids=[f"{c.bucket}-{c.id}" for c in CASES])
def test_hand_written_reply(case: Case) -> None:
    verdict = classify_reply(case.text, case.apis, case.tool_calls)
    assert verdict.bucket == case.bucket, verdict.reason
    assert verdict.reason
    if case.offered is not None:  # a call (offered), or a call of an API that was not offered
        assert (verdict.api, verdict.offered) == (case.api, case.offered)
        assert isinstance(verdict.arguments, dict)
        if case.arguments is not None:
            assert verdict.arguments == case.arguments
    else:
        assert (verdict.api, verdict.arguments, verdict.offered) == (None, None, None)


def test_calls_name_an_offered_api_and_only_unparseable_keeps_one_that_was_not() -> None:
    for case in CASES:
        assert (case.offered is True) == (case.bucket == "call"), case.id
        assert case.offered is not False or case.bucket == "unparseable", case.id


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
    # a name in prose is only read as a call of an offered API...
    assert classify_reply("Sure: GetWeather(city='Paris') would do.", []).bucket == "answer"
    # ...but a reply that is nothing but a call calls it (the API a tool removal took away)
    alone = classify_reply("GetWeather(city='Paris')", [])
    assert (alone.bucket, alone.api, alone.offered) == ("unparseable", "GetWeather", False)
    verdict = classify_reply("API-Request: [GetWeather(city='Paris')]", [])
    assert (verdict.bucket, verdict.api, verdict.offered) == ("unparseable", "GetWeather", False)
    assert verdict.reason == "call of an API that was not offered: GetWeather"


def test_the_format_line_is_read_from_the_prompt_the_model_sees() -> None:
    assert FORMAT_LINE in IMPLICIT_SYSTEM
    line = implicit_calls.FORMAT_LINE
    assert line.name == "ApiName"
    assert dict(line.arguments) == {"key1": "value1", "key2": "value2"}
    assert classify_reply(FORMAT_LINE, OFFERED).reason == "only a copy of the prompt's format line"


def test_an_offered_api_named_like_the_placeholder_is_called() -> None:
    verdict = classify_reply("API-Request: [ApiName(city='Paris')]", ("ApiName",))
    assert (verdict.bucket, verdict.api, verdict.offered) == ("call", "ApiName", True)
    # its placeholder values still are placeholders
    assert classify_reply(FORMAT_LINE, ("ApiName",)).bucket == "unparseable"


def test_the_first_failed_attempt_gives_the_reason() -> None:
    text = "API-Request: [SendEmail(to='a')]\nAPI-Request: [GetWeather(city='Paris'"
    verdict = classify_reply(text, OFFERED)
    assert verdict.reason == "call of an API that was not offered: SendEmail"
    broken_first = classify_reply("\n".join(reversed(text.split("\n"))), OFFERED)
    assert broken_first.reason == "malformed call: unbalanced brackets"
    assert (broken_first.api, broken_first.offered) == (None, None)


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
        (FORMAT_LINE + " ") * 400,
        '{"name": "ApiName", "arguments": {}, "x": "' + FORMAT_LINE * 300 + '"}',
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
    FORMAT_LINE,
    "ApiName(",
    "key1='value1'",
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
    assert (first.api is None) == (first.offered is None) == (first.arguments is None)
    assert (first.offered is True) == (first.bucket == "call")
    assert first.offered is not False or first.bucket == "unparseable"
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


@relaxed
@given(any_texts, st.integers(min_value=1, max_value=3))
def test_a_copied_format_line_changes_nothing(text: str, copies: int) -> None:
    """Copies of the prompt's format line before a reply: the reply is read as if they were not
    there (only an otherwise empty reply says so in its reason)."""
    alone = classify_reply(text, OFFERED)
    copied = classify_reply(f"{FORMAT_LINE}\n" * copies + text, OFFERED)
    assert (copied.bucket, copied.api, copied.arguments, copied.offered) == (
        alone.bucket, alone.api, alone.arguments, alone.offered
    )  # fmt: skip


identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)


@relaxed
@given(identifiers, st.lists(identifiers, max_size=3), any_texts)
def test_a_call_of_an_api_that_was_not_offered_is_never_a_call(
    name: str, api_names: list[str], text: str
) -> None:
    if name in api_names or name == "ApiName" or name.lower() in NON_CALL_ACTIONS:
        return  # offered, the format line's own name, or ToolBench's "Finish"
    for reply, calls in (
        (f"API-Request: [{name}(a=1)]\n{text}", []),
        (f'{{"name": "{name}", "arguments": {{}}}}\n{text}', []),
        (text, [native(name, "{}")]),
        (f"[{name}(a=1)]", []),
        (f"{name}(a=1)", []),
    ):
        verdict = classify_reply(reply, api_names, calls)
        if verdict.bucket == "call":  # only a call of an offered API in ``text`` can do this
            assert verdict.offered is True and verdict.api in api_names
        else:
            assert verdict.bucket == "unparseable"
