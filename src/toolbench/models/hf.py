"""A local Hugging Face causal LM, with concurrent requests batched into one ``generate`` call.

The runner issues one ``generate()`` per sample from many asyncio tasks. Running each alone
would leave most of the CPU/GPU idle, so a micro-batcher collects requests for a few
milliseconds (or until ``hf_batch_size`` are waiting) and runs them as a single left-padded
``model.generate`` in a worker thread, keeping the event loop free. ``torch`` and
``transformers`` are imported only when an HF model is built, so the package works without them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.models.base import ModelOptions
from toolbench.types import Generation, GenerationRequest, InfraError

log = logging.getLogger(__name__)

#: How long the first request of a batch waits for company.
BATCH_WAIT_S = 0.005

# torch's RNG is process-global: seeding and sampling must not interleave across models.
_RNG_LOCK = threading.Lock()


@dataclass
class _Pending:
    prompt_ids: list[int]
    request: GenerationRequest
    future: asyncio.Future[Generation]
    enqueued: float = field(default_factory=time.perf_counter)


def truncate_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop string, like the OpenAI API (stop not included)."""
    cut = min((i for s in stop if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


class HFModel:
    """``hf:PATH_OR_NAME``: greedy at temperature 0, else seeded sampling.

    Native tools of a chat request go to the chat template (``apply_chat_template(tools=...)``);
    the reply stays text (the template's own call syntax), parsed downstream like any reply.
    """

    cacheable = True

    def __init__(self, path_or_name: str, options: ModelOptions, name: str | None = None) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise UserError(
                "the hf: backend needs torch and transformers: pip install 'toolbench[hf]'"
            ) from None
        # ``name``: a registry entry that loads its own files (smollm2) names itself.
        self.name = name or f"hf:{path_or_name}"
        self.base_url: str | None = None
        self.batch_size = max(1, options.hf_batch_size)
        self.device = options.hf_device
        local = Path(path_or_name).expanduser()
        if not local.exists() and path_or_name.startswith(("/", ".", "~")):
            raise UserError(f"Hugging Face model directory not found: {local}")
        source = str(local) if local.exists() else path_or_name
        try:
            tokenizer = AutoTokenizer.from_pretrained(
                source, local_files_only=local.exists(), padding_side="left"
            )
            model: Any = AutoModelForCausalLM.from_pretrained(
                source, local_files_only=local.exists()
            )
        except Exception as error:  # transformers raises many kinds for a bad model folder
            reason = " ".join(str(error).split())[:300]
            raise UserError(f"cannot load Hugging Face model '{path_or_name}': {reason}") from None
        self.tokenizer: Any = tokenizer
        self.model: Any = model.to(self.device).eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            if self.tokenizer.eos_token_id is None:
                raise UserError(f"tokenizer of '{path_or_name}' has neither a pad nor an eos token")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._torch = torch
        # Only eos ends a row: generate pads finished rows after it, and a distinct pad token
        # generated mid-row is dropped by decode(skip_special_tokens=True).
        self._eos_id = self.tokenizer.eos_token_id
        self._queue: asyncio.Queue[_Pending] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiting: set[asyncio.Future[Generation]] = set()
        self._warned_tools = False
        #: Number of ``model.generate`` calls and the size of each, to check that batching works.
        self.generate_calls = 0
        self.batch_sizes: list[int] = []

    # ---- prompt formatting (event loop side; cheap) ----

    def _encode(self, request: GenerationRequest) -> list[int]:
        if request.messages is not None:
            messages = [dict(m) for m in request.messages]
            tools = request.plain_tools() or None  # no tools and an empty list: the same
            if getattr(self.tokenizer, "chat_template", None):
                if tools is not None:
                    self._check_template_shows_tools(tools)
                text = self.tokenizer.apply_chat_template(
                    messages, tools=tools, tokenize=False, add_generation_prompt=True
                )
                # The template already carries the model's special tokens.
                return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            if tools is not None:
                self._warn_tools_unseen("the tokenizer has no chat template")
            text = "\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" for m in messages)
            text += "\nassistant:"
        elif request.tools is not None:
            raise ValueError("native tools need a chat request ('messages'), not a 'prompt'")
        elif request.prompt is not None:
            text = request.prompt
        else:
            raise ValueError("GenerationRequest needs either 'prompt' or 'messages'")
        return list(self.tokenizer(text)["input_ids"])

    def _check_template_shows_tools(self, tools: list[dict[str, Any]]) -> None:
        # transformers renders any template with ``tools=``; one that never reads the variable
        # drops them silently, so the model would answer without seeing its APIs.
        template = self.tokenizer.get_chat_template(tools=tools)
        if "tools" not in template:
            self._warn_tools_unseen("its chat template does not use 'tools'")

    def _warn_tools_unseen(self, reason: str) -> None:
        if not self._warned_tools:
            self._warned_tools = True
            log.warning("%s: %s, so native tools are not shown to the model", self.name, reason)

    # ---- batching ----

    def _ensure_worker(self) -> asyncio.Queue[_Pending]:
        loop = asyncio.get_running_loop()
        worker = self._worker
        if self._queue is None or self._loop is not loop or worker is None or worker.done():
            # First use, or a new event loop (e.g. a second asyncio.run): start afresh.
            old_loop = self._loop
            if worker is not None and old_loop not in (None, loop) and not old_loop.is_closed():
                old_loop.call_soon_threadsafe(worker.cancel)
            self._loop = loop
            self._queue = asyncio.Queue()
            self._worker = loop.create_task(self._run_batches(self._queue))
        return self._queue

    async def generate(self, request: GenerationRequest) -> Generation:
        prompt_ids = self._encode(request)
        future: asyncio.Future[Generation] = asyncio.get_running_loop().create_future()
        self._waiting.add(future)
        future.add_done_callback(self._waiting.discard)
        await self._ensure_worker().put(_Pending(prompt_ids, request, future))
        return await future

    async def _run_batches(self, queue: asyncio.Queue[_Pending]) -> None:
        while True:
            batch = [await queue.get()]
            if queue.qsize() < self.batch_size - 1:
                await asyncio.sleep(BATCH_WAIT_S)
            while len(batch) < self.batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            # One generate call needs one sampling setup; max_tokens may differ (cut per row).
            groups: dict[tuple[float, int | None], list[_Pending]] = {}
            for item in batch:
                r = item.request
                sampling_key = (r.temperature, r.seed) if r.temperature > 0 else (0.0, None)
                groups.setdefault(sampling_key, []).append(item)
            for (temperature, seed), items in groups.items():
                live = [item for item in items if not item.future.done()]
                if live:
                    await self._run_group(live, temperature, seed)

    async def _run_group(self, items: list[_Pending], temperature: float, seed: int | None) -> None:
        try:
            results = await asyncio.to_thread(self._generate_batch, items, temperature, seed)
        except Exception as error:
            if len(items) > 1:
                # One bad request (e.g. a prompt longer than the context) must not fail the
                # others in its batch: run them one by one so only the culprit fails.
                for item in items:
                    await self._run_group([item], temperature, seed)
                return
            message = " ".join(str(error).split())[:300]
            if not items[0].future.done():
                items[0].future.set_exception(
                    InfraError(f"{self.name}: generation failed: {message}")
                )
            return
        for item, generation in zip(items, results, strict=True):
            if not item.future.done():
                generation.latency_s = time.perf_counter() - item.enqueued
                item.future.set_result(generation)

    # ---- the worker thread ----

    def _generate_batch(
        self, items: list[_Pending], temperature: float, seed: int | None
    ) -> list[Generation]:
        torch = self._torch
        encoded = self.tokenizer.pad(
            {"input_ids": [item.prompt_ids for item in items]}, padding=True, return_tensors="pt"
        )
        input_ids = encoded["input_ids"].to(self.device)
        attention_mask = encoded["attention_mask"].to(self.device)
        max_new = max(item.request.max_tokens for item in items)
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new,
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": self.tokenizer.eos_token_id,
        }
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature, top_k=0, top_p=1.0)
        else:
            kwargs.update(do_sample=False)
        with _RNG_LOCK, torch.inference_mode():
            if temperature > 0 and seed is not None:
                torch.manual_seed(seed)
            output = self.model.generate(
                input_ids=input_ids, attention_mask=attention_mask, **kwargs
            )
        self.generate_calls += 1
        self.batch_sizes.append(len(items))
        new_tokens = output[:, input_ids.shape[1] :].tolist()
        return [self._finish(item, row) for item, row in zip(items, new_tokens, strict=True)]

    def _finish(self, item: _Pending, row: list[int]) -> Generation:
        row = row[: item.request.max_tokens]
        finish_reason = "length"
        for index, token in enumerate(row):
            if token == self._eos_id:
                row, finish_reason = row[:index], "stop"
                break
        text = self.tokenizer.decode(row, skip_special_tokens=True)
        text, stopped = truncate_at_stop(text, item.request.stop)
        return Generation(
            text=text,
            prompt_tokens=len(item.prompt_ids),
            completion_tokens=len(row),
            finish_reason="stop" if stopped else finish_reason,
        )

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        if self._worker is not None and self._loop is loop and not self._worker.done():
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        self._worker = self._queue = None
        for future in list(self._waiting):
            if not future.done() and future.get_loop() is loop:
                future.set_exception(InfraError(f"{self.name}: model closed"))
        self._waiting.clear()
