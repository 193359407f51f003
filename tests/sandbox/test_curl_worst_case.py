"""The curl reply line finder and the curl lexer stay linear on hostile replies."""

from __future__ import annotations

from tests.worst_case import assert_linear
from toolbench.sandbox.curl import MAX_LINE, CurlError, parse_curl


def test_first_curl_line_is_linear_on_worst_case_shapes() -> None:
    assert_linear("reply extraction: first_curl_line")


def test_curl_lexer_is_linear_on_worst_case_shapes_with_its_caps_lifted() -> None:
    assert_linear("curl lexer: parse_curl")


def test_a_line_over_the_cap_is_refused_before_it_is_read() -> None:
    line = "curl " + "'" * 1_000_000
    try:
        parse_curl(line)
    except CurlError as exc:
        assert f"at most {MAX_LINE}" in str(exc)
    else:
        raise AssertionError("an oversized curl line was accepted")
