"""The shared same-origin rule on its own: which header combinations are foreign."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.exceptions import HTTPException
from starlette.requests import Request

from toolbench.webcheck import check_same_origin, foreign_request

HOST = "127.0.0.1:8000"


def _request(**headers: str) -> Request:
    raw = [(b"host", HOST.encode())]
    raw += [(k.replace("_", "-").encode(), v.encode("latin-1")) for k, v in headers.items()]
    return Request({"type": "http", "method": "POST", "path": "/", "headers": raw})


@pytest.mark.parametrize(
    "headers",
    [{}, {"sec_fetch_site": "same-origin"}, {"sec_fetch_site": "none"},
     {"origin": f"http://{HOST}"}, {"origin": f"http://{HOST}", "sec_fetch_site": "same-origin"}],
)  # fmt: skip
def test_own_and_headerless_requests_pass(headers: dict[str, str]) -> None:
    assert foreign_request(_request(**headers)) is None
    check_same_origin(_request(**headers))


@pytest.mark.parametrize(
    "headers",
    [{"sec_fetch_site": "cross-site"}, {"sec_fetch_site": "same-site"},
     {"origin": "http://evil.example"}, {"origin": "null"}, {"origin": "http://127.0.0.1:8001"},
     {"origin": "http://[::1"}, {"origin": f"http://{HOST}", "sec_fetch_site": "cross-site"}],
)  # fmt: skip
def test_foreign_requests_are_403(headers: dict[str, str]) -> None:
    with pytest.raises(HTTPException) as refused:
        check_same_origin(_request(**headers))
    assert refused.value.status_code == 403 and "refused" in refused.value.detail


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=200))
def test_any_origin_header_is_judged_without_raising(origin: str) -> None:
    """Header text is hostile: any value gets a verdict (no exception, so no 500), and only
    one naming this very host and port can pass."""
    verdict = foreign_request(_request(origin=origin))
    assert verdict is None or "refused" in verdict
    if verdict is None:
        assert HOST in origin
    assert foreign_request(_request(origin=f"http://{HOST}")) is None
