"""The context length a server's model listing (``GET /models``) states, read for an
overflow's message; a listing that says nothing, or nonsense, gives None."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fakeserver import FakeOpenAIServer
from tests.overflow_server import OverflowServer
from toolbench.models.base import ModelOptions
from toolbench.models.openai_compat import OpenAIModel, context_length_of


def _listing(*entries: object) -> bytes:
    return json.dumps({"object": "list", "data": list(entries)}).encode()


@pytest.mark.parametrize(
    ("listing", "expected"),
    [
        (_listing({"id": "m", "max_model_len": 8192}), 8192),  # vLLM
        (_listing({"id": "m", "context_length": 4096}), 4096),  # LM Studio, OpenRouter
        (_listing({"id": "m", "context_window": 2048}), 2048),
        (_listing({"id": "other", "max_model_len": 1}, {"id": "m", "max_model_len": 3}), 3),
        (_listing({"id": "only-one", "max_model_len": 512}), 512),  # a served name alias
        (_listing({"id": "a", "max_model_len": 1}, {"id": "b", "max_model_len": 2}), None),
        (_listing({"id": "m"}), None),  # OpenAI itself lists no window
        (_listing({"id": "m", "max_model_len": True}), None),
        (_listing({"id": "m", "max_model_len": "8192"}), None),
        (_listing({"id": "m", "max_model_len": -5}), None),
        (_listing("m"), None),
        (b'{"data": {"id": "m"}}', None),
        (b"[1, 2]", None),
        (b"<html>not json</html>", None),
        (b"", None),
    ],
)
def test_context_length_of_a_listing(listing: bytes, expected: int | None) -> None:
    assert context_length_of(listing, "m") == expected


@given(st.binary(max_size=500))
def test_any_bytes_never_raise(listing: bytes) -> None:
    found = context_length_of(listing, "m")
    assert found is None or (isinstance(found, int) and found > 0)


async def test_preflight_keeps_the_listed_context_length() -> None:
    with OverflowServer(context_length=4321, model="served") as server:
        model = OpenAIModel("served", ModelOptions(base_url=server.base_url))
        assert model.context_length is None
        await model.preflight()
        await model.aclose()
    assert model.context_length == 4321
    with FakeOpenAIServer() as plain:  # lists models without a window
        model = OpenAIModel("fake", ModelOptions(base_url=plain.base_url))
        await model.preflight()
        await model.aclose()
    assert model.context_length is None
