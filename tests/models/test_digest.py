"""The incremental transcript hashes are the one-shot formulas, byte for byte, however the
transcript grows, shrinks or forks: cache keys and run-log prompt hashes never change."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.core.solve import prompt_hash
from toolbench.models.cache import KEY_VERSION, cache_key
from toolbench.types import GenerationRequest


def old_cache_key(model: str, base_url: str | None, request: GenerationRequest) -> str:
    material = {"v": KEY_VERSION, "model": model, "base_url": base_url}
    material["request"] = request.cache_payload()
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def old_prompt_hash(request: GenerationRequest) -> str:
    if request.prompt is not None:
        text = request.prompt
    else:
        payload = request.cache_payload()
        text = json.dumps(payload["messages"] or [], sort_keys=True)
        if request.tools is not None:
            text += json.dumps(payload["tools"], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


texts = st.text(max_size=40)
messages = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": texts}),
    st.fixed_dictionaries(
        {
            "role": st.just("assistant"),
            "content": st.none(),
            "tool_calls": st.lists(st.fixed_dictionaries({"id": texts, "args": texts}), max_size=2),
        }
    ),
    st.fixed_dictionaries({"role": st.just("tool"), "content": texts, "tool_call_id": texts}),
)
tools = st.none() | st.lists(st.fixed_dictionaries({"type": st.just("function"), "name": texts}))


def _request(history: list[Any], tools: Any, epoch: int) -> GenerationRequest:
    return GenerationRequest(
        messages=tuple(history), tools=None if tools is None else tuple(tools), epoch=epoch
    )


@settings(max_examples=300, deadline=None)
@given(
    turns=st.lists(st.lists(messages, min_size=1, max_size=3), min_size=1, max_size=8),
    tools=tools,
    epoch=st.integers(0, 2),
    model=texts,
    base_url=st.none() | texts,
)
def test_growing_transcripts_hash_as_before(
    turns: list[list[Any]], tools: Any, epoch: int, model: str, base_url: str | None
) -> None:
    history: list[Any] = []
    for added in turns:
        history += added
        for request in (_request(history, tools, epoch), _request(history[:-1], tools, epoch)):
            assert cache_key(model, base_url, request) == old_cache_key(model, base_url, request)
            assert prompt_hash(request) == old_prompt_hash(request)


def test_one_call_requests_keep_their_keys() -> None:
    prompt = GenerationRequest(prompt="Task: find a flat\nAction:", stop=("\n\n",))
    chat = GenerationRequest(messages=({"role": "user", "content": 'héllo "x" \u2028'},))
    for request in (prompt, chat, GenerationRequest(messages=())):
        assert cache_key("m", "http://h/v1", request) == old_cache_key("m", "http://h/v1", request)
        assert prompt_hash(request) == old_prompt_hash(request)


def test_same_prefix_different_heads_do_not_mix() -> None:
    base = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    for epoch in (0, 1, 0):
        request = _request([*base, {"role": "user", "content": "c"}], None, epoch)
        assert cache_key("m", None, request) == old_cache_key("m", None, request)
        assert cache_key("n", None, request) == old_cache_key("n", None, request)
