"""HFModel's generations follow the servers' rules: stops end rows while generating, honest
token counts and finish reasons, per-row latency, context overflow before generating, tool
calls parsed, dtype in the cache's name.

Most tests replace only ``HFModel._generate_rows`` (the model call) with token ids encoded by
the tiny model's real tokenizer; the rest run the real tiny Llama's ``generate``."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

import torch

from tests.models.test_hf import WEATHER_TOOL, build_tiny_model
from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.models.hf import HFModel
from toolbench.models.spec import make_model
from toolbench.types import ContextOverflow, Generation, GenerationRequest


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-gen"), context=2048)


@pytest.fixture
def model(tiny: Path) -> HFModel:
    return HFModel(str(tiny), ModelOptions(model_args={"device": "cpu"}))


def encode(model: HFModel, text: str) -> list[int]:
    return list(model.tokenizer(text, add_special_tokens=False)["input_ids"])


def script(model: HFModel, replies: dict[str, list[int]]) -> list[list[str]]:
    """Make ``model`` answer each prompt (the word after its last "#") with ids of ``replies``;
    returns the list of batches it was called with (their prompts), as the model saw them."""
    calls: list[list[str]] = []

    def rows(items: list[Any], temperature: float, seed: int | None) -> list[list[int]]:
        texts = [model.tokenizer.decode(item.prompt_ids) for item in items]
        keys = [re.split(r"[\n<]", text.rsplit("#", 1)[-1])[0] for text in texts]
        calls.append(keys)
        return [replies[key] for key in keys]

    model._generate_rows = rows  # type: ignore[method-assign]
    return calls


async def ask(model: HFModel, *requests: GenerationRequest) -> list[Generation]:
    results = await asyncio.gather(*(model.generate(r) for r in requests))
    await model.aclose()
    return list(results)


# The Qwen 2 response template transformers serve falls back to, with this tokenizer's eos.
QWEN_RESPONSE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"\s*<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close_pattern": r"\s*(?:<\|im_end\|>|</s>)", "content": "text"},
    },
}
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if tools %}{{ tools | length }} tools{% endif %}"
    '<|im_start|>assistant{{ "\n" }}'
)


# ---- scripted generations ----


async def test_scripted_stop_eos_and_length(model: HFModel) -> None:
    eos, pad = model.tokenizer.eos_token_id, model.tokenizer.pad_token_id
    program = encode(model, "search()\n")
    rest = encode(model, "------\nTask: more")
    long = encode(model, "the quick brown fox jumps over the lazy dog")
    script(
        model,
        {
            "a": [*program, *rest, eos, pad],
            "b": [*program, eos, pad, pad, pad],
            "c": long,
        },
    )
    stops = ("------", "Task:")
    cut, ended, ran = await ask(
        model,
        GenerationRequest(prompt="#a", stop=stops, max_tokens=64),
        GenerationRequest(prompt="#b", stop=stops, max_tokens=64),
        GenerationRequest(prompt="#c", stop=stops, max_tokens=5),
    )
    # Cut as a server that returned the stop would be by the harness: the reply as generated
    # is kept beside it.
    assert (cut.text, cut.finish_reason) == ("search()\n", "stop")
    assert cut.raw_text == "search()\n------\nTask: more"
    assert cut.completion_tokens == len(program) + len(encode(model, "------"))
    assert (ended.text, ended.finish_reason, ended.raw_text) == ("search()\n", "stop", None)
    assert ended.completion_tokens == len(program) + 1  # the eos was generated too
    assert ran.finish_reason == "length" and ran.completion_tokens == 5
    assert ran.text == model.tokenizer.decode(long[:5])
    assert {g.batch_size for g in (cut, ended, ran)} == {3}


async def test_each_row_has_its_own_latency(model: HFModel) -> None:
    ids = [*encode(model, "hi"), model.tokenizer.eos_token_id]

    def rows(items: list[Any], temperature: float, seed: int | None) -> list[list[int]]:
        # The first row ended a quarter second after it was enqueued; the other never said.
        items[0].finished = items[0].enqueued + 0.25
        return [ids for _ in items]

    model._generate_rows = rows  # type: ignore[method-assign]
    first, second = await ask(
        model, GenerationRequest(prompt="one"), GenerationRequest(prompt="two")
    )
    assert first.latency_s == pytest.approx(0.25)
    assert second.latency_s > 0 and first.batch_size == second.batch_size == 2


async def test_tool_calls_in_a_common_format_are_parsed(model: HFModel) -> None:
    model.tokenizer.chat_template = CHATML
    reply = 'Let me look.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}'
    reply += "</tool_call>"
    script(model, {"weather?": [*encode(model, reply), model.tokenizer.eos_token_id]})
    messages = ({"role": "user", "content": "#weather?"},)
    (generation,) = await ask(
        model, GenerationRequest(messages=messages, tools=(WEATHER_TOOL,), max_tokens=200)
    )
    assert generation.finish_reason == "tool_calls"
    assert generation.tool_calls == [
        {
            "id": "call_0",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        }
    ]
    assert generation.text == "Let me look."


async def test_a_reply_without_calls_stays_as_it_was(model: HFModel) -> None:
    model.tokenizer.chat_template = CHATML
    script(model, {"hi": [*encode(model, " hello there "), model.tokenizer.eos_token_id]})
    messages = ({"role": "user", "content": "#hi"},)
    (generation,) = await ask(model, GenerationRequest(messages=messages, tools=(WEATHER_TOOL,)))
    assert generation.tool_calls == [] and generation.finish_reason == "stop"
    assert generation.text == " hello there "


async def test_a_response_template_is_used_when_the_tokenizer_has_one(model: HFModel) -> None:
    model.tokenizer.chat_template = CHATML
    model.tokenizer.response_template = QWEN_RESPONSE
    reply = (
        "Checking.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
    )
    ids = [*encode(model, reply), model.tokenizer.eos_token_id]
    model._generate_rows = lambda items, t, s: [ids for _ in items]  # type: ignore[method-assign]
    messages = ({"role": "user", "content": "weather?"},)
    (generation,) = await ask(
        model, GenerationRequest(messages=messages, tools=(WEATHER_TOOL,), max_tokens=400)
    )
    assert generation.text == "Checking."
    assert [c["function"]["arguments"] for c in generation.tool_calls] == [
        '{"city": "Oslo"}',
        '{"city": "Rome"}',
    ]
    assert [c["id"] for c in generation.tool_calls] == ["call_0", "call_1"]
    assert generation.finish_reason == "tool_calls"


# ---- context overflow ----


async def test_overflow_is_raised_before_generating_for_that_request_only(
    model: HFModel,
) -> None:
    assert model.context_length == 2048
    seen: list[list[int]] = []

    def spy(items: list[Any], temperature: float, seed: int | None) -> list[list[int]]:
        seen.extend(item.prompt_ids for item in items)
        return [[model.tokenizer.eos_token_id] for _ in items]

    model._generate_rows = spy  # type: ignore[method-assign]
    long_prompt = "the quick brown fox " * 200
    size = len(model._encode(GenerationRequest(prompt=long_prompt)))
    assert 1900 < size < 2040
    fits = GenerationRequest(prompt=long_prompt, max_tokens=2048 - size)
    too_long = GenerationRequest(prompt=long_prompt, max_tokens=2049 - size)
    results = await asyncio.gather(
        model.generate(GenerationRequest(prompt="hello", max_tokens=4)),
        model.generate(too_long),
        model.generate(fits),
        return_exceptions=True,
    )
    await model.aclose()
    overflow = results[1]
    assert isinstance(overflow, ContextOverflow)
    assert (overflow.prompt_tokens, overflow.max_tokens, overflow.context_length) == (
        size,
        2049 - size,
        2048,
    )
    assert f"{size} tokens" in str(overflow) and "2048" in str(overflow)
    assert isinstance(results[0], Generation) and isinstance(results[2], Generation)
    assert len(seen) == 2  # the overflowing prompt never reached the model


# ---- the real tiny model ----


def ascii_stop(text: str) -> str:
    """Two printable ASCII characters of ``text`` past its start, to stop at."""
    for index in range(2, len(text) - 1):
        pair = text[index : index + 2]
        if pair.isascii() and pair.isprintable() and pair.strip() == pair:
            return pair
    pytest.skip("the random model wrote no ASCII pair to stop at")


async def test_a_stop_ends_the_row_inside_generate(model: HFModel) -> None:
    lengths: list[int] = []
    real = model._generate_rows

    def measured(items: list[Any], temperature: float, seed: int | None) -> list[list[int]]:
        rows = real(items, temperature, seed)
        lengths.extend(len(row) for row in rows)
        return rows

    model._generate_rows = measured  # type: ignore[method-assign]
    full = await model.generate(GenerationRequest(prompt="hello world", max_tokens=40))
    stop = ascii_stop(full.text)
    cut = await model.generate(GenerationRequest(prompt="hello world", max_tokens=40, stop=(stop,)))
    await model.aclose()
    assert cut.text == full.text[: full.text.index(stop)] and cut.finish_reason == "stop"
    assert cut.raw_text is not None and cut.raw_text.startswith(cut.text + stop)
    # generate itself stopped: it returned only the tokens up to the stop.
    assert lengths[1] == cut.completion_tokens < lengths[0] == full.completion_tokens


async def test_rows_end_on_their_own_and_match_one_by_one(model: HFModel) -> None:
    finished: list[list[float | None]] = []
    real = model._generate_rows

    def noted(items: list[Any], temperature: float, seed: int | None) -> list[list[int]]:
        rows = real(items, temperature, seed)
        finished.append([item.finished for item in items])
        return rows

    model._generate_rows = noted  # type: ignore[method-assign]
    probe = await model.generate(GenerationRequest(prompt="the quick", max_tokens=16))
    stop = ascii_stop(probe.text)
    requests = [
        GenerationRequest(prompt="the quick", max_tokens=16, stop=(stop,)),
        GenerationRequest(prompt="hello hello 3", max_tokens=3, stop=(stop,)),
        GenerationRequest(prompt="set_min_price(", max_tokens=16, stop=(stop,)),
    ]
    batched = await asyncio.gather(*(model.generate(r) for r in requests))
    single = [await model.generate(r) for r in requests]
    await model.aclose()
    assert model.batch_sizes[1:] == [3, 1, 1, 1]
    assert [(g.text, g.completion_tokens, g.finish_reason) for g in batched] == [
        (g.text, g.completion_tokens, g.finish_reason) for g in single
    ]
    assert [g.batch_size for g in batched] == [3, 3, 3]
    assert batched[1].completion_tokens <= 3
    moments = finished[1]
    assert all(moment is not None for moment in moments)
    # The 3-token row ended before a row that ran longer.
    longest = max(range(3), key=lambda i: batched[i].completion_tokens)
    if batched[longest].completion_tokens > batched[1].completion_tokens:
        assert moments[1] < moments[longest]  # type: ignore[operator]


async def test_different_stops_never_share_a_generate_call(model: HFModel) -> None:
    requests = [
        GenerationRequest(prompt="hello", max_tokens=3, stop=("a", "b")),
        GenerationRequest(prompt="hello 2", max_tokens=3, stop=("x",)),
        GenerationRequest(prompt="hello 3", max_tokens=3, stop=("b", "a", "")),
        GenerationRequest(prompt="hello 4", max_tokens=3),
    ]
    await ask(model, *requests)
    assert sorted(model.batch_sizes) == [1, 1, 2]


async def test_dtype_changes_the_name_and_the_cache_key(tiny: Path, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    plain = make_model(f"hf:{tiny}", ModelOptions(cache_path=cache, model_args={"device": "cpu"}))
    half = make_model(
        f"hf:{tiny}",
        ModelOptions(cache_path=cache, model_args={"device": "cpu", "dtype": "bfloat16"}),
    )
    assert plain.name == f"hf:{tiny}" and half.name == f"hf:{tiny}@bfloat16"
    assert half.inner.dtype == "bfloat16"  # type: ignore[attr-defined]
    assert half.inner.model.dtype == torch.bfloat16  # type: ignore[attr-defined]
    request = GenerationRequest(prompt="hello", max_tokens=4)
    first = await plain.generate(request)
    other = await half.generate(request)
    again = await half.generate(request)
    await plain.aclose()
    await half.aclose()
    assert not first.cached and not other.cached and again.cached


def test_default_device_and_a_missing_gpu(tiny: Path) -> None:
    model = HFModel(str(tiny), ModelOptions())
    assert model.device == ("cuda" if torch.cuda.is_available() else model.device)
    assert str(next(model.model.parameters()).device).startswith(model.device)
    if torch.cuda.is_available():
        return
    with pytest.raises(UserError, match="--hf-device cuda: torch sees no CUDA GPU"):
        HFModel(str(tiny), ModelOptions(model_args={"device": "cuda"}))
