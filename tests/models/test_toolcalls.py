"""Tool calls written as text (Hermes, Llama 3 JSON, Mistral, pythonic) read back as OpenAI calls.

Drawn calls in each format round-trip; any text, and text built from the formats' own pieces,
gives well-formed calls or none and never raises; hostile inputs (hundreds of thousands of
brackets or quotes, unclosed calls, deep nesting) return (no timing asserts here).
"""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.models.toolcalls import MAX_CALLS, MAX_TEXT, ToolCallParse, parse_tool_calls

TOOLS = ("get_weather", "search_homes", "book_hotel", "x")

names = st.sampled_from(TOOLS)
keywords = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
# Strings too short to hold markup: a string holding '</tool_call>' ends a Hermes block in the
# format itself (as it does for every server's parser).
texts = st.text(max_size=7)
leaves = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts
)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(keywords, values, max_size=5)
calls = st.lists(st.tuples(names, arguments), min_size=1, max_size=4)
# Prose around the calls: no brackets (a bracket in prose is another candidate).
prose = st.text(alphabet=string.ascii_letters + " .,!?'\n", max_size=30)


def assert_calls(parse: ToolCallParse, expected: list[tuple[str, dict[str, Any]]]) -> None:
    assert [c["function"]["name"] for c in parse.calls] == [name for name, _ in expected]
    assert [json.loads(c["function"]["arguments"]) for c in parse.calls] == [
        args for _, args in expected
    ]
    assert [c["id"] for c in parse.calls] == [f"call_{i}" for i in range(len(expected))]
    assert all(c["type"] == "function" for c in parse.calls)


def well_formed(parse: ToolCallParse, text: str) -> None:
    """What every parse promises, whatever the text."""
    assert isinstance(parse.content, str) and parse.content == parse.content.strip()
    assert len(parse.calls) <= MAX_CALLS
    assert (parse.syntax == "") == (not parse.calls)
    assert parse.syntax in ("", "hermes", "mistral", "llama_json", "pythonic")
    if not parse.calls:
        assert parse.content == text.strip()
    for index, call in enumerate(parse.calls):
        assert call["id"] == f"call_{index}" and call["type"] == "function"
        function = call["function"]
        assert isinstance(function["name"], str) and function["name"]
        assert isinstance(json.loads(function["arguments"]), dict)
        function["arguments"].encode("utf-8")  # a UTF-8 record can carry it
        function["name"].encode("utf-8")


# ---- each format round-trips ----


@given(calls, prose, st.booleans())
def test_hermes_blocks_round_trip(drawn: list[Any], before: str, ascii_only: bool) -> None:
    blocks = "\n".join(
        f"<tool_call>\n{json.dumps({'name': n, 'arguments': a}, ensure_ascii=ascii_only)}\n"
        "</tool_call>"
        for n, a in drawn
    )
    parse = parse_tool_calls(f"{before}\n{blocks}", TOOLS)
    assert_calls(parse, drawn)
    assert parse.syntax == "hermes" and parse.content == before.strip()


@given(calls, st.booleans(), st.sampled_from(["parameters", "arguments"]))
def test_llama_json_round_trips(drawn: list[Any], tag: bool, key: str) -> None:
    body = "; ".join(json.dumps({"name": n, key: a}) for n, a in drawn)
    parse = parse_tool_calls(("<|python_tag|>" if tag else "") + body, TOOLS)
    assert_calls(parse, drawn)
    assert parse.syntax == "llama_json" and parse.content == ""


@given(calls, prose)
def test_mistral_list_round_trips(drawn: list[Any], before: str) -> None:
    payload = json.dumps([{"name": n, "arguments": a} for n, a in drawn])
    parse = parse_tool_calls(f"{before}[TOOL_CALLS] {payload}", TOOLS)
    assert_calls(parse, drawn)
    assert parse.syntax == "mistral" and parse.content == before.strip()


@given(calls, st.booleans())
def test_mistral_v11_round_trips(drawn: list[Any], with_id: bool) -> None:
    call_id = "[CALL_ID]a1B2c3D4e" if with_id else ""
    text = "".join(f"[TOOL_CALLS]{n}{call_id}[ARGS]{json.dumps(a)}" for n, a in drawn)
    parse = parse_tool_calls(text, TOOLS)
    assert_calls(parse, drawn)
    assert parse.syntax == "mistral" and parse.content == ""


def python_literal(value: Any, data: st.DataObject) -> str:
    """``value`` written as Python source, lists drawn as lists or tuples."""
    if isinstance(value, list):
        items = [python_literal(item, data) for item in value]
        if data.draw(st.booleans()):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, dict):
        pairs = (f"{python_literal(k, data)}: {python_literal(v, data)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    if isinstance(value, str) and data.draw(st.booleans()):
        return json.dumps(value)  # a double-quoted string with JSON's escapes is Python too
    return repr(value)


@given(calls, prose, st.booleans(), st.data())
def test_pythonic_round_trips(
    drawn: list[Any], before: str, tags: bool, data: st.DataObject
) -> None:
    written = ", ".join(
        f"{n}(" + ", ".join(f"{k}={python_literal(v, data)}" for k, v in a.items()) + ")"
        for n, a in drawn
    )
    listed = f"[{written}]"
    if tags:
        listed = f"<|python_start|>{listed}<|python_end|>"
    parse = parse_tool_calls(f"{before} {listed}", TOOLS)
    assert_calls(parse, drawn)
    assert parse.syntax == "pythonic" and parse.content == before.strip()


def test_a_bare_pythonic_call_that_opens_the_reply_is_a_call() -> None:
    parse = parse_tool_calls("get_weather(city='Paris', days=3)\nThat is all.", TOOLS)
    assert_calls(parse, [("get_weather", {"city": "Paris", "days": 3})])
    assert parse.content == "That is all."


# ---- what is not a call ----


@pytest.mark.parametrize(
    "text",
    [
        "[get_weather('Paris')]",  # positional: no argument names
        "[get_weather(city=open('x'))]",  # an expression, not a literal
        "[get_weather(city=__import__('os').system('id'))]",
        "[get_weather(city='Paris', city='Rome')]",  # repeated keyword
        "[unknown_tool(city='Paris')]",  # bare formats: only the offered tools
        '{"name": "unknown_tool", "parameters": {}}',
        '{"name": "get_weather"}',  # bare JSON needs its arguments
        '{"name": "get_weather", "parameters": {"x": NaN}}',
        '{"name": "get_weather", "parameters": [1, 2]}',
        "<tool_call>not json</tool_call>",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Pa',  # cut mid-call
        '[TOOL_CALLS] [{"arguments": {}}]',  # no name
        "[TOOL_CALLS]get_weather[ARGS]not json",
        "[get_weather(x=1e999)]",  # infinity: not JSON
    ],
)
def test_malformed_or_unoffered_calls_are_content(text: str) -> None:
    parse = parse_tool_calls(text, TOOLS)
    assert parse == ToolCallParse(text.strip())


def test_explicit_markup_takes_any_name_and_double_encoded_arguments() -> None:
    text = '<tool_call>{"name": "no_such_tool", "arguments": "{\\"a\\": 1}"}</tool_call>'
    assert_calls(parse_tool_calls(text, ()), [("no_such_tool", {"a": 1})])


def test_a_bad_block_stays_in_the_content_and_the_good_ones_are_calls() -> None:
    good = '<tool_call>{"name": "x", "arguments": {"a": 1}}</tool_call>'
    parse = parse_tool_calls(f"{good}\n<tool_call>oops</tool_call>\n{good}", TOOLS)
    assert_calls(parse, [("x", {"a": 1}), ("x", {"a": 1})])
    assert parse.content == "<tool_call>oops</tool_call>"


def test_python_strings_read_with_python_escapes() -> None:
    text = r"""[x(a='it\'s', b="tab\there", c='\x41\u00e9\U0001F600\101', d='\q', e='''multi
line''')]"""
    (call,) = parse_tool_calls(text, TOOLS).calls
    assert json.loads(call["function"]["arguments"]) == {
        "a": "it's", "b": "tab\there", "c": "Aé😀A", "d": "\\q", "e": "multi\nline",
    }  # fmt: skip


def test_lone_surrogates_are_kept_as_json_escapes() -> None:
    (call,) = parse_tool_calls(r"[x(a='\ud800')]", TOOLS).calls
    assert call["function"]["arguments"] == '{"a": "\\ud800"}'
    assert json.loads(call["function"]["arguments"]) == {"a": "\ud800"}


def test_calls_past_the_cap_stay_in_the_content() -> None:
    block = '<tool_call>{"name": "x", "arguments": {}}</tool_call>'
    parse = parse_tool_calls(block * (MAX_CALLS + 3), TOOLS)
    assert len(parse.calls) == MAX_CALLS
    assert parse.content == block * 3


def test_text_past_the_cap_is_content() -> None:
    block = '<tool_call>{"name": "x", "arguments": {}}</tool_call>'
    parse = parse_tool_calls("a" * MAX_TEXT + block, TOOLS)
    assert parse.calls == [] and parse.content.endswith(block)


# ---- any text ----

PIECES = [
    "<tool_call>", "</tool_call>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "<|python_tag|>",
    "<|python_start|>", "<|python_end|>", "{", "}", "[", "]", "(", ")", '"', "'", "'''", "\\",
    ":", ",", ";", "=", " ", "\n", "name", "arguments", "parameters", '"name"', '"arguments"',
    '"parameters"', "get_weather", "x", "a", "1", "-2.5e3", "1e999", "NaN", "True", "None",
    "null", "\\u", "\\x4", "\\ud800", "\ud800", "0x1", "1_000", "__",
]  # fmt: skip
markup = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=40).map("".join)


@settings(max_examples=300)
@given(st.text() | markup, st.lists(st.sampled_from([*TOOLS, "name", ""]), max_size=3))
def test_any_text_parses_to_well_formed_calls_or_none(text: str, tools: list[str]) -> None:
    well_formed(parse_tool_calls(text, tools), text)


@given(calls, st.sampled_from(["hermes", "llama_json", "mistral", "pythonic"]), st.integers(0, 60))
def test_a_cut_call_never_raises(drawn: list[Any], syntax: str, cut: int) -> None:
    """A reply cut by max_tokens, at any point of well-formed calls."""
    text = {
        "hermes": "".join(
            f"<tool_call>{json.dumps({'name': n, 'arguments': a})}</tool_call>" for n, a in drawn
        ),
        "llama_json": ";".join(json.dumps({"name": n, "parameters": a}) for n, a in drawn),
        "mistral": "".join(f"[TOOL_CALLS]{n}[ARGS]{json.dumps(a)}" for n, a in drawn),
        "pythonic": "["
        + ", ".join(f"{n}(" + ", ".join(f"{k}={v!r}" for k, v in a.items()) + ")" for n, a in drawn)
        + "]",
    }[syntax]
    cut_text = text[: max(0, len(text) - cut)]
    well_formed(parse_tool_calls(cut_text, TOOLS), cut_text)


# ---- hostile inputs return ----

N = 300_000
HOSTILE = {
    "parens": "(" * N,
    "brackets": "[" * N,
    "braces": "{" * N,
    "closers": "]}" * N,
    "double quotes": '"' * N,
    "single quotes": "'" * N,
    "backslashes": "\\" * N,
    "nested quotes": "\"'" * (N // 2),
    "open calls": "[get_weather(x=" * (N // 15),
    "open call lists": "[get_weather(x=[" * (N // 16),
    "open strings": "[get_weather(x='" * (N // 16),
    "open triple strings": "[get_weather(x='''" * (N // 18),
    "unclosed argument": "[get_weather(x='" + "a" * N,
    "long number": "[get_weather(x=" + "1" * N + ")]",
    "long list": "[get_weather(x=[" + "1," * (N // 2),
    "deep balanced": "[get_weather(x=" + "[" * N + "]" * N + ")]",
    "deep json": '{"name": "get_weather", "parameters": ' + '{"a":' * N + "1" + "}" * (N + 1),
    "open json objects": '{"name": "get_weather", "parameters": ' * (N // 40),
    "hermes opens": "<tool_call>" * (N // 11),
    "hermes deep": "<tool_call>" + "[" * N + "</tool_call>",
    "mistral markers": "[TOOL_CALLS]" * (N // 12),
    "mistral opens": "[TOOL_CALLS][" * (N // 13),
    "mistral strings": '[TOOL_CALLS]["' * (N // 14),
    "mistral v11 opens": "[TOOL_CALLS]get_weather[ARGS]{" * (N // 30),
    "python tags": "<|python_tag|>" * (N // 14),
    "bare call opens": "get_weather(" * (N // 12),
    "huge int json": '{"name": "get_weather", "parameters": {"a": ' + "9" * N + "}}",
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_returns(text: str) -> None:
    parse = parse_tool_calls(text, TOOLS)
    well_formed(parse, text)
