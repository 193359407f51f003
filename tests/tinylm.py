"""A tiny real causal LM and tokenizer, built in a test and saved to a folder (no downloads).

Backend tests need a model that every serving path can load the way it loads a real one:
``hf:DIR`` through ``AutoModelForCausalLM``, ``transformers serve DIR`` through its own model
manager. Random weights are enough to compare the paths with each other (the same weights must
give the same tokens everywhere), but the tokenizer must be a real one: a byte-level BPE
trained here on the home_search API docs, demonstrations and queries (so its prompts are a
few hundred tokens, not thousands of bytes), with ChatML special tokens and a ChatML chat
template whose end of turn is the end-of-sequence token, as SmolLM2-Instruct has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import toolbench.tasks.home_search as home_search_package

#: The chat template (ChatML, as SmolLM2-Instruct and Qwen use): a turn ends with ``<|im_end|>``,
#: the tokenizer's end-of-sequence token, so a chat reply ends where the model writes it.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
PAD, BOS, EOS = "<|pad|>", "<|im_start|>", "<|im_end|>"
SPECIAL_TOKENS = [PAD, BOS, EOS]
#: Short texts the BPE should know as a few tokens: the harness's own prompt words and stops.
EXTRA_CORPUS = [
    "You can call these API functions:",
    "Here are example tasks, each followed by the action that completes it:",
    "You complete tasks by writing the action that calls the given API. "
    "Reply with the action only: no explanation, no extra text.",
    "-------------\nTask: \nAction:\n------\n",
    "```python\nAPI.search()\n```",
]


def home_search_corpus() -> list[str]:
    """Every text file of home_search's data (docs, demonstrations, test queries)."""
    data = Path(home_search_package.__file__).parent / "data"
    texts = [path.read_text() for path in sorted(data.rglob("*")) if path.is_file()]
    return texts + EXTRA_CORPUS


def build_tokenizer(folder: Path, vocab_size: int = 800) -> Any:
    """A byte-level BPE ``PreTrainedTokenizerFast`` (any text encodes; nothing is unknown)
    with a ChatML template, saved to ``folder``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(home_search_corpus(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token=PAD, bos_token=BOS, eos_token=EOS
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    return fast


def build_tiny_lm(
    folder: Path,
    *,
    seed: int = 0,
    max_position_embeddings: int = 4096,
    lm_head_scale: float = 1.0,
    boost: dict[str, float] | None = None,
) -> Path:
    """A 2-layer Llama with seeded random weights and the tokenizer above, saved to ``folder``.

    ``lm_head_scale`` multiplies the output projection: greedy decoding of random weights
    picks between nearly equal logits, and two code paths that compute them in a different
    order (a batch, another attention kernel) could round to different tokens; scaled up, the
    best token wins by a margin no rounding reaches. ``boost`` multiplies the output rows of
    the given tokens (as the tokenizer spells them) too: a random model that writes ``--``
    more often writes a stop sequence (``------``) now and then, as a real one does."""
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    tokenizer = build_tokenizer(folder)
    config = LlamaConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        vocab_size=len(tokenizer),
        max_position_embeddings=max_position_embeddings,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=False,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    with torch.no_grad():
        model.lm_head.weight.mul_(lm_head_scale)
        vocab = tokenizer.get_vocab()
        for token, factor in (boost or {}).items():
            if token not in vocab:
                raise ValueError(f"the tiny tokenizer has no token {token!r}")
            model.lm_head.weight[vocab[token]] *= factor
    model.generation_config = GenerationConfig(
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        do_sample=False,
    )
    model.save_pretrained(folder)
    return folder
