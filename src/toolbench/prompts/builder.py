r"""Prompt construction: API docs and demonstrations retrieved per query, then the task.

Completion mode reproduces the original ToolBench prompt shape: an API-docs block and a
demonstrations block, each closed by a dashed separator, then ``Task: {query}\nAction:\n``;
generation stops at ``------`` or ``Task:`` (a base model goes on to write the next example).
Chat mode sends the same content as messages, without stop sequences: the chat template's end
of turn ends a reply, and a chat model may well begin its reply with ``Task:`` (SmolLM2 does),
which those stops would cut to nothing. Tools mode sends the chat content under its own
instruction, also without stop sequences; the task adds its API as native tools to each turn's
request. A run's ``--stop``/``--no-stop`` (``PromptConfig.stop``) replaces a mode's defaults.
The header sentences are ours.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolbench.retrieval import Retriever, make_retriever
from toolbench.types import DEFAULT_MAX_TOKENS, Doc, GenerationRequest, Sample, TaskContext

SEPARATOR = "-------------"
#: Completion mode's stop sequences: the end of the answer's block, or the next example.
STOP_SEQUENCES = ("------", "Task:")
API_HEADER = "You can call these API functions:\n\n"
EXAMPLES_HEADER = "Here are example tasks, each followed by the action that completes it:\n\n"
CHAT_SYSTEM = (
    "You complete tasks by writing the action that calls the given API. "
    "Reply with the action only: no explanation, no extra text."
)
TOOLS_SYSTEM = (
    "You complete tasks by calling the API through the tools you are given. Make the calls "
    "the task needs, in the order the API requires; each call's result comes back to you, and "
    "a call that failed can be made again. The examples below show the calls as Python lines: "
    "make the same calls as tool calls. When every call is made, reply briefly without a tool "
    "call."
)


class Mode(str, enum.Enum):
    COMPLETION = "completion"
    CHAT = "chat"
    TOOLS = "tools"  # chat messages plus the task's API as native function tools


def default_stops(mode: Mode) -> tuple[str, ...]:
    """The stop sequences of ``mode`` when the run sets none (see the module doc): only
    completion mode has any."""
    return STOP_SEQUENCES if mode is Mode.COMPLETION else ()


@dataclass(frozen=True)
class PromptConfig:
    mode: Mode = Mode.COMPLETION
    retriever: str = "bm25"
    top_k_api: int = 15
    top_k_example: int = 3
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    seed: int | None = 0
    #: The run's stop sequences (``--stop``; ``()`` for ``--no-stop``), replacing the mode's
    #: defaults; None: ``default_stops(mode)``.
    stop: tuple[str, ...] | None = None
    #: The run's instruction for chat and tools prompts (``--system-prompt``); None: the
    #: mode's own (``CHAT_SYSTEM``, ``TOOLS_SYSTEM``, a task's own chat instruction).
    system: str | None = None

    @property
    def stops(self) -> tuple[str, ...]:
        """The stop sequences a request of this configuration carries."""
        return default_stops(self.mode) if self.stop is None else self.stop


@dataclass(frozen=True)
class Retrieved:
    functions: tuple[Doc, ...]
    examples: tuple[Doc, ...]


def api_block(functions: Sequence[Doc]) -> str:
    if not functions:
        return ""
    return API_HEADER + "".join(doc.text + "\n" for doc in functions) + SEPARATOR


def examples_block(examples: Sequence[Doc]) -> str:
    if not examples:
        return ""
    return EXAMPLES_HEADER + "".join(doc.text + "\n" for doc in examples) + SEPARATOR


def completion_prompt(query: str, retrieved: Retrieved) -> str:
    return (
        f"{api_block(retrieved.functions)}\n{examples_block(retrieved.examples)}\n"
        f"Task: {query}\nAction:\n"
    )


def chat_messages(
    query: str, retrieved: Retrieved, instruction: str = CHAT_SYSTEM
) -> tuple[dict[str, str], ...]:
    blocks = [b for b in (api_block(retrieved.functions), examples_block(retrieved.examples)) if b]
    system = "\n\n".join([instruction, *blocks])
    return ({"role": "system", "content": system}, {"role": "user", "content": f"Task: {query}"})


def shown_text(request: GenerationRequest) -> str:
    """What a request shows the model, as one text a person reads (``show`` and the HTML
    report): the prompt, or each message under its role, then the tools' schemas, one a line."""
    if request.prompt is not None:
        return request.prompt
    parts = [f"[{m.get('role', '?')}]\n{m.get('content') or ''}" for m in request.messages or ()]
    tools = request.plain_tools()
    if tools:
        parts.append("[tools]\n" + "\n".join(json.dumps(tool) for tool in tools))
    return "\n\n".join(parts)


class Prompter:
    """Builds requests for one task's samples; retrieval for all samples is done up front."""

    def __init__(
        self, context: TaskContext, config: PromptConfig, cache_dir: Path | None = None
    ) -> None:
        self.context = context
        self.config = config
        self._cache_dir = cache_dir
        self._retrieved: dict[str, Retrieved] = {}
        self._retrievers: dict[str, Retriever] = {}

    @property
    def stops(self) -> tuple[str, ...]:
        """The stop sequences of this prompter's requests: the run's, else the mode's."""
        return self.config.stops

    def prepare(self, samples: Sequence[Sample]) -> None:
        queries = [s.query for s in samples if s.query not in self._retrieved]
        if not queries:
            return
        functions = self._search("functions", queries, self.config.top_k_api)
        examples = self._search("examples", queries, self.config.top_k_example)
        for query, f, e in zip(queries, functions, examples, strict=True):
            self._retrieved[query] = Retrieved(tuple(f), tuple(e))

    def _search(self, which: str, queries: list[str], k: int) -> list[list[Doc]]:
        docs = self.context.functions if which == "functions" else self.context.examples
        if k <= 0 or not docs:
            return [[] for _ in queries]
        if which not in self._retrievers:
            self._retrievers[which] = make_retriever(self.config.retriever, docs, self._cache_dir)
        return self._retrievers[which].search(queries, k)

    def request(
        self, sample: Sample, epoch: int = 0, shown: str | None = None
    ) -> GenerationRequest:
        """The request for ``sample``; ``shown`` replaces the query in the prompt's task line
        while retrieval stays keyed on the query (an episode's history around its page)."""
        self.prepare([sample])
        retrieved = self._retrieved[sample.query]
        task_text = sample.query if shown is None else shown
        mode = self.config.mode
        messages = None
        if mode is not Mode.COMPLETION:
            instruction = self.config.system or (
                TOOLS_SYSTEM if mode is Mode.TOOLS else CHAT_SYSTEM
            )
            messages = chat_messages(task_text, retrieved, instruction)
        return GenerationRequest(
            prompt=completion_prompt(task_text, retrieved) if messages is None else None,
            messages=messages,
            stop=self.stops,
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            # A different seed per epoch, so sampled epochs are different draws.
            seed=None if self.config.seed is None else self.config.seed + epoch,
            sample=sample,
            epoch=epoch,
            context=self.context,
        )
