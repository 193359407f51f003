"""SHA-256 of a request whose transcript grows turn by turn, without re-reading the transcript.

An episode sends its whole history every turn, so hashing each request from scratch (the run
log's prompt hash, the response cache's key) costs time in proportion to the turn number. But
SHA-256 is a stream, and the canonical JSON of turn n's request begins with turn n-1's up to
its last message, so the hasher's state after a transcript's messages is kept (a small memo
keyed by the messages' contents, whose string hashes Python caches) and only the new messages
are encoded and hashed. The digests are byte for byte those of hashing the whole text at once,
so no cache key or prompt hash changes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from toolbench.types import GenerationRequest
from toolbench.types import _plain as plain

_LOOKBACK = 8  # a turn adds a few messages (an answer, an observation, tool results)


def _key(message: Mapping[str, Any], encoded: Callable[[], str]) -> Hashable:
    """A cheap exact key: (role, content) for a plain text message, else its encoding."""
    if len(message) == 2:
        role, content = message.get("role"), message.get("content")
        if type(role) is str and type(content) is str:
            return (role, content)
    return encoded()


class TranscriptHasher:
    """``sha256(head + separator.join(encode(m) for m in messages) + tail)``, incrementally."""

    def __init__(self, encode: Callable[[Any], str], separator: str, capacity: int = 1024) -> None:
        self._encode = encode
        self._separator = separator
        self._capacity = capacity
        self._states: dict[tuple[Hashable, ...], Any] = {}  # (head, *keys) -> sha256 state
        self._lock = threading.Lock()

    def hexdigest(self, head: str, messages: Sequence[Mapping[str, Any]], tail: str) -> str:
        texts: dict[int, str] = {}

        def encoded(i: int) -> str:
            if i not in texts:
                texts[i] = self._encode(plain(messages[i]))
            return texts[i]

        keys = [_key(m, lambda i=i: encoded(i)) for i, m in enumerate(messages)]  # type: ignore[misc]
        done, state = self._longest_prefix(head, keys)
        if state is None:
            state = hashlib.sha256(head.encode("utf-8"))
        new = [encoded(i) for i in range(done, len(messages))]
        if new:
            state.update(((self._separator if done else "") + self._separator.join(new)).encode())
            self._remember((head, *keys), state.copy())
        state.update(tail.encode("utf-8"))
        return state.hexdigest()

    def _longest_prefix(self, head: str, keys: list[Hashable]) -> tuple[int, Any]:
        """(messages covered, a copy of the hasher state after them) from the memo."""
        with self._lock:
            for done in range(len(keys), max(0, len(keys) - _LOOKBACK), -1):
                state = self._states.get((head, *keys[:done]))
                if state is not None:
                    return done, state.copy()
        return 0, None

    def _remember(self, key: tuple[Hashable, ...], state: Any) -> None:
        with self._lock:
            self._states[key] = state
            while len(self._states) > self._capacity:  # oldest first: finished transcripts
                del self._states[next(iter(self._states))]


_PROMPT = TranscriptHasher(lambda m: json.dumps(m, sort_keys=True), ", ")
_CACHE = TranscriptHasher(
    lambda m: json.dumps(m, sort_keys=True, separators=(",", ":"), ensure_ascii=False), ","
)
_MARKER = '"messages":[]'


def prompt_digest(request: GenerationRequest) -> str:
    """sha256 hex of the prompt text, or of the messages' (and tools') sorted JSON."""
    if request.prompt is not None:
        return hashlib.sha256(request.prompt.encode()).hexdigest()
    tools = "" if request.tools is None else json.dumps(request.plain_tools(), sort_keys=True)
    if not request.messages:
        return hashlib.sha256(("[]" + tools).encode()).hexdigest()
    return _PROMPT.hexdigest("[", request.messages, "]" + tools)


def canonical_digest(material: dict[str, Any], request: GenerationRequest) -> str:
    """sha256 hex of the canonical JSON of ``material`` with ``"request"`` set to the request's
    cache payload (sorted keys, no spaces, UTF-8): the transcript is hashed incrementally."""
    if not request.messages:
        text = _canonical({**material, "request": request.cache_payload()})
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    payload = dataclasses.replace(request, messages=None).cache_payload()
    payload["messages"] = []
    text = _canonical({**material, "request": payload})
    # Strings are escaped in JSON, so the first '"messages":[]' is the request's key.
    split = text.index(_MARKER) + len(_MARKER) - 1
    return _CACHE.hexdigest(text[:split], request.messages, text[split:])


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
