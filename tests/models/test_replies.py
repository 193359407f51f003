"""``models.replies``: a server's body read within bounds, its JSON and its shape checked; and
the backend's ``GET /models`` (preflight, the pool's health check) bounded the same way."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import tracemalloc
import zlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.models.hostile_server import (
    REPLY_HEAD,
    HostileServer,
    chat_reply,
    gzip_stream,
    send_flood,
    send_json,
)
from toolbench.models.base import ModelOptions
from toolbench.models.openai_compat import OpenAIModel, context_length_of
from toolbench.models.replies import (
    MAX_GZIP_MEMBERS,
    BadReply,
    BodyReader,
    parse_json,
    read_body,
    read_reply,
    shown,
)
from toolbench.types import GenerationRequest, InfraError


def test_a_gzip_bomb_is_cut_at_the_limit_holding_no_more() -> None:
    reader = BodyReader("gzip", 1 << 20)
    tracemalloc.start()
    try:
        for piece in gzip_stream(REPLY_HEAD, 1 << 30):
            if not reader.feed(piece):
                break
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert reader.over and len(reader.body()) == 1 << 20
    assert reader.received < 20_000  # ~1 KB of gzip per MB: it stopped at once
    assert peak < 4 << 20, peak


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-15)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        (None, lambda data: data),
        ("identity", lambda data: data),
        ("gzip", gzip.compress),
        ("GZIP", gzip.compress),
        ("deflate", zlib.compress),  # RFC 1950, as the standard says
        ("deflate", raw_deflate),  # raw, as some servers send it
    ],
)
def test_bodies_decode_whole_under_the_limit(encoding: str | None, compress: Any) -> None:
    data = json.dumps(chat_reply({"content": "hello " * 1000})).encode()
    wire = compress(data)
    reader = BodyReader(encoding, len(data))
    for start in range(0, len(wire), 100):  # as it arrives: in pieces
        assert reader.feed(wire[start : start + 100])
    assert reader.body() == data and not reader.over
    over = BodyReader(encoding, len(data) - 1)
    assert not over.feed(wire) or over.over
    assert over.over and over.body() == data[:-1]


def test_several_gzip_members_are_one_body_but_not_without_end() -> None:
    reader = BodyReader("gzip", 1000)
    reader.feed(gzip.compress(b"[1,") + gzip.compress(b"2]"))
    assert reader.body() == b"[1,2]"
    empty = gzip.compress(b"")
    with pytest.raises(BadReply, match=f"more than {MAX_GZIP_MEMBERS} members"):
        BodyReader("gzip", 1000).feed(empty * (MAX_GZIP_MEMBERS + 1))


@pytest.mark.parametrize("encoding", ["br", "zstd", "gzip, gzip", "compress"])
def test_an_encoding_not_asked_for_is_refused(encoding: str) -> None:
    with pytest.raises(BadReply, match="was not asked for"):
        BodyReader(encoding, 100)


@given(st.binary(max_size=300), st.sampled_from(["gzip", "deflate"]))
def test_any_compressed_bytes_decode_or_are_a_bad_reply(wire: bytes, encoding: str) -> None:
    reader = BodyReader(encoding, 1000)
    try:
        reader.feed(wire)
    except BadReply as error:
        assert "\n" not in str(error)
    assert len(reader.body()) <= 1000


async def test_read_body_stops_reading_at_the_limit() -> None:
    chunks = [b"x" * 1000] * 100

    class Content:
        read = 0

        async def readany(self) -> bytes:
            self.read += 1
            return chunks.pop() if chunks else b""

    content = Content()
    body, cut = await read_body(content, None, 2500)
    assert cut and body == b"x" * 2500 and content.read == 3


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"[" * 500_000, "deeper than 64"),
        (b"[" * 65 + b"]" * 65, "deeper than 64"),
        (b'{"a":' * 70 + b"1" + b"}" * 70, "deeper than 64"),
        (b"[" + b"{}," * 1_000_000 + b"{}]", "JSON values"),
    ],
)
def test_json_is_bounded_in_depth_and_values(raw: bytes, says: str) -> None:
    with pytest.raises(BadReply, match=says):
        parse_json(raw)


def test_json_within_the_bounds_parses() -> None:
    assert parse_json(b"[" * 64 + b"]" * 64) is not None
    assert parse_json('{"a": [1, 2, {"b": null}]}') == {"a": [1, 2, {"b": None}]}
    for not_json in (b"<html>", b"\xff\xfe", b"1" * 5000, b""):
        with pytest.raises(ValueError):
            parse_json(not_json)


@given(st.binary(max_size=200))
def test_parse_json_raises_only_its_two_errors(raw: bytes) -> None:
    with contextlib.suppress(BadReply, ValueError):
        parse_json(raw)


def test_content_parts_are_read_as_their_text() -> None:
    parts = [
        {"type": "text", "text": "a"},
        {"type": "image_url", "image_url": {"url": "x"}},
        {"type": "text", "text": "b"},
    ]
    assert read_reply(chat_reply({"content": parts})).text == "ab"
    assert read_reply(chat_reply({"content": []})).text == ""


def test_tool_calls_of_the_right_shape_are_kept() -> None:
    calls = [
        {"id": 7, "function": {"name": "f", "arguments": {"a": [1]}}},
        None,
        {"id": "c", "type": "function", "function": {"name": "g", "arguments": '{"b": 2}'}},
    ]
    reply = read_reply(chat_reply({"content": None, "tool_calls": calls}))
    assert reply.tool_calls == [
        {"id": "7", "type": "function", "function": {"name": "f", "arguments": '{"a": [1]}'}},
        {"id": "c", "type": "function", "function": {"name": "g", "arguments": '{"b": 2}'}},
    ]
    assert (reply.prompt_tokens, reply.completion_tokens, reply.finish_reason) == (1, 1, "stop")


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (chat_reply({"content": True}), '"content" as a boolean (true)'),
        (chat_reply({"content": 1.5}), '"content" as a number (1.5)'),
        (chat_reply(None), '"message" as null'),
        (chat_reply({"content": None, "tool_calls": [["f"]]}), '"tool_calls[0]" as a list'),
        (chat_reply({"content": None, "tool_calls": [{"id": {}}]}), "tool_calls[0].id"),
        (chat_reply({"tool_calls": [{"function": {"name": 3}}]}), "tool_calls[0].function.name"),
        (chat_reply({"tool_calls": [{"function": {"arguments": [1]}}]}), "arguments"),
        ({**chat_reply({}), "usage": {"completion_tokens": -1}}, "usage.completion_tokens"),
        ({**chat_reply({}), "usage": {"prompt_tokens": True}}, "usage.prompt_tokens"),
        ({**chat_reply({}), "usage": {"prompt_tokens": 1 << 70}}, "usage.prompt_tokens"),
    ],
)
def test_a_wrong_shape_is_one_line_naming_the_field(data: Any, says: str) -> None:
    with pytest.raises(BadReply, match=r"^[^\n]*$") as raised:
        read_reply(data)
    assert says in str(raised.value)


def test_a_huge_value_is_quoted_shortly() -> None:
    text = shown({"content": ["x" * 10**6] * 10**5, **{str(i): i for i in range(1000)}})
    assert len(text) <= 200 and "\n" not in text
    assert len(shown("a\nb" * 10**6)) <= 200
    assert "bits" in shown([1 << 10_000])


# ---- through the backend ----


def test_a_deep_listing_states_no_context_length() -> None:
    assert context_length_of(b"[" * 500_000, "m") is None
    assert context_length_of(b'{"data": ' * 100 + b"1" + b"}" * 100, "m") is None


async def test_the_health_check_and_preflight_are_bounded() -> None:
    """A ``GET /models`` of a gigabyte (as gzip) is no listing; the check still says the
    server is there, and holds no more than the listing's limit meanwhile."""
    for models in (send_flood(gzip=True), send_flood(), send_json(b"[" * 500_000)):
        with HostileServer(send_json(chat_reply({"content": "ok"})), models=models) as server:
            model = OpenAIModel("x", ModelOptions(base_url=server.base_url, timeout_s=5))
            tracemalloc.start()
            try:
                assert await asyncio.wait_for(model.health(), 10) is None
                await asyncio.wait_for(model.preflight(), 10)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
                await model.aclose()
        assert model.context_length is None
        assert peak < 8 << 20, peak


async def test_a_bad_reply_is_the_samples_infra_error() -> None:
    with HostileServer(send_json(chat_reply({"content": 12345}))) as server:
        model = OpenAIModel("x", ModelOptions(base_url=server.base_url, timeout_s=5))
        try:
            with pytest.raises(InfraError, match=r'openai:x: server sent "content" as a number'):
                await model.generate(GenerationRequest(prompt="hi"))
        finally:
            await model.aclose()
