"""Reading generated rows (hf_rows): where a row ends, its text, its honest token count.

Rows are token ids encoded with the real byte-level BPE tokenizer of the tiny test model, as
``model.generate`` would return them (eos, then padding, after a row's end)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.models.test_hf import build_tiny_model
from toolbench.models.generation import cut_at_stop
from toolbench.models.hf_rows import (
    RowEnd,
    openai_calls,
    parse_reply_tools,
    read_row,
    tokens_through_stop,
    tool_names,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-rows"))


@pytest.fixture(scope="module")
def tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, local_files_only=True)


def encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def read(tokenizer: Any, row: list[int], max_tokens: int = 64, stops: tuple[str, ...] = ()) -> Any:
    return read_row(
        row,
        max_tokens=max_tokens,
        stops=stops,
        eos_ids={tokenizer.eos_token_id},
        pad_id=tokenizer.pad_token_id,
        decode=lambda ids: tokenizer.decode(list(ids), skip_special_tokens=True),
    )


def test_eos_ends_the_row_and_counts_as_generated(tokenizer: Any) -> None:
    ids = encode(tokenizer, "search(city='Austin')")
    pads = [tokenizer.pad_token_id] * 5
    end = read(tokenizer, [*ids, tokenizer.eos_token_id, *pads])
    assert end == RowEnd("search(city='Austin')", None, [*ids, tokenizer.eos_token_id], "stop")


def test_a_stop_cuts_the_text_and_counts_through_the_token_that_completed_it(
    tokenizer: Any,
) -> None:
    before = encode(tokenizer, "set_min_price(100000)\n")
    stop = encode(tokenizer, "Task:")
    after = encode(tokenizer, " find homes")
    row = [*before, *stop, *after, tokenizer.eos_token_id]
    end = read(tokenizer, row, stops=("Task:",))
    assert end.text == "set_min_price(100000)\n" and end.finish_reason == "stop"
    assert end.tokens == before + stop
    assert end.raw_text == "set_min_price(100000)\nTask: find homes"
    # The earliest of several stops wins, whichever is listed first.
    assert read(tokenizer, row, stops=("homes", "\n")).text == "set_min_price(100000)"


def test_max_tokens_is_length_and_a_longer_batch_row_is_cut(tokenizer: Any) -> None:
    ids = encode(tokenizer, "the quick brown fox jumps over the lazy dog")
    assert len(ids) > 4
    end = read(tokenizer, ids, max_tokens=4)
    assert end.finish_reason == "length" and end.tokens == ids[:4]
    assert end.text == tokenizer.decode(ids[:4])
    whole = read(tokenizer, ids, max_tokens=len(ids))
    assert whole.finish_reason == "length" and whole.text == tokenizer.decode(ids)


def test_pad_equal_to_eos_does_not_matter(tokenizer: Any) -> None:
    ids = encode(tokenizer, "hello world")
    eos = tokenizer.eos_token_id
    end = read_row(
        [*ids, eos, eos, eos],
        max_tokens=10,
        stops=(),
        eos_ids={eos},
        pad_id=eos,
        decode=lambda row: tokenizer.decode(list(row), skip_special_tokens=True),
    )
    assert end.tokens == [*ids, eos] and end.finish_reason == "stop"
    # A row that reached its own max_tokens inside a longer batch: padded with eos after.
    short = read_row(
        [*ids, eos, eos],
        max_tokens=len(ids),
        stops=(),
        eos_ids={eos},
        pad_id=eos,
        decode=lambda row: tokenizer.decode(list(row), skip_special_tokens=True),
    )
    assert short.tokens == ids and short.finish_reason == "length"


def test_a_row_ended_by_an_unseen_stop_drops_its_padding(tokenizer: Any) -> None:
    # generate ended the row (a stop that began in the prompt), then padded it.
    ids = encode(tokenizer, "hello")
    end = read(tokenizer, [*ids, tokenizer.pad_token_id, tokenizer.pad_token_id], max_tokens=8)
    assert end.tokens == ids and end.finish_reason == "stop" and end.text == "hello"


PIECES = st.sampled_from(["hello", " world", "Task:", "\n", "-", "search()", "ab", " ", "é"])


@settings(max_examples=60, deadline=None)
@given(
    pieces=st.lists(PIECES, max_size=12),
    stops=st.lists(st.sampled_from(["Task:", "\n", "--", "wor", "zz"]), max_size=3),
    max_tokens=st.integers(min_value=1, max_value=40),
    eos=st.booleans(),
)
def test_read_row_agrees_with_the_one_cut(
    tokenizer: Any, pieces: list[str], stops: list[str], max_tokens: int, eos: bool
) -> None:
    ids = encode(tokenizer, "".join(pieces))
    row = [*ids, tokenizer.eos_token_id] if eos else ids
    end = read(tokenizer, row, max_tokens=max_tokens, stops=tuple(stops))
    kept = row[:max_tokens]
    ended = tokenizer.eos_token_id in kept
    body = kept[: kept.index(tokenizer.eos_token_id)] if ended else kept
    generated = tokenizer.decode(body, skip_special_tokens=True)
    text, was_cut = cut_at_stop(generated, stops)
    assert end.text == text
    assert end.tokens == kept[: len(end.tokens)]
    if was_cut:
        assert end.finish_reason == "stop" and end.raw_text == generated
        # The counted tokens show the stop; one fewer does not (the decode of these ASCII
        # pieces grows with its prefix).
        shown = tokenizer.decode(end.tokens, skip_special_tokens=True)
        assert cut_at_stop(shown, stops)[1]
        assert not cut_at_stop(tokenizer.decode(end.tokens[:-1]), stops)[1]
    elif ended:
        assert end.finish_reason == "stop" and end.tokens[-1] == tokenizer.eos_token_id
    else:
        # Shorter than max_tokens without eos: generate ended it (a stop the text cannot show).
        assert end.tokens == kept
        assert end.finish_reason == ("length" if len(kept) == max_tokens else "stop")


def test_tokens_through_stop_is_the_first_prefix_holding_it(tokenizer: Any) -> None:
    ids = encode(tokenizer, "abc--def--")
    count = tokens_through_stop(ids, ("--",), lambda row: tokenizer.decode(list(row)))
    assert "--" in tokenizer.decode(ids[:count]) and "--" not in tokenizer.decode(ids[: count - 1])


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def test_tool_names_skips_malformed_tools() -> None:
    assert tool_names([WEATHER, {"type": "function"}, {"function": {"name": 3}}]) == ["get_weather"]


def test_openai_calls_normalises_transformers_output() -> None:
    parsed = [
        {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
        {"type": "function", "function": {"name": 7}},
        "junk",
        {"type": "function", "function": {"name": "noop", "arguments": '{"a": 1}'}},
        {"type": "function", "function": {"name": "bad", "arguments": {"x": float("nan")}}},
    ]
    assert openai_calls(parsed) == [
        {
            "id": "call_0",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        },
        {"id": "call_1", "type": "function", "function": {"name": "noop", "arguments": '{"a": 1}'}},
    ]
    assert openai_calls(None) == [] and openai_calls({"a": 1}) == []


def test_a_failing_response_template_falls_back_to_the_formats(tokenizer: Any) -> None:
    reply = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    ids = encode(tokenizer, reply)
    end = RowEnd(reply, None, ids, "stop")

    class Broken:
        response_template: dict[str, Any] = {"version": 99}  # noqa: RUF012

        def parse_response(self, *args: Any, **kwargs: Any) -> Any:
            raise ValueError("Unsupported response_template version: 99")

        def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
            return str(tokenizer.decode(ids, skip_special_tokens=skip_special_tokens))

    content, calls = parse_reply_tools(Broken(), end, [], [WEATHER])
    assert content == "" and [c["function"]["name"] for c in calls] == ["get_weather"]
    # No call in a plain reply: the text stays exactly as it was (not stripped).
    plain = RowEnd("  no tools needed\n", None, [], "stop")
    assert parse_reply_tools(tokenizer, plain, [], [WEATHER]) == ("  no tools needed\n", [])


def test_call_markers_that_are_special_tokens_still_delimit_calls(folder: Path) -> None:
    from transformers import AutoTokenizer

    # As in Mistral's tokenizers: [TOOL_CALLS] and [ARGS] are special tokens, which a decode
    # with skip_special_tokens=True drops.
    mistral = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    mistral.add_special_tokens({"additional_special_tokens": ["[TOOL_CALLS]", "[ARGS]"]})
    reply = '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}'
    ids = [*mistral.encode(reply, add_special_tokens=False), mistral.eos_token_id]
    end = read(mistral, ids)
    assert end.text == 'get_weather{"city": "Oslo"}'  # what the text alone still shows
    content, calls = parse_reply_tools(mistral, end, [], [WEATHER], {mistral.eos_token_id})
    assert content == ""
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("get_weather", '{"city": "Oslo"}')
    ]
