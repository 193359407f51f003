"""The one ``model.generate`` call of the ``hf:`` backend and its tensor handling.

Imported only when an HF model generates (torch and transformers are optional). Everything
that reads the generated ids (where a row ends, its text, its token count, its tool calls) is
plain Python in ``hf_rows`` so tests can script the ids with a real tokenizer instead.

``RowClock`` is the only stopping criterion added to ``generate``: it ends each row at the
first of its end-of-sequence tokens, its stop strings (transformers' ``StopStringCriteria``,
which catches a stop split across tokens in any way) and its own ``max_tokens``, and notes the
moment each row ended. Rows of a batch end independently: a row that hit its stop is padded
while the others go on, and the whole call ends when every row has. The noted moments give
each request its own latency instead of the batch's.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import torch
from transformers import StoppingCriteria, StoppingCriteriaList, StopStringCriteria


class RowClock(StoppingCriteria):
    """Ends a row at eos, at a stop string or at its own ``max_tokens``; notes when."""

    def __init__(
        self,
        max_tokens: Sequence[int],
        prompt_width: int,
        eos_ids: Sequence[int],
        stops: Sequence[str],
        tokenizer: Any,
    ) -> None:
        self.finished_at: list[float | None] = [None] * len(max_tokens)
        self._limits = list(max_tokens)
        self._width = prompt_width
        self._eos = list(eos_ids)
        self._stop = StopStringCriteria(tokenizer, list(stops)) if stops else None
        self._tensors: tuple[torch.Tensor, torch.Tensor] | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: Any, **kwargs: Any) -> torch.BoolTensor:
        if self._tensors is None:  # made once, on the device generate runs on
            device = input_ids.device
            self._tensors = (
                torch.tensor(self._eos, device=device),
                torch.tensor(self._limits, device=device),
            )
        eos, limits = self._tensors
        done = torch.isin(input_ids[:, -1], eos)
        if self._stop is not None:
            done = done | self._stop(input_ids, scores).to(done.device)
        done = done | (limits <= input_ids.shape[1] - self._width)
        now = time.perf_counter()
        for index in torch.nonzero(done).flatten().tolist():
            if self.finished_at[index] is None:
                self.finished_at[index] = now
        return done  # type: ignore[return-value]


def generate_rows(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Sequence[int]],
    *,
    max_tokens: Sequence[int],
    stops: Sequence[str],
    eos_ids: Sequence[int],
    temperature: float,
    seed: int | None,
    device: str,
) -> tuple[list[list[int]], list[float | None]]:
    """Left-pad ``prompts`` into one batch and generate; each row's new token ids (padding
    after the row ended included) and the moment it ended (None if it never did before the
    call returned, which cannot happen with ``max_tokens``; kept for safety)."""
    encoded = tokenizer.pad(
        {"input_ids": [list(p) for p in prompts]}, padding=True, return_tensors="pt"
    )
    input_ids = encoded["input_ids"].to(device)
    attention_mask = encoded["attention_mask"].to(device)
    clock = RowClock(max_tokens, input_ids.shape[1], eos_ids, stops, tokenizer)
    kwargs: dict[str, Any] = {
        "max_new_tokens": max(max_tokens),
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": list(eos_ids),
        "stopping_criteria": StoppingCriteriaList([clock]),
    }
    if temperature > 0:
        kwargs.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
    else:
        kwargs.update(do_sample=False)
    with torch.inference_mode():
        if temperature > 0 and seed is not None:
            torch.manual_seed(seed)
        output = model.generate(input_ids=input_ids, attention_mask=attention_mask, **kwargs)
    rows: list[list[int]] = output[:, input_ids.shape[1] :].tolist()
    return rows, clock.finished_at
