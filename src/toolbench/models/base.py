"""The model protocol every backend implements, and the options the CLI passes to backends.

A model turns a ``GenerationRequest`` into a ``Generation``. Backends raise ``InfraError`` when
the service cannot answer after retries (excluded from scores), and ``ModelOutputError`` when
the model itself is at fault in a way that has no text (counted as a model error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from toolbench.types import Generation, GenerationRequest

#: ``ModelOptions.max_response_bytes`` unless ``--max-response-bytes`` says otherwise: a chat
#: reply is a few KB, so 16 MiB is room for any real one and little memory for a hostile one.
MAX_RESPONSE_BYTES = 16 << 20


class ModelOutputError(Exception):
    """The model produced no usable answer for this sample (e.g. replay file lacks the id)."""


@runtime_checkable
class Model(Protocol):
    #: A stable name used in run names, fingerprints and cache keys, e.g. "openai:gpt-4o-mini".
    name: str
    #: False for built-in models whose answers are cheap and must never be cached.
    cacheable: bool

    async def generate(self, request: GenerationRequest) -> Generation: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class FitsData(Protocol):
    """A model that reads the evaluation's data before it answers: the built-in ``baseline``
    takes each task's own reply policy, the awareness ``similarity`` floor fits its threshold
    on the labelled items. The runner calls ``fit`` once, after the data is loaded and before
    any sample runs, with every prepared task (``.task``, ``.data``, ``.samples``); what it
    returns goes into ``run.json`` as ``model_notes``."""

    def fit(self, prepared: Sequence[Any]) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ModelOptions:
    """Backend settings from the command line. Not every backend uses every field."""

    base_url: str | None = None
    # Several endpoints serving one model (--base-url repeated): requests go to the one with
    # the fewest in flight (``models.endpoints``). Empty: ``base_url`` alone.
    base_urls: tuple[str, ...] = ()
    api_key: str | None = None
    timeout_s: float = 60.0
    # The most bytes of one reply a server backend reads, counted after decompression
    # (--max-response-bytes): a reply over it is that sample's infra error, not the run's memory.
    max_response_bytes: int = MAX_RESPONSE_BYTES
    max_retries: int = 6
    # Cache: None disables it. The CLI sets it to <cache dir>/responses.sqlite by default.
    cache_path: Path | None = None
    # Seconds one request may spend in retries (all attempts and waits together); None: the
    # retry layer's default, derived from ``timeout_s``.
    retry_budget_s: float | None = None
    # Hugging Face backend. Device "auto": the first GPU when there is one, else the CPU;
    # dtype "auto": the checkpoint's own dtype on a GPU, float32 on the CPU.
    hf_batch_size: int = 8
    hf_device: str = "auto"
    hf_dtype: str = "auto"
    # A Jinja chat template file used instead of the tokenizer's own (--hf-chat-template).
    hf_chat_template: Path | None = None
    # A local model served by this many Ray actors (``models.ray_replicas``), on the Ray
    # cluster at ``ray_address`` (None: $RAY_ADDRESS, else a local one); 1: in-process.
    replicas: int = 1
    ray_address: str | None = None
    # The run's replicas are Ray actors named after this group (set once by the process that
    # starts the run), so every process of the run that builds the model finds the same ones.
    replica_group: str | None = None
    # agent:COMMAND: seconds of wall time one attempt may take before its process group is
    # killed (--agent-timeout).
    agent_timeout_s: float = 300.0
    # agent:COMMAND's OS layer (``agents.contain``): its network ("host" or "none"), its
    # address space in MB (0: unlimited), and further environment variables passed to it by
    # name (--agent-network, --agent-memory, --agent-env).
    agent_network: str = "host"
    agent_memory_mb: int = 8192
    agent_env: tuple[str, ...] = ()
