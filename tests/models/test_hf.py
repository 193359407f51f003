"""HFModel on a tiny random Llama saved to disk: offline loading, batching, stop strings."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.models.cache import CachedModel
from toolbench.models.hf import HFModel, truncate_at_stop
from toolbench.models.spec import make_model
from toolbench.types import GenerationRequest, InfraError

CORPUS = [
    "hello world",
    "the quick brown fox jumps over the lazy dog",
    "user: find homes in Austin\nassistant: search(city='Austin')",
    "set_min_price(100000)\nset_max_price(500000)\nsearch()",
]


def build_tiny_model(folder: Path, context: int = 256) -> Path:
    """A 2-layer Llama with random weights and a byte-level BPE tokenizer, saved to ``folder``;
    ``context`` is its ``max_position_embeddings``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<pad>", "<s>", "</s>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(CORPUS * 5, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
    )
    fast.save_pretrained(folder)
    config = LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=len(fast),
        max_position_embeddings=context,
        pad_token_id=fast.pad_token_id,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
    )
    torch.manual_seed(1234)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


def prompts(n: int) -> list[GenerationRequest]:
    # Different lengths on purpose: batching must left-pad correctly.
    return [
        GenerationRequest(prompt="hello " * (1 + i % 4) + f"{i}", max_tokens=6) for i in range(n)
    ]


async def test_greedy_generation_is_deterministic(tiny: Path) -> None:
    model = make_model(f"hf:{tiny}", ModelOptions())
    assert isinstance(model, HFModel) and model.name == f"hf:{tiny}" and model.cacheable
    first = await model.generate(GenerationRequest(prompt="hello world", max_tokens=8))
    again = await model.generate(GenerationRequest(prompt="hello world", max_tokens=8))
    await model.aclose()
    reloaded = make_model(f"hf:{tiny}", ModelOptions())
    third = await reloaded.generate(GenerationRequest(prompt="hello world", max_tokens=8))
    await reloaded.aclose()
    assert first.text == again.text == third.text
    assert first.prompt_tokens > 0 and first.completion_tokens <= 8
    assert first.finish_reason in ("stop", "length") and first.latency_s > 0


async def test_concurrent_calls_are_batched_and_match_one_by_one(tiny: Path) -> None:
    model = make_model(f"hf:{tiny}", ModelOptions(model_args={"batch_size": 8}))
    assert isinstance(model, HFModel)
    batched = await asyncio.gather(*(model.generate(r) for r in prompts(8)))
    assert model.generate_calls < 8
    assert model.batch_sizes == [8]
    single = [await model.generate(r) for r in prompts(8)]
    await model.aclose()
    assert model.batch_sizes[1:] == [1] * 8
    assert [g.text for g in batched] == [g.text for g in single]
    assert [g.prompt_tokens for g in batched] == [g.prompt_tokens for g in single]


async def test_batch_size_limit_and_mixed_max_tokens(tiny: Path) -> None:
    model = HFModel(str(tiny), ModelOptions(model_args={"batch_size": 4}))
    requests = [GenerationRequest(prompt=f"the quick {i}", max_tokens=2 + i % 3) for i in range(10)]
    results = await asyncio.gather(*(model.generate(r) for r in requests))
    await model.aclose()
    assert max(model.batch_sizes) <= 4 and sum(model.batch_sizes) == 10
    assert model.generate_calls <= 4
    assert all(g.completion_tokens <= r.max_tokens for g, r in zip(results, requests, strict=True))


async def test_stop_strings_truncate(tiny: Path) -> None:
    model = HFModel(str(tiny), ModelOptions())
    full = await model.generate(GenerationRequest(prompt="hello world", max_tokens=12))
    assert len(full.text) >= 4, "the random model should produce some text"
    stop = full.text[2:4]
    cut = await model.generate(GenerationRequest(prompt="hello world", max_tokens=12, stop=(stop,)))
    await model.aclose()
    assert cut.text == full.text[: full.text.index(stop)]
    assert cut.finish_reason == "stop"


def test_truncate_at_stop_takes_the_earliest() -> None:
    assert truncate_at_stop("abc\nTask: x\n---", ("---", "\n")) == ("abc", True)
    assert truncate_at_stop("abc", ("x", "")) == ("abc", False)


async def test_seeded_sampling_is_reproducible(tiny: Path) -> None:
    model = HFModel(str(tiny), ModelOptions())
    request = GenerationRequest(prompt="hello", max_tokens=8, temperature=0.9, seed=7)
    first = await model.generate(request)
    second = await model.generate(request)
    await model.aclose()
    assert first.text == second.text


async def test_chat_uses_template_when_present_else_role_lines(tiny: Path) -> None:
    model = HFModel(str(tiny), ModelOptions())
    messages = ({"role": "user", "content": "hello"},)
    plain = model._encode(GenerationRequest(messages=messages))
    assert plain == model.tokenizer("user: hello\nassistant:")["input_ids"]
    model.tokenizer.chat_template = "{% for m in messages %}<<{{ m['content'] }}>>{% endfor %}"
    templated = model._encode(GenerationRequest(messages=messages))
    assert templated == model.tokenizer("<<hello>>", add_special_tokens=False)["input_ids"]
    generation = await model.generate(GenerationRequest(messages=messages, max_tokens=4))
    await model.aclose()
    assert generation.prompt_tokens == len(templated)


async def test_cached_hf_model(tiny: Path, tmp_path: Path) -> None:
    model = make_model(f"hf:{tiny}", ModelOptions(cache_path=tmp_path / "c.sqlite"))
    assert isinstance(model, CachedModel) and isinstance(model.inner, HFModel)
    first = await model.generate(GenerationRequest(prompt="hello", max_tokens=4))
    second = await model.generate(GenerationRequest(prompt="hello", max_tokens=4))
    await model.aclose()
    assert second.cached and second.text == first.text and model.inner.generate_calls == 1


async def test_works_again_in_a_new_event_loop(tiny: Path) -> None:
    model = HFModel(str(tiny), ModelOptions())
    first = await model.generate(GenerationRequest(prompt="hello", max_tokens=4))

    def in_other_loop() -> str:
        return asyncio.run(model.generate(GenerationRequest(prompt="hello", max_tokens=4))).text

    assert await asyncio.to_thread(in_other_loop) == first.text
    await model.aclose()


def test_missing_model_directory_is_a_user_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(UserError) as caught:
        make_model(f"hf:{missing}", ModelOptions())
    assert str(caught.value) == (
        f"--model hf:{missing}: no model folder at {missing} (hf: loads a local folder, never "
        "the hub); give the folder's path"
    )


def test_a_hub_name_is_refused_with_how_to_download_it() -> None:
    """``hf:`` reads a folder; a name of the hub is never looked up (nothing is fetched)."""
    with pytest.raises(UserError) as caught:
        make_model("hf:HuggingFaceTB/SmolLM2-135M", ModelOptions())
    assert str(caught.value).endswith(
        "download it first (hf download HuggingFaceTB/SmolLM2-135M --local-dir "
        "models/SmolLM2-135M) and give --model hf:models/SmolLM2-135M"
    )


def test_a_file_is_not_a_model_folder(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"x")
    with pytest.raises(UserError, match=r"model.safetensors is a file; give the model's folder"):
        make_model(f"hf:{tmp_path / 'model.safetensors'}", ModelOptions())


def test_unloadable_directory_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(UserError, match="cannot load Hugging Face model"):
        make_model(f"hf:{tmp_path}", ModelOptions())


async def test_a_failing_request_does_not_fail_its_batch(tiny: Path) -> None:
    model = HFModel(str(tiny), ModelOptions(model_args={"batch_size": 8}))
    real = model._generate_batch

    def fragile(items: list[Any], temperature: float, seed: int | None) -> list[Any]:
        if any(item.request.prompt == "BAD" for item in items):
            raise RuntimeError("index out of range in self")
        return real(items, temperature, seed)

    model._generate_batch = fragile  # type: ignore[method-assign]
    requests = [*prompts(3), GenerationRequest(prompt="BAD", max_tokens=4), *prompts(3)]
    results = await asyncio.gather(*(model.generate(r) for r in requests), return_exceptions=True)
    await model.aclose()
    assert [isinstance(r, InfraError) for r in results] == [False] * 3 + [True] + [False] * 3
    assert "generation failed: index out of range" in str(results[3])


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
TOOL_TEMPLATE = (
    "{% if tools %}[{% for t in tools %}{{ t['function']['name'] }};{% endfor %}]{% endif %}"
    "{% for m in messages %}<<{{ m['content'] }}>>{% endfor %}"
)


async def test_tools_go_to_the_chat_template(tiny: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = HFModel(str(tiny), ModelOptions())
    messages = ({"role": "user", "content": "hello"},)
    with_tools = GenerationRequest(messages=messages, tools=(WEATHER_TOOL,), max_tokens=4)
    model.tokenizer.chat_template = TOOL_TEMPLATE
    encoded = model._encode(with_tools)
    assert (
        encoded == model.tokenizer("[get_weather;]<<hello>>", add_special_tokens=False)["input_ids"]
    )
    assert (
        model._encode(GenerationRequest(messages=messages))
        == model.tokenizer("<<hello>>", add_special_tokens=False)["input_ids"]
    )
    generation = await model.generate(with_tools)
    await model.aclose()
    assert generation.prompt_tokens == len(encoded) and generation.tool_calls == []
    assert "not shown to the model" not in caplog.text


def test_tools_a_prompt_cannot_show(tiny: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = HFModel(str(tiny), ModelOptions())
    messages = ({"role": "user", "content": "hello"},)
    request = GenerationRequest(messages=messages, tools=(WEATHER_TOOL,))
    # No template: role lines as before, with one warning that the tools are not shown.
    assert model._encode(request) == model.tokenizer("user: hello\nassistant:")["input_ids"]
    assert "no chat template" in caplog.text
    # A template that ignores tools renders without them, and warns (once per model).
    other = HFModel(str(tiny), ModelOptions())
    other.tokenizer.chat_template = "{% for m in messages %}<<{{ m['content'] }}>>{% endfor %}"
    caplog.clear()
    other._encode(request)
    other._encode(request)
    assert caplog.text.count("does not use 'tools'") == 1
    with pytest.raises(ValueError, match="native tools need a chat request"):
        model._encode(GenerationRequest(prompt="hello", tools=(WEATHER_TOOL,)))
