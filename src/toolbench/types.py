"""Core value types that flow through the pipeline.

One sample's path: ``Sample`` -> ``GenerationRequest`` -> ``Generation`` -> ``Outcome`` ->
``SampleResult`` (one line of ``samples.jsonl``). Everything here is plain data so that it can be
logged, hashed, and sent between processes.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Tokens a model may generate for one request unless the task or the run says otherwise (the
#: original ToolBench commands' setting). Prompt settings, task defaults and the awareness
#: evaluation all start from this one value.
DEFAULT_MAX_TOKENS = 256


class Status(str, enum.Enum):
    """How a sample ended. Only ``infra_error`` is excluded from scores (and retried on resume)."""

    SCORED = "scored"
    MODEL_ERROR = "model_error"
    INFRA_ERROR = "infra_error"


@dataclass(frozen=True)
class Doc:
    """A retrievable text: one API doc (``functions/``) or one demonstration (``examples/``)."""

    name: str
    text: str


@dataclass(frozen=True)
class Sample:
    """One test item.

    ``labels`` are gold programs; any one of them is a correct answer. ``fields`` carries
    task-specific extras from the data line (e.g. ``compare_string_only``) untouched, and
    ``source`` says where the sample came from as ``file:line`` for error messages.
    """

    id: str
    task: str
    query: str
    labels: tuple[str, ...]
    fields: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""


@dataclass(frozen=True)
class TaskContext:
    """What a prompt can draw on for one task: its API docs and its demonstrations."""

    functions: tuple[Doc, ...]
    examples: tuple[Doc, ...]


@dataclass(frozen=True)
class GenerationRequest:
    """Everything a model needs to answer, and nothing the cache key must ignore.

    Exactly one of ``prompt`` (completion mode) or ``messages`` (chat mode) is set. Messages
    are OpenAI chat messages: ``{"role", "content"}``, plus ``tool_calls`` on an assistant
    message that called tools and ``tool_call_id`` on a ``"tool"`` message answering one.
    ``tools`` offers APIs as native tools, as OpenAI function-tool dicts
    (``{"type": "function", "function": {"name", "description", "parameters"}}``); it needs
    chat mode, and the model's calls come back in ``Generation.tool_calls``.

    ``step`` names the call within its sample's solve loop (``answer`` for one-call tasks,
    ``turn-3``, ``parse_obj_name#2``...): replay files and the run log key calls by it.
    ``sample``, ``epoch``, ``context`` and ``ideal`` (the gold answer of this step, with
    ``ideal_tool_calls`` for a step answered by tool calls) are for built-in models (oracle,
    replay, baseline). None of these is part of the cache key: real models never see them.
    """

    prompt: str | None = None
    messages: tuple[Mapping[str, Any], ...] | None = None
    stop: tuple[str, ...] = ()
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    seed: int | None = 0
    sample: Sample | None = None
    epoch: int = 0
    context: TaskContext | None = None
    tools: tuple[Mapping[str, Any], ...] | None = None
    step: str = "answer"
    ideal: str | None = None
    ideal_tool_calls: tuple[Mapping[str, Any], ...] = ()

    def cache_payload(self) -> dict[str, Any]:
        """The parts of the request that can change a real model's answer.

        The epoch is part of it: each epoch is a fresh draw from the model, not a cache hit.
        ``tools`` enters the key only when set, as it enters the API request only then: a
        request's key depends only on what it sends, and one that sends no tools has no
        ``tools`` in its key.
        """
        payload: dict[str, Any] = {
            "epoch": self.epoch,
            "prompt": self.prompt,
            "messages": [_plain(m) for m in self.messages] if self.messages else None,
            "stop": list(self.stop),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "seed": self.seed,
        }
        if self.tools is not None:
            payload["tools"] = self.plain_tools()
        return payload

    def plain_messages(self) -> list[dict[str, Any]] | None:
        """``messages`` as plain JSON data (tool calls included), as sent to an API."""
        if self.messages is None:
            return None
        return [_plain(message) for message in self.messages]

    def plain_tools(self) -> list[dict[str, Any]] | None:
        """``tools`` as plain JSON data (dicts and lists), as sent to an API or a template."""
        if self.tools is None:
            return None
        return [_plain(tool) for tool in self.tools]


def _plain(value: Any) -> Any:
    """``value`` with every mapping made a dict and every tuple a list."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


@dataclass
class Generation:
    """A model's answer plus the accounting we report."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str | None = None
    cached: bool = False
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    #: The reply as the backend gave it, when the harness cut it at a stop sequence the backend
    #: did not honour (``models.generation.finish_generation``); None when nothing was cut.
    raw_text: str | None = None
    #: How many requests shared the model call that answered this one (a local batch).
    batch_size: int = 1


@dataclass
class Outcome:
    """The score of one prediction. ``message`` is a one-line reason for any failure."""

    status: Status
    success: bool = False
    metrics: dict[str, float] = field(default_factory=dict)
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    #: A finer reason for a ``model_error`` that summaries count on their own
    #: (``"context_overflow"``); empty for every other outcome.
    error_kind: str = ""


class InfraError(Exception):
    """The model or service could not answer (after retries). Never the model's fault."""


class ServiceDown(InfraError):
    """The model's service is gone (every request failing to connect, seen by the breaker
    shared by all samples): the runner stops dispatching and leaves the samples not yet
    finished undone for a rerun, instead of writing an infra error for each."""


class EndpointNotServed(ServiceDown):
    """The server says the model's requests go nowhere (HTTP 404, 405 or 501 on the request's
    own path): a URL that is no OpenAI API root, or a model name it does not serve. The run
    stops as for ``ServiceDown``, and the command exits 2: it is a setting to fix, not a
    server to wait for."""


class ContextOverflow(Exception):
    """The prompt and the tokens asked for do not fit the model's context window.

    The model's failure, counted in the score (``error_kind`` ``"context_overflow"``): a model
    with a smaller window must not look better by having its long prompts left out. The rule
    is vLLM's, for every backend: ``prompt_tokens + max_tokens > context_length``. Numbers
    that are not known (a server's error that does not say them) are None."""

    def __init__(
        self,
        message: str,
        prompt_tokens: int | None = None,
        max_tokens: int | None = None,
        context_length: int | None = None,
    ) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.context_length = context_length
