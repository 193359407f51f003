"""``--mode tools`` with a local ``hf:`` model: its chat template shows the tools, its reply's
tool calls are read back (``models.toolcalls``) and scored.

Tiny models are built in the test (a 2-layer Llama and a byte-level BPE tokenizer whose chat
template renders ``tools``). Only ``HFModel._generate_rows``, the seam that runs the network, is
replaced: it answers with token ids encoded by the model's own tokenizer, so the prompt
template, the decoding, the end-of-sequence handling and the tool-call parsing are the real
ones. One end-to-end run through the CLI answers every request with the oracle's calls written
as Hermes ``<tool_call>`` blocks and must score 1.000; recorded replies in the four formats
(Hermes, Llama 3 JSON, Mistral, pythonic) come back as ``Generation.tool_calls``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from toolbench.models.base import ModelOptions
from toolbench.models.hf import HFModel
from toolbench.types import GenerationRequest

# ChatML with Qwen 2.5's way of offering tools and writing calls (our wording).
HERMES_TEMPLATE = """
{%- if tools %}<|im_start|>system
You can call these functions, given as JSON signatures:
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
Write each call as <tool_call>{"name": <name>, "arguments": <object>}</tool_call>.<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == "assistant" and message.tool_calls %}<|im_start|>assistant
{{ message.content or "" }}
{%- for call in message.tool_calls %}
<tool_call>{"name": {{ call.function.name | tojson }}, "arguments": {{ call.function.arguments -}}
}</tool_call>
{%- endfor %}<|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

# Llama 3.1's JSON tool calling, Mistral's [AVAILABLE_TOOLS] and Llama 3.2's pythonic prompt,
# reduced to what a template needs to show the tools.
LLAMA_TEMPLATE = """
{%- for message in messages %}<|start_header_id|>{{ message.role }}<|end_header_id|>
{% if loop.last and tools %}Answer with a function call as JSON {"name": function name,
"parameters": dictionary of arguments}. Functions: {{ tools | tojson }}
{% endif %}{{ message.content }}<|eot_id|>
{%- endfor %}<|start_header_id|>assistant<|end_header_id|>
"""
MISTRAL_TEMPLATE = """<s>
{%- if tools %}[AVAILABLE_TOOLS]{{ tools | tojson }}[/AVAILABLE_TOOLS]{% endif %}
{%- for message in messages %}[INST]{{ message.content }}[/INST]{% endfor %}"""
PYTHONIC_TEMPLATE = """
{%- for message in messages %}<|header_start|>{{ message.role }}<|header_end|>
{% if loop.last and tools %}Call functions as [func_name1(param=value), ...].
Functions: {{ tools | tojson }}
{% endif %}{{ message.content }}<|eot|>
{%- endfor %}<|header_start|>assistant<|header_end|>
"""

CORPUS = [
    '{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}',
    "Find a home to rent in Austin with 2 bedrooms. Book a hotel room for two nights.",
    "[get_weather(city='Paris', days=3)] search set_location select_home_type",
]

FORMATS: dict[str, dict[str, Any]] = {
    "hermes": {
        "template": HERMES_TEMPLATE,
        "eos": "<|im_end|>",
        "special": ["<|im_start|>"],
        "plain": ["<tool_call>", "</tool_call>"],  # Qwen's are not special tokens
    },
    "llama_json": {
        "template": LLAMA_TEMPLATE,
        "eos": "<|eot_id|>",
        "special": ["<|start_header_id|>", "<|end_header_id|>", "<|python_tag|>"],
        "plain": [],
    },
    "mistral": {
        "template": MISTRAL_TEMPLATE,
        "eos": "</s>",
        "special": [
            "<s>",
            "[INST]",
            "[/INST]",
            "[AVAILABLE_TOOLS]",
            "[/AVAILABLE_TOOLS]",
            "[TOOL_CALLS]",
            "[ARGS]",
            "[CALL_ID]",
        ],
        "plain": [],
    },
    "pythonic": {
        "template": PYTHONIC_TEMPLATE,
        "eos": "<|eot|>",
        "special": ["<|header_start|>", "<|header_end|>", "<|python_start|>", "<|python_end|>"],
        "plain": [],
    },
}


def build_tool_model(folder: Path, syntax: str) -> Path:
    """A 2-layer Llama with random weights and a tokenizer whose template shows ``tools``."""
    import torch
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    spec = FORMATS[syntax]
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<pad>", "<unk>", spec["eos"], *spec["special"]],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(CORPUS * 5, trainer)
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in spec["plain"]])
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token=spec["eos"], unk_token="<unk>"
    )
    fast.chat_template = spec["template"]
    fast.model_max_length = 1 << 20
    fast.save_pretrained(folder)
    config = LlamaConfig(
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=len(fast),
        # Tool schemas are long in a 400-token vocabulary; the model never runs here.
        max_position_embeddings=1 << 20,
        pad_token_id=fast.pad_token_id,
        eos_token_id=fast.eos_token_id,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tool-models")
    return {syntax: build_tool_model(root / syntax, syntax) for syntax in FORMATS}


Reply = Callable[[HFModel, GenerationRequest, str], str]


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Reply], list[str]]]:
    """Replace the model call: each row is ``reply(model, request, prompt)`` encoded by the
    model's tokenizer, then end-of-sequence and padding (as ``generate`` pads a batch).
    Returns the list the decoded prompts are appended to."""

    def install(reply: Reply) -> list[str]:
        prompts: list[str] = []

        def rows(self: HFModel, items: Sequence[Any], temperature: float, seed: Any) -> Any:
            out = []
            for item in items:
                prompt = self.tokenizer.decode(item.prompt_ids)
                prompts.append(prompt)
                text = reply(self, item.request, prompt)
                ids = self.tokenizer.encode(text, add_special_tokens=False)
                out.append([*ids, self.tokenizer.eos_token_id, self.tokenizer.pad_token_id])
            return out

        monkeypatch.setattr(HFModel, "_generate_rows", rows)
        return prompts

    yield install


def hermes_oracle(model: HFModel, request: GenerationRequest, prompt: str) -> str:
    """The gold's calls, written the way a Qwen model writes them; no call on later turns."""
    blocks = []
    for call in request.ideal_tool_calls:
        function = call["function"]
        arguments = function["arguments"]
        arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        payload = {"name": function["name"], "arguments": arguments}
        blocks.append(f"<tool_call>\n{json.dumps(payload)}\n</tool_call>")
    return "\n".join(blocks) if blocks else "Done."


@pytest.mark.parametrize("task", ["home_search", "booking"])
def test_oracle_equivalent_tool_calls_from_an_hf_model_score_one(
    task: str,
    models: dict[str, Path],
    script: Callable[[Reply], list[str]],
    cli: Callable[..., CliResult],
    tmp_path: Path,
) -> None:
    prompts = script(hermes_oracle)
    out = tmp_path / "run"
    code, _, err = cli(
        "run", task, "--model", f"hf:{models['hermes']}", "--mode", "tools",
        "--limit", "6", "--out", str(out), "--concurrency", "3",
        # A 400-token vocabulary spends many tokens on a call: room for the longest gold.
        "--max-tokens", "2048",
    )  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert info["counts"][task]["scored"] == 6
    assert info["metrics"][task]["success_rate"] == 1.0
    assert f"{info['metrics'][task]['success_rate']:.3f}" == "1.000"
    for record in records:
        first, *rest = record["calls"]
        assert first["step"] == "turn-1" and first["finish_reason"] == "tool_calls"
        assert "<tool_call>" not in first["text"]  # the markup became tool calls
        assert [call["finish_reason"] for call in rest] == ["stop"]
        assert record["details"]["finished"] and record["details"]["tool_errors"] == 0
        assert all(step["result"] == "ok" for step in record["trace"])
    # The template showed the tools on turn 1, and turn 2 carried the calls and their results.
    assert all("You can call these functions" in p for p in prompts)
    later = [p for p in prompts if p.count("<|im_start|>assistant") > 1]
    assert later and all("<tool_call>" in p and "<|im_start|>tool\nok" in p for p in later)


WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}
ASK = GenerationRequest(
    messages=({"role": "user", "content": "Weather in Paris and Rome for 3 days?"},),
    tools=(WEATHER,),
    max_tokens=200,
)
PARIS, ROME = {"city": "Paris", "days": 3}, {"city": "Rome", "days": 3}

# Replies in each family's own syntax, as its chat template teaches it.
RECORDED = [
    ("hermes", 'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": '
     '{"city": "Paris", "days": 3}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", '
     '"arguments": {"city": "Rome", "days": 3}}\n</tool_call>', "Let me check."),
    ("llama_json", '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", '
     '"days": 3}}; {"name": "get_weather", "parameters": {"city": "Rome", "days": 3}}', ""),
    ("llama_json", '{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}};'
     '{"name": "get_weather", "parameters": {"city": "Rome", "days": 3}}', ""),
    ("mistral", '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}},'
     ' {"name": "get_weather", "arguments": {"city": "Rome", "days": 3}}]', ""),
    # [TOOL_CALLS] and [ARGS] are special tokens here, as in Mistral's own tokenizers: the
    # reply must be read with them, or the markers that delimit its calls are gone.
    ("mistral", '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 3}'
     '[TOOL_CALLS]get_weather[ARGS]{"city": "Rome", "days": 3}', ""),
    ("pythonic", "[get_weather(city='Paris', days=3), get_weather(city=\"Rome\", days=3)]", ""),
    ("pythonic", "<|python_start|>[get_weather(city='Paris', days=3), "
     "get_weather(city='Rome', days=3)]<|python_end|>", ""),
]  # fmt: skip


@pytest.mark.parametrize(("syntax", "reply", "content"), RECORDED)
async def test_recorded_replies_in_each_format_become_tool_calls(
    syntax: str,
    reply: str,
    content: str,
    models: dict[str, Path],
    script: Callable[[Reply], list[str]],
) -> None:
    prompts = script(lambda model, request, prompt: reply)
    model = HFModel(str(models[syntax]), ModelOptions(model_args={"device": "cpu"}))
    try:
        generation = await model.generate(ASK)
    finally:
        await model.aclose()
    assert '"get_weather"' in prompts[0]  # the template showed the tool
    assert generation.finish_reason == "tool_calls"
    assert [call["id"] for call in generation.tool_calls] == ["call_0", "call_1"]
    assert [call["function"]["name"] for call in generation.tool_calls] == ["get_weather"] * 2
    assert [json.loads(c["function"]["arguments"]) for c in generation.tool_calls] == [PARIS, ROME]
    assert generation.text == content


async def test_a_reply_without_a_call_stays_text(
    models: dict[str, Path], script: Callable[[Reply], list[str]]
) -> None:
    script(lambda model, request, prompt: "It will be sunny. [see get_weather docs]")
    model = HFModel(str(models["hermes"]), ModelOptions(model_args={"device": "cpu"}))
    try:
        generation = await model.generate(ASK)
    finally:
        await model.aclose()
    assert generation.tool_calls == [] and generation.finish_reason == "stop"
    assert generation.text == "It will be sunny. [see get_weather docs]"
