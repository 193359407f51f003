"""A local Hugging Face causal LM, with concurrent requests batched into one ``generate`` call.

The runner issues one ``generate()`` per sample from many asyncio tasks. Running each alone
would leave most of the CPU/GPU idle, so a micro-batcher collects requests for a few
milliseconds (or until ``batch_size`` are waiting) and runs them as left-padded
``model.generate`` calls in a worker thread, keeping the event loop free. One call serves
requests that share a sampling setup and stop sequences (``_group_key``).

A generation here follows the same rules as one from an OpenAI-compatible server, so a score
does not depend on the backend:

- stop sequences end a row *while* generating (``hf_torch.RowClock``), each row on its own;
  the text excludes the stop, ``completion_tokens`` counts what the row really generated and
  ``finish_reason`` is ``stop`` or ``length`` (``hf_rows.read_row``);
- a prompt that leaves no room for ``max_tokens`` in the context window raises
  ``ContextOverflow`` before anything runs (``hf_setup.context_length_of``), for that request
  only;
- in tools mode the reply's tool calls are parsed (``hf_rows.parse_reply_tools``) into
  ``Generation.tool_calls``, ``finish_reason`` ``tool_calls``;
- each request's ``latency_s`` runs from its enqueueing to the end of its own row, and
  ``batch_size`` says how many rows shared its ``generate`` call.

The device (``--hf-device``) and weight dtype (``--hf-dtype``) are chosen in ``hf_setup``; a
dtype other than float32 is part of the model's name, which the response cache keys on.
``torch`` and ``transformers`` are imported only when an HF model is built, so the package
works without them. ``_generate_rows`` is the only method that runs the model: tests replace
it with scripted token ids to exercise everything around it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from toolbench.errors import UserError
from toolbench.models import hf_setup
from toolbench.models.base import ModelOptions
from toolbench.models.generation import cut_at_stop
from toolbench.models.hf_rows import RowEnd, parse_reply_tools, read_row
from toolbench.types import ContextOverflow, Generation, GenerationRequest, InfraError

log = logging.getLogger(__name__)

#: How long the first request of a batch waits for company.
BATCH_WAIT_S = 0.005

# torch's RNG is process-global: seeding and sampling must not interleave across models.
_RNG_LOCK = threading.Lock()

#: Requests that can share one ``generate`` call: temperature, seed, stop sequences.
GroupKey = tuple[float, "int | None", tuple[str, ...]]


@dataclass
class _Pending:
    prompt_ids: list[int]
    request: GenerationRequest
    future: asyncio.Future[Generation]
    enqueued: float = field(default_factory=time.perf_counter)
    #: When its row ended inside ``generate`` (set by ``_generate_rows``); None: unknown.
    finished: float | None = None


def truncate_at_stop(text: str, stop: tuple[str, ...]) -> tuple[str, bool]:
    """Cut ``text`` at the earliest stop string, like the OpenAI API (stop not included)."""
    return cut_at_stop(text, stop)


def _group_key(request: GenerationRequest) -> GroupKey:
    """One ``generate`` call needs one sampling setup and one set of stop strings (a row must
    not stop at another row's stop); ``max_tokens`` may differ (each row ends at its own)."""
    stops = tuple(sorted({stop for stop in request.stop if stop}))
    if request.temperature > 0:
        return (request.temperature, request.seed, stops)
    return (0.0, None, stops)


def _eos_ids(tokenizer: Any, hf_model: Any) -> list[int]:
    """Every id that ends a reply: the tokenizer's eos and the generation config's (chat
    models often end a turn with a second one, e.g. Llama 3's ``<|eot_id|>``)."""
    ids: set[int] = set()
    config = getattr(hf_model, "generation_config", None)
    for value in (tokenizer.eos_token_id, getattr(config, "eos_token_id", None)):
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, int):
                ids.add(item)
    return sorted(ids)


class HFModel:
    """``hf:FOLDER``: greedy at temperature 0, else seeded sampling.

    Native tools of a chat request go to the chat template (``apply_chat_template(tools=...)``)
    and the calls in the reply come back parsed in ``Generation.tool_calls``.
    """

    cacheable = True

    def __init__(self, path_or_name: str, options: ModelOptions, name: str | None = None) -> None:
        folder = hf_setup.model_folder(path_or_name)  # before seconds of importing torch
        hf_setup.go_offline()
        try:
            import torch  # deferred: torch is the optional extra toolbench[hf] (seconds to import)
            import transformers  # noqa: F401  (what load_pretrained needs, checked here)
        except ImportError:
            raise UserError(
                "the hf: backend needs torch and transformers: pip install 'toolbench[hf]'"
            ) from None
        self.base_url: str | None = None
        args = options.args(hf_setup.HFArgs)
        self.batch_size = max(1, args.batch_size)
        self.device = hf_setup.resolve_device(args.device, torch)
        dtype = hf_setup.load_dtype(args.dtype, self.device, torch)
        tokenizer, model = hf_setup.load_pretrained(path_or_name, folder, dtype)
        self.tokenizer: Any = tokenizer
        self.model: Any = model.to(self.device).eval()
        #: The loaded weights' dtype (float32, bfloat16, float16).
        self.dtype = hf_setup.dtype_name(self.model)
        template = hf_setup.read_chat_template(args.chat_template)
        if template is not None:
            tokenizer.chat_template = template.text
        # ``name``: a registry entry that loads its own files (smollm2) names itself. The
        # response cache keys on it, so it says the dtype and a template of the run's own.
        self.name = hf_setup.model_name(
            name or f"hf:{path_or_name}", self.dtype, template.digest if template else None
        )
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            if self.tokenizer.eos_token_id is None:
                raise UserError(f"tokenizer of '{path_or_name}' has neither a pad nor an eos token")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        #: Tokens of prompt plus reply the model can attend to; None when nothing says.
        self.context_length = hf_setup.context_length_of(self.model.config, self.tokenizer)
        self._eos_ids = _eos_ids(self.tokenizer, self.model)
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

    def _check_fits(self, prompt_ids: list[int], request: GenerationRequest) -> None:
        """``vLLM``'s rule: the prompt and the tokens asked for must fit the context window."""
        limit = self.context_length
        if limit is not None and len(prompt_ids) + request.max_tokens > limit:
            raise ContextOverflow(
                f"{self.name}: the prompt's {len(prompt_ids)} tokens and max_tokens "
                f"{request.max_tokens} exceed the model's context of {limit} tokens",
                prompt_tokens=len(prompt_ids),
                max_tokens=request.max_tokens,
                context_length=limit,
            )

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
        self._check_fits(prompt_ids, request)  # before queueing: its batch goes on without it
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
            groups: dict[GroupKey, list[_Pending]] = {}
            for item in batch:
                groups.setdefault(_group_key(item.request), []).append(item)
            for (temperature, seed, _), items in groups.items():
                live = [item for item in items if not item.future.done()]
                if live:
                    await self._run_group(live, temperature, seed)

    async def _run_group(self, items: list[_Pending], temperature: float, seed: int | None) -> None:
        try:
            results = await asyncio.to_thread(self._generate_batch, items, temperature, seed)
        except Exception as error:
            if len(items) > 1:
                # One bad request must not fail the others in its batch: run them one by
                # one so only the culprit fails.
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
                item.future.set_result(generation)

    # ---- the worker thread ----

    def _generate_batch(
        self, items: list[_Pending], temperature: float, seed: int | None
    ) -> list[Generation]:
        for item in items:
            item.finished = None
        rows = self._generate_rows(items, temperature, seed)
        returned = time.perf_counter()
        self.generate_calls += 1
        self.batch_sizes.append(len(items))
        results = []
        for item, row in zip(items, rows, strict=True):
            generation = self._finish(item, row)
            generation.latency_s = (item.finished or returned) - item.enqueued
            generation.batch_size = len(items)
            results.append(generation)
        return results

    def _generate_rows(
        self, items: list[_Pending], temperature: float, seed: int | None
    ) -> list[list[int]]:
        """The model call: each item's newly generated ids (maybe padded after its end).
        Notes on each item when its row ended. Items share temperature, seed and stops."""
        # deferred: hf_torch imports torch (optional extra toolbench[hf])
        from toolbench.models.hf_torch import generate_rows

        with _RNG_LOCK:
            rows, finished = generate_rows(
                self.model,
                self.tokenizer,
                [item.prompt_ids for item in items],
                max_tokens=[item.request.max_tokens for item in items],
                stops=_group_key(items[0].request)[2],
                eos_ids=self._eos_ids,
                temperature=temperature,
                seed=seed,
                device=self.device,
            )
        for item, moment in zip(items, finished, strict=True):
            item.finished = moment
        return rows

    def _finish(self, item: _Pending, row: list[int]) -> Generation:
        request = item.request
        end = read_row(
            row,
            max_tokens=request.max_tokens,
            stops=request.stop,
            eos_ids=self._eos_ids,
            pad_id=self.tokenizer.pad_token_id,
            decode=self._decode,
        )
        generation = Generation(
            text=end.text,
            prompt_tokens=len(item.prompt_ids),
            completion_tokens=len(end.tokens),
            finish_reason=end.finish_reason,
            raw_text=end.raw_text,
        )
        if request.tools is not None:
            self._read_tool_calls(generation, item, end)
        return generation

    def _read_tool_calls(self, generation: Generation, item: _Pending, end: RowEnd) -> None:
        tools = item.request.plain_tools() or []
        content, calls = parse_reply_tools(
            self.tokenizer, end, item.prompt_ids, tools, self._eos_ids
        )
        if calls:
            generation.text, generation.tool_calls = content, calls
            generation.finish_reason = "tool_calls"
        else:
            generation.text = content

    def _decode(self, ids: list[int] | tuple[int, ...] | Any) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))

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
