"""Property tests of the API-Bank text parsers: what is written can be read back, and no input
makes them fail with anything but a ``UserError``."""

from __future__ import annotations

import json
import keyword
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.aware.sources.apibank import load_apibank, parse_dialogue, parse_expected_output
from toolbench.errors import UserError

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name)
)
VALUES = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.booleans(),
    st.lists(st.text(max_size=10), max_size=4),
)
#: What API-Bank itself writes: every value in single quotes, nothing escaped.
PLAIN_TEXT = st.text(
    alphabet=st.characters(blacklist_characters="'\\\r\n", blacklist_categories=("Cs",)),
    max_size=30,
)


def _request(name: str, parts: list[str]) -> str:
    return f"API-Request: [{name}({', '.join(parts)})]"


@settings(deadline=None, max_examples=40)
@given(NAMES, st.dictionaries(NAMES, VALUES, max_size=5))
def test_repr_written_arguments_round_trip(name: str, arguments: dict[str, object]) -> None:
    text = _request(name, [f"{key}={value!r}" for key, value in arguments.items()])
    gold, call = parse_expected_output(text)
    assert call.name == name
    assert call.kwargs == arguments
    assert gold == text[len("API-Request: [") : -1]


@settings(deadline=None, max_examples=40)
@given(NAMES, st.dictionaries(NAMES, PLAIN_TEXT, max_size=5))
def test_api_bank_quoting_round_trips(name: str, arguments: dict[str, str]) -> None:
    text = _request(name, [f"{key}='{value}'" for key, value in arguments.items()])
    assert parse_expected_output(text)[1].kwargs == arguments


@settings(deadline=None)
@given(st.text(max_size=200))
def test_expected_output_parser_fails_only_with_user_errors(text: str) -> None:
    try:
        gold, call = parse_expected_output(text)
    except UserError as exc:
        assert "\n" not in str(exc)
    else:
        assert call.name and isinstance(gold, str)


@settings(deadline=None)
@given(st.text(alphabet="User:AI-Rqst[]()='\" \n\r,x1", max_size=200))
def test_dialogue_parser_fails_only_with_user_errors(text: str) -> None:
    try:
        turns = parse_dialogue(text)
    except UserError as exc:
        assert "\n" not in str(exc)
    else:
        assert turns


ROLE_PREFIXES = ("User:", "AI:", "API-Request:", "API:")
LINE = st.text(
    alphabet=st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs", "Zl", "Zp")),
    min_size=1,
    max_size=30,
).filter(lambda line: not line.startswith(ROLE_PREFIXES) and line.strip() == line)
UTTERANCE = st.lists(LINE, min_size=1, max_size=3).map("\n".join)
TURNS = st.lists(st.tuples(st.sampled_from(["user", "assistant"]), UTTERANCE), min_size=1)


@settings(deadline=None, max_examples=40)
@given(TURNS)
def test_written_dialogues_read_back_turn_by_turn(turns: list[tuple[str, str]]) -> None:
    prefix = {"user": "User: ", "assistant": "AI: "}
    text = "".join(f"{prefix[role]}{content}\n" for role, content in turns)
    parsed = parse_dialogue(text + "Generate API Request:\n")
    assert [(turn.role, turn.content) for turn in parsed] == turns


JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
DESCRIPTION = st.fixed_dictionaries(
    {"name": st.one_of(st.text(max_size=8), st.integers())},
    optional={
        "description": JSON_SCALARS,
        "input_parameters": st.one_of(
            JSON_SCALARS,
            st.dictionaries(
                st.text(max_size=5),
                st.one_of(
                    JSON_SCALARS,
                    st.dictionaries(st.sampled_from(["type", "description"]), JSON_SCALARS),
                ),
                max_size=3,
            ),
        ),
    },
)
RECORD = st.fixed_dictionaries(
    {},
    optional={
        "file": JSON_SCALARS,
        "id": JSON_SCALARS,
        "instruction": st.one_of(
            JSON_SCALARS,
            st.lists(DESCRIPTION, max_size=3).map(
                lambda apis: "API descriptions:\n" + "\n".join(json.dumps(a) for a in apis)
            ),
        ),
        "input": st.one_of(JSON_SCALARS, st.sampled_from(["User: hi\nGenerate API Request:\n"])),
        "expected_output": st.one_of(
            JSON_SCALARS, st.sampled_from(["API-Request: [a(x='1')]", "API-Request: [A()]"])
        ),
    },
)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.one_of(RECORD, JSON_SCALARS), max_size=3))
def test_the_loader_fails_only_with_user_errors(records: list[object]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "level-1-api.json"
        path.write_text(json.dumps(records))
        try:
            instances = load_apibank(path)
        except UserError as exc:
            assert str(exc).startswith(str(path)) and "\n" not in str(exc)
        else:
            assert all(i.label == "complete" for i in instances)
