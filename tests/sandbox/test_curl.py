"""parse_curl reads model-written curl lines as data: equivalent spellings give the same request,
hostile lines are refused with a one-line CurlError, and nothing else ever escapes."""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import httpx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.sandbox.hostile_curl import HOST, HOSTILE_CURL, SENTINEL
from toolbench.kinds.service import SIMULATED_API_KEY
from toolbench.sandbox.curl import (
    MAX_LINE,
    MAX_URL,
    CurlError,
    HttpRequest,
    first_curl_line,
    parse_curl,
)

CAT = "api.thecatapi.com"
HOSTS = frozenset({HOST, CAT, "localhost:8123"})
W = f"https://{HOST}/data/2.5/weather"


def parse(line: str, **kwargs: Any) -> HttpRequest:
    return parse_curl(line, api_key=SIMULATED_API_KEY, allowed_hosts=HOSTS, **kwargs)


def same(req: HttpRequest) -> tuple[Any, ...]:
    """What two spellings of one request must agree on (query order aside)."""
    return (req.method, req.scheme, req.host, req.path, req.query_dict(), req.headers, req.body)


# -- equivalent spellings ----------------------------------------------------------------------

EQUIVALENT = [
    ("param_order", f"curl '{W}?lat=1.5&lon=2'", f"curl '{W}?lon=2&lat=1.5'"),
    ("double_quotes", f"curl -X GET '{W}?lat=1&lon=2'", f'curl -X GET "{W}?lat=1&lon=2"'),
    ("get_omitted", f"curl -X GET '{W}?lat=1'", f"curl '{W}?lat=1'"),
    ("request_long", f"curl --request GET '{W}?lat=1'", f"curl -X GET '{W}?lat=1'"),
    ("method_case", f"curl -X get '{W}?lat=1'", f"curl -XGET '{W}?lat=1'"),
    ("pct20_vs_plus", f"curl '{W}?q=New%20York'", f"curl '{W}?q=New+York'"),
    ("data_vs_long", f"curl '{W}' -d 'a=1'", f"curl '{W}' --data 'a=1'"),
    ("data_vs_raw", f"curl '{W}' -d 'a=1'", f"curl '{W}' --data-raw 'a=1'"),
    ("data_vs_binary", f"curl '{W}' -d 'a=1'", f"curl '{W}' --data-binary 'a=1'"),
    ("data_glued", f"curl '{W}' -d 'a=1'", f"curl '{W}' -d'a=1'"),
    ("post_explicit", f"curl '{W}' -d 'a=1'", f"curl -X POST '{W}' -d 'a=1'"),
    ("get_data", f"curl -G '{W}' -d 'q=London'", f"curl '{W}?q=London'"),
    ("get_long_appends", f"curl --get '{W}?lat=1' -d 'q=London'", f"curl '{W}?lat=1&q=London'"),
    ("urlencode", f"curl -G '{W}' --data-urlencode 'q=New York'", f"curl '{W}?q=New%20York'"),
    ("header_spacing", f"curl -H 'X-Api-Key: k' '{W}'", f"curl -H 'x-api-key:k' '{W}'"),
    ("header_glued", f"curl -H 'x-api-key: k' '{W}'", f"curl -H\"x-api-key: k\" '{W}'"),
    ("header_long", f"curl -H 'x-api-key: k' '{W}'", f"curl --header 'x-api-key: k' '{W}'"),
    ("api_key", f"curl '{W}?appid={{API_KEY}}'", f"curl '{W}?appid={SIMULATED_API_KEY}'"),
    (
        "api_key_header",
        f"curl -H 'x-api-key: {{API_KEY}}' '{W}'",
        f"curl -H 'x-api-key: {SIMULATED_API_KEY}' '{W}'",
    ),
    ("harmless_flags", f"curl -sSL --compressed '{W}'", f"curl '{W}'"),
    ("flag_cluster", f"curl -sSXGET '{W}'", f"curl -s -S -X GET '{W}'"),
    ("url_flag", f"curl --url '{W}?lat=1'", f"curl '{W}?lat=1'"),
    ("unquoted_plain", f"curl {W}?lat=1", f"curl '{W}?lat=1'"),
    ("escaped_amp", f"curl {W}?lat=1\\&lon=2", f"curl '{W}?lat=1&lon=2'"),
    ("fragment_dropped", f"curl '{W}?lat=1#top'", f"curl '{W}?lat=1'"),
    ("host_case", "curl 'HTTPS://API.OpenWeatherMap.org/data/2.5/weather'", f"curl '{W}'"),
    (
        "escaped_json",
        'curl https://api.thecatapi.com/v1/votes -d "{\\"a\\":1}"',
        f"curl https://{CAT}/v1/votes -d '{{\"a\":1}}'",
    ),
    ("surrounding_space", f"  curl '{W}'  \n", f"curl '{W}'"),
]


@pytest.mark.parametrize(("name", "a", "b"), EQUIVALENT, ids=[e[0] for e in EQUIVALENT])
def test_equivalent_spellings(name: str, a: str, b: str) -> None:
    assert same(parse(a)) == same(parse(b))


def test_weather_get() -> None:
    req = parse(f"curl -X GET '{W}?lat=-56.7&lon=133.3&appid={{API_KEY}}&units=metric'")
    assert (req.method, req.scheme, req.host, req.path) == (
        "GET",
        "https",
        HOST,
        "/data/2.5/weather",
    )
    assert req.query == (
        ("lat", "-56.7"),
        ("lon", "133.3"),
        ("appid", SIMULATED_API_KEY),
        ("units", "metric"),
    )
    assert req.body is None and req.json_body() is None and req.headers == ()
    assert req.url() == f"{W}?lat=-56.7&lon=133.3&appid={SIMULATED_API_KEY}&units=metric"


def test_cat_vote_post_with_json_data() -> None:
    req = parse(
        f'curl -X POST \'https://{CAT}/v1/votes\' --data \'{{"image_id":"zz9", "value":1}}\''
    )
    assert (req.method, req.path) == ("POST", "/v1/votes")
    assert req.json_body() == {"image_id": "zz9", "value": 1}
    assert req.headers == ()  # no invented content-type: the service reads the bytes it is given


def test_data_alone_means_post_and_pieces_join_with_ampersand() -> None:
    req = parse(f"curl '{W}' -d a=1 --data 'b=2 3' --data-urlencode 'c=x&y'")
    assert req.method == "POST"
    assert req.body == b"a=1&b=2 3&c=x%26y"


def test_json_option_sets_method_and_headers_unless_given() -> None:
    req = parse(f"curl --json '{{\"a\":' --json '1}}' https://{CAT}/v1/votes")
    assert req.method == "POST" and req.json_body() == {"a": 1}
    assert req.headers == (("content-type", "application/json"), ("accept", "application/json"))
    req = parse(f"curl -H 'Accept: */*' --json '{{}}' https://{CAT}/v1/votes")
    assert req.headers == (("accept", "*/*"), ("content-type", "application/json"))


def test_delete_and_path_decoding() -> None:
    req = parse(f"curl -X DELETE 'https://{CAT}/v1/favourites/a%20b'")
    assert (req.method, req.path) == ("DELETE", "/v1/favourites/a b")
    assert req.url() == f"https://{CAT}/v1/favourites/a%20b"


def test_leading_ampersand_and_commas_in_query() -> None:
    req = parse(f"curl -X GET 'https://{CAT}/v1/images/search?&order=DESC&breeds=ab,cd'")
    assert req.query == (("order", "DESC"), ("breeds", "ab,cd"))
    assert req.url().endswith("?order=DESC&breeds=ab,cd")


def test_query_dict_last_wins_and_blank_values_kept() -> None:
    req = parse(f"curl '{W}?a=1&a=2&flag&b='")
    assert req.query == (("a", "1"), ("a", "2"), ("flag", ""), ("b", ""))
    assert req.query_dict() == {"a": "2", "flag": "", "b": ""}


def test_json_body_rejects_non_json() -> None:
    with pytest.raises(CurlError, match="not JSON"):
        parse(f"curl '{W}' -d 'a=1'").json_body()


def test_without_api_key_the_placeholder_stays_and_hosts_are_open() -> None:
    req = parse_curl("curl 'https://example.org/x?k={API_KEY}'")
    assert (req.host, req.query) == ("example.org", (("k", "{API_KEY}"),))


def test_api_key_cannot_change_the_split() -> None:
    req = parse_curl(f"curl '{W}?k={{API_KEY}}'", api_key="a';touch'x")
    assert req.query == (("k", "a';touch'x"),)


def test_port_only_when_allowed_with_it() -> None:
    assert parse("curl http://localhost:8123/x").host == "localhost:8123"
    with pytest.raises(CurlError, match="port"):
        parse_curl("curl http://localhost:8123/x")


def test_accepted_requests_are_sendable() -> None:
    """Header values must be ASCII and the re-encoded URL short enough for httpx, or httpx would
    raise when the request is sent, outside any per-sample handler."""
    with pytest.raises(CurlError, match="non-ASCII value"):
        parse(f"curl -H 'x-api-key: caf\u00e9' '{W}'")
    req = parse(f"curl -H 'x-api-key: a\tb' '{W}?q=" + "\u8a9e" * 3000 + "'")
    assert len(req.url()) <= MAX_URL
    httpx.Request(req.method, req.url(), headers=list(req.headers))
    with pytest.raises(CurlError, match="too long once percent-encoded"):
        parse(f"curl '{W}?q=" + "\u8a9e" * 3600 + "'")


def test_data_raw_at_is_literal() -> None:
    assert parse(f"curl '{W}' --data-raw '@not-a-file'").body == b"@not-a-file"


def test_quoted_operators_are_data() -> None:
    req = parse(f"curl '{W}?q=a;b|c>d<e&f=`x`$(y)' -d 'x=1; rm -rf /'")
    assert req.query == (("q", "a;b|c>d<e"), ("f", "`x`$(y)"))
    assert req.body == b"x=1; rm -rf /"


# -- first_curl_line -----------------------------------------------------------------------------

REPLY = f"""Sure! Here is the request:

```bash
curl -X GET '{W}?lat=1&lon=2'
```

curl -X GET 'https://example.org/second'
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (REPLY, f"curl -X GET '{W}?lat=1&lon=2'"),
        (f"Action:\r\n  curl '{W}'  \r\nDone.", f"curl '{W}'"),
        (f"Use `curl '{W}'` for this.", None),  # mid-sentence: not a line starting with curl
        (f"`curl '{W}'`", f"curl '{W}'"),
        (f"```curl '{W}'```", f"curl '{W}'"),
        ("curl", "curl"),
        ("curling is a sport\ncurly braces", None),
        ("no command here", None),
        ("", None),
    ],
)
def test_first_curl_line(text: str, expected: str | None) -> None:
    assert first_curl_line(text) == expected


def _first_curl_line_naive(text: str) -> str | None:
    for raw in text.splitlines():
        line = raw.strip().strip("`").strip()
        if re.match(r"curl(?:\s|$)", line):
            return line
    return None


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(["curl", "curly", " ", "`", "x", "\n", "\r\n", "\r", "\x0b", "\x1c",
                         "\x85", "\u2028", "\t", "\u00a0"]) | st.text(max_size=3),
        max_size=20,
    ).map("".join)
)  # fmt: skip
def test_first_curl_line_matches_the_line_by_line_rule(text: str) -> None:
    assert first_curl_line(text) == _first_curl_line_naive(text)


def test_degenerate_replies_are_scanned_fast() -> None:
    start = time.perf_counter()
    assert first_curl_line("(\n" * 3_000_000) is None
    assert first_curl_line("(\n" * 3_000_000 + f"curl '{W}'") == f"curl '{W}'"
    assert time.perf_counter() - start < 0.5


def test_fenced_reply_parses() -> None:
    line = first_curl_line(REPLY)
    assert line is not None and parse(line).query_dict() == {"lat": "1", "lon": "2"}


# -- hostile lines -------------------------------------------------------------------------------


def test_corpus_is_large_and_named_uniquely() -> None:
    names = [name for name, _ in HOSTILE_CURL]
    assert len(names) >= 25 and len(set(names)) == len(names)


def _tripwire(*args: object, **kwargs: object) -> None:
    raise AssertionError(f"parse_curl caused a side effect: {args!r}")


TRIPWIRES = [
    (subprocess, "Popen"),
    (os, "system"),
    (os, "popen"),
    (os, "fork"),
    (os, "posix_spawn"),
    (os, "execv"),
    (os, "open"),
    (builtins, "open"),
    (io, "open"),
]


@pytest.mark.parametrize(("name", "line"), HOSTILE_CURL, ids=[name for name, _ in HOSTILE_CURL])
def test_hostile_line_is_refused_without_side_effects(name: str, line: str) -> None:
    Path(SENTINEL).unlink(missing_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        for module, attr in TRIPWIRES:
            mp.setattr(module, attr, _tripwire)
        with pytest.raises(CurlError) as info:
            parse(line)
    message = str(info.value)
    assert message and "\n" not in message and "\r" not in message and len(message) < 300
    assert not Path(SENTINEL).exists()


def test_tripwires_fire() -> None:
    with pytest.MonkeyPatch.context() as mp:
        for module, attr in TRIPWIRES:
            mp.setattr(module, attr, _tripwire)
        with pytest.raises(AssertionError):
            os.system(f"touch {SENTINEL}")
        with pytest.raises(AssertionError):
            open(SENTINEL, "w")  # noqa: SIM115
    assert not Path(SENTINEL).exists()


@pytest.mark.parametrize(
    "line",
    [
        "curl '" + "'" * (MAX_LINE - 10),
        "curl " + '""' * ((MAX_LINE - 10) // 2),
        "curl " + "\\a" * ((MAX_LINE - 10) // 2),
        f"curl '{W}?" + "a=1&" * ((MAX_LINE - 80) // 4) + "'",
        "x" * 1_000_000,
    ],
)
def test_worst_case_lines_are_fast(line: str) -> None:
    start = time.perf_counter()
    with contextlib.suppress(CurlError):
        parse(line)
    assert time.perf_counter() - start < 0.5


# -- properties ----------------------------------------------------------------------------------


def check_any(line: str) -> None:
    """Only CurlError may escape; whatever parses must be sendable by httpx (which raises on
    non-ASCII header values and over-long URLs) and round-trip through url()."""
    try:
        req = parse(line)
    except CurlError as exc:
        assert "\n" not in str(exc)
        return
    httpx.Request(req.method, req.url(), headers=list(req.headers), content=req.body)
    again_line = f"curl -X {req.method} '{req.url()}'"
    assume(len(again_line) <= MAX_LINE)  # url() percent-encodes, which can outgrow the cap
    again = parse(again_line)
    assert (again.method, again.host, again.path, again.query) == (
        req.method,
        req.host,
        req.path,
        req.query,
    )


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_raises_only_curl_error(text: str) -> None:
    check_any(text)
    check_any("curl " + text)
    check_any(f"curl '{W}?" + text)
    first_curl_line(text)


PIECES = [
    "curl", "-X", "GET", "POST", "PUT", "-XDELETE", "-H", "'x-api-key: {API_KEY}'", "-d", "-G",
    "'a=1'", "--data-urlencode", "'q=a b'", "--json", "'{\"a\": 1}'", "--url", "-sSL", "-o",
    "-K-", "--data-raw", "@x", "-", "--", f"'{W}?lat=1&lon=2'", f"{W}?lat=1", f'"{W}"',
    f"https://{CAT}/v1/votes", "https://evil.example/", "file:///etc/passwd",
    "http://localhost:8123", ";", "&&", "&", "|", ">", "<", "(", ")", "`", "$(", "${", "$", "#",
    "'", '"', "\\", "\n", "\x00",
    "%20", "%2e%2e", "+", "?", "=", "{API_KEY}", "@", ":", "[::1]", "\u2028", "é", "\ud800",
]  # fmt: skip
curl_shaped = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=12
).flatmap(
    lambda parts: st.lists(
        st.sampled_from([" ", "", "\t"]), min_size=len(parts), max_size=len(parts)
    ).map(lambda seps: "".join(p + s for p, s in zip(parts, seps, strict=True)))
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(curl_shaped)
def test_curl_shaped_text_raises_only_curl_error(line: str) -> None:
    check_any(line)
    check_any("curl " + line)


VALID_ARGS = [
    "-X GET", "-XPOST", "--request PUT", "-H 'x-api-key: {API_KEY}'", "-H'Accept: */*'", "-G",
    "-d 'a=1'", "--data-raw '@x'", "--data-urlencode 'q=a b'", "-sSL", "--compressed",
    "--json '{}'", '-d "{\\"a\\":1}"', "--data-binary 'x=%20'",
]  # fmt: skip
URLS = [f"'{W}?lat=1&lon=2'", f"{W}?lat=1", f'"{W}?q=a+b"', f"https://{CAT}/v1/votes",
        "http://localhost:8123/a%2Fb"]  # fmt: skip
# Mostly valid lines (about a quarter parse), so the round-trip check in check_any does work.
mostly_valid = st.tuples(
    st.sampled_from(URLS),
    st.lists(
        st.one_of(st.sampled_from(VALID_ARGS), st.sampled_from(PIECES), st.text(max_size=4)),
        max_size=6,
    ),
    st.integers(0, 6),
).map(lambda a: "curl " + " ".join([*a[1][: a[2]], a[0], *a[1][a[2] :]]))


@settings(max_examples=500, deadline=None)
@given(mostly_valid)
def test_mostly_valid_lines_parse_or_refuse_and_round_trip(line: str) -> None:
    check_any(line)


segment = st.text(st.characters(exclude_categories=["Cs", "Cc"]), max_size=8).filter(
    lambda s: s not in (".", "..")
)
text_value = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)


@settings(max_examples=300, deadline=None)
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    host=st.sampled_from(sorted(HOSTS)),
    segments=st.lists(segment, max_size=4),
    pairs=st.lists(st.tuples(text_value, text_value), max_size=4),
    encode=st.sampled_from([quote_plus, lambda s: quote(s, safe="")]),
    get_data=st.booleans(),
)
def test_valid_requests_parse_and_round_trip(
    method: str, host: str, segments: list[str], pairs: list[tuple[str, str]], encode: Any,
    get_data: bool,
) -> None:  # fmt: skip
    scheme = "http" if ":" in host else "https"
    path = "/" + "/".join(quote(s, safe="") for s in segments)
    query = "&".join(f"{encode(k)}={encode(v)}" for k, v in pairs)
    if get_data:
        line = f"curl -G -X {method} '{scheme}://{host}{path}' -d '{query}'"
    else:
        line = f"curl -X {method} '{scheme}://{host}{path}?{query}'"
    req = parse(line)
    assert (req.method, req.host) == (method, host)
    assert req.path == "/" + "/".join(segments)
    assert req.query == tuple(pairs)
    check_any(line)
