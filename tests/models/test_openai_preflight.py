"""The start check of an OpenAI-compatible endpoint (``OpenAIModel.preflight``): an HTTP
server that is no OpenAI API is a ``NotAnAPI`` (exit 2) naming ``--base-url`` and its likely
fix; a server that only lacks ``/models``, or whose check fails for now, is left to the run."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.models.hostile_server import LISTING, HostileServer, send_drip, send_json
from toolbench.models.base import ModelOptions
from toolbench.models.endpoints import NotAnAPI, base_url_hint
from toolbench.models.openai_compat import OpenAIModel
from toolbench.models.replies import not_served

NOT_FOUND = send_json({"detail": "Not Found"}, 404)


@pytest.mark.parametrize(
    ("status", "kind", "head", "why"),
    [
        (404, "application/json", b'{"detail":"Not Found"}', "HTTP 404"),
        (405, "", b"", "HTTP 405"),
        (501, "text/html", b"<html>", "HTTP 501"),
        (200, "text/html; charset=utf-8", b"<!DOCTYPE html>", "HTTP 200 with an HTML page"),
        (200, "application/octet-stream", b"\x00\x01", "HTTP 200 with text, not JSON"),
        (200, "", b"", "HTTP 200 with nothing, not JSON"),
        (200, "application/json", b' \n{"object": "list"}', None),
        (200, "application/json", b"[" * 10, None),
        (400, "text/html", b"<html>bad request</html>", None),  # something is there
        (422, "application/json", b"{}", None),
        (503, "text/html", b"<html>loading</html>", None),  # there, but busy
        (307, "", b"", None),
    ],
)
def test_what_shows_no_api(status: int, kind: str, head: bytes, why: str | None) -> None:
    assert not_served(status, kind, head) == why


ADD_V1 = "add /v1 to it (--base-url http://h:8000/v1), the API's root on most servers"
ROOT = "give the API's root, without {} (--base-url http://h/v1)"
OTHER = "give the URL that the server's /chat/completions and /models follow (its API root)"


@pytest.mark.parametrize(
    ("url", "hint"),
    [
        ("http://h:8000", ADD_V1),
        ("http://h:8000/", ADD_V1),
        ("http://h/v1/chat/completions", ROOT.format("/chat/completions")),
        ("http://h/v1/completions", ROOT.format("/completions")),
        ("http://h/v1/models", ROOT.format("/models")),
        ("http://h/api/v1", OTHER),
    ],
)
def test_the_hint_names_the_likely_fix(url: str, hint: str) -> None:
    assert base_url_hint(url) == hint


async def _preflight(url: str, timeout_s: float = 5) -> OpenAIModel:
    model = OpenAIModel("x", ModelOptions(base_url=url, timeout_s=timeout_s))
    try:
        await model.preflight()
    finally:
        await model.aclose()
    return model


async def test_neither_path_served_is_not_an_api() -> None:
    with HostileServer(NOT_FOUND, models=NOT_FOUND) as server:
        with pytest.raises(NotAnAPI) as caught:
            await _preflight(server.base_url)
        assert [seen.method for seen in server.requests] == ["GET", "POST", "POST"]
    assert str(caught.value) == (
        f"--base-url {server.base_url}: no OpenAI-compatible API there (GET /models: HTTP 404; "
        "POST /chat/completions: HTTP 404; POST /completions: HTTP 404); give the URL that the "
        "server's /chat/completions and /models follow (its API root)"
    )


async def test_a_chat_only_server_without_a_listing_passes() -> None:
    """One path served is an API (the run's mode may need the other: its requests say so)."""
    chat_only = [send_json({"error": {"message": "bad JSON"}}, 400), NOT_FOUND]
    with HostileServer(chat_only, models=NOT_FOUND) as server:
        model = await _preflight(server.base_url)
    assert model.context_length is None


async def test_a_listing_sends_no_check_of_the_paths() -> None:
    """A server that lists its models is asked nothing else before the run."""
    with HostileServer(NOT_FOUND, models=send_json(LISTING)) as server:
        model = await _preflight(server.base_url)
        assert [seen.method for seen in server.requests] == ["GET"]
    assert model.context_length == 8192


async def test_a_check_that_gets_no_answer_says_nothing() -> None:
    """A POST whose answer drips past the check's deadline: the run goes on (to its retries)."""
    with HostileServer(send_drip(), models=NOT_FOUND) as server:
        start = time.monotonic()
        await asyncio.wait_for(_preflight(server.base_url, timeout_s=1), 20)
    assert time.monotonic() - start < 10


async def test_a_pool_with_a_wrong_url_is_refused() -> None:
    """A typo in one of several --base-url is the user's to fix, like a refused key."""
    with (
        HostileServer(NOT_FOUND, models=send_json(LISTING)) as good,
        HostileServer(NOT_FOUND, models=NOT_FOUND) as wrong,
    ):
        urls = (good.base_url, wrong.base_url.removesuffix("/v1"))
        model = OpenAIModel("x", ModelOptions(base_url=urls[0], base_urls=urls))
        try:
            with pytest.raises(NotAnAPI, match=f"--base-url {urls[1]}: no OpenAI-compatible"):
                await model.preflight()
        finally:
            await model.aclose()
