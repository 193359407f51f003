"""Fuzzing the curl tasks' HTTP path: hypothesis strategies and one checker per target.

Shared by the CI-sized tests (``tests/kinds/test_http_fuzz.py``) and the 10,000-case command
(``benchmarks/fuzz_http.py``). Each checker takes one generated case and returns None when the
target behaved, or a one-line description of what escaped. The checkers deliberately bypass the
executor's catch-all (services are called as raw ASGI apps, the way uvicorn calls them under
``toolbench serve``), so a bug a hostile request finds in a simulator is counted, not absorbed.

Two kinds of case per service: *structured* requests (real endpoints and parameter names with
hostile values: huge/NaN/overflowing numbers, non-ASCII, NUL, percent garbage, deep JSON) and
*raw* garbage (any method, path, query bytes, header bytes and body).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
from hypothesis import strategies as st

from toolbench.kinds.service import SIMULATED_API_KEY, SimulatedService
from toolbench.sandbox.curl import MAX_URL, CurlError, first_curl_line, parse_curl
from toolbench.tasks.open_weather.service import ROUTES
from toolbench.tasks.open_weather.service import SERVICE as WEATHER
from toolbench.tasks.the_cat_api.catalogue import IMAGES
from toolbench.tasks.the_cat_api.service import SERVICE as CAT

OW_HOST, CAT_HOST = "api.openweathermap.org", "api.thecatapi.com"
HOSTS = frozenset({OW_HOST, CAT_HOST})

# -- hostile values ------------------------------------------------------------------------------

NUMBERS = [
    "1.5e999", "-1e309", "1.0e400", "-9.9e9999", "1e-400", "nan", "NaN", "inf", "-Infinity",
    "9" * 4301, "9" * 5000, "1" + "0" * 4300, "-" + "9" * 4299, "0x10", "1_000", "\u0661\u0662",
    "+-1", "1.", ".5", "-0", "  7  ", "1\x00", str(2**63), str(-(2**63) - 1), "1e15", "1e16",
    "4.9e-324", "1.7976931348623157e308", "0", "-1", "40", "41", "100", "101", "1e6",
    "1685620800", "1606435200", "99999999999",
]  # fmt: skip
STRINGS = [
    "", " ", "\x00", "\t", "é", "\u202e", "\U0001d7d9", "\ufb01", "\u0130", "ß", "\u212a",
    "a" * 9000,
    "%", "%zz", "%00", "%ff", "%c0%af", "../..", "<script>", "'", '"', "&", "=", ";", ",", ",,,",
    "London", "London,GB", "London,,", ",,,,,", "San Jose,CA,US", "94040,us", "{API_KEY}", "[]",
    "{}", "null", "true", "xml", "html", "metric", "imperial", "zh_cn", "DESC", "RAND", "beng",
    "beng,siam", "jpg,png", "0XYvRd7oD", "\u2028", "\ufeff", "\U0010ffff",
]  # fmt: skip
OW_PARAMS = ["lat", "lon", "q", "zip", "id", "units", "mode", "lang", "cnt", "start", "end",
             "limit", "appid", "APPID"]  # fmt: skip
CAT_PARAMS = ["limit", "page", "order", "mime_types", "breed_ids", "breeds", "category_ids",
              "has_breeds", "include_breeds", "include_categories", "sub_id", "q", "name",
              "api_key"]  # fmt: skip
KEY = ("appid", SIMULATED_API_KEY)
HERE = [("lat", "51.5"), ("lon", "-0.12")]
DAY = [("start", "1606435200"), ("end", "1606521600")]
# A valid request per endpoint: mutations start from here, so hostile values reach the code
# behind the location and key checks (where cnt=1.5e999 used to raise).
OW_BASE: dict[str, list[tuple[str, str]]] = {
    "/data/2.5/weather": [("q", "London"), KEY],
    "/data/2.5/forecast": [*HERE, ("cnt", "3"), KEY],
    "/data/2.5/air_pollution": [*HERE, KEY],
    "/data/2.5/air_pollution/forecast": [*HERE, KEY],
    "/data/2.5/air_pollution/history": [*HERE, *DAY, KEY],
    "/geo/1.0/direct": [("q", "London"), ("limit", "2"), KEY],
    "/geo/1.0/reverse": [*HERE, KEY],
    "/geo/1.0/zip": [("zip", "94040,US"), KEY],
}
IMAGE_IDS = [image.id for image in IMAGES[:3]]
CAT_BASE: dict[str, list[tuple[str, str]]] = {
    "/v1/images/search": [("limit", "5"), ("order", "DESC"), ("breed_ids", "beng")],
    f"/v1/images/{IMAGE_IDS[0]}": [],
    "/v1/breeds": [("limit", "3"), ("page", "1")],
    "/v1/breeds/search": [("q", "sia")],
    "/v1/breeds/beng": [],
    "/v1/categories": [("limit", "2")],
    "/v1/favourites": [("sub_id", "me"), ("order", "DESC")],
    "/v1/favourites/4001": [],
    "/v1/votes": [("limit", "2")],
    "/v1/votes/900001": [],
}
CAT_STATE = {
    "favourites": [{"id": 4001, "image_id": IMAGE_IDS[0]}, {"id": "tu", "image_id": "tu"}],
    "votes": [{"id": 900001, "image_id": IMAGE_IDS[1], "value": 1}],
}
METHODS = ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"]

values = st.one_of(
    st.sampled_from(NUMBERS),
    st.sampled_from(STRINGS),
    st.text(max_size=12),
    st.integers().map(str),
    st.floats().map(repr),
)
json_values = st.one_of(
    values,
    st.integers(),
    st.integers(0, 4).map(lambda e: 10 ** (300 * e)),
    st.floats(),
    st.sampled_from(IMAGE_IDS),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=8,
    ),
)


HOSTILE_BODIES = [
    '{"image_id": "\\ud800"}', '{"image_id": "x", "value": ' + "9" * 4400 + "}",
    f'{{"image_id": "{IMAGE_IDS[0]}", "value": ' + "9" * 4400 + "}",
    f'{{"image_id": "{IMAGE_IDS[0]}", "value": 1e999}}',
    f'{{"image_id": "{IMAGE_IDS[0]}", "sub_id": "\\udfff"}}',
    '{"value": NaN}', '{"value": Infinity, "image_id": "x"}', "image_id=%FF",
    '"x"', "[1]", "{", "\x00", f"image_id={IMAGE_IDS[0]}&value=1e999", "[" * 3000,
]  # fmt: skip


def _deep(depth: int) -> str:
    return '{"image_id": ' + "[" * depth + "]" * depth + "}"


# Write bodies: a valid favourite/vote with fields replaced by hostile JSON (json.dumps writes
# NaN/Infinity for float specials), or raw hostile text.
json_bodies = st.one_of(
    st.fixed_dictionaries(
        {"image_id": st.sampled_from(IMAGE_IDS) | json_values, "value": json_values},
        optional={"sub_id": json_values},
    ).map(json.dumps),
    st.sampled_from([10, 31, 32, 33, 100, 999, 1000, 3000, 5000]).map(_deep),
    st.sampled_from(HOSTILE_BODIES),
    st.text(max_size=40),
)


@dataclass(frozen=True)
class Case:
    """One request, as a service (or uvicorn) would receive it."""

    method: str
    path: str
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: str | None = None


def _mutate(base: list[tuple[str, str]], edits: list[tuple[int, str, str]]) -> list[Any]:
    """Apply (how, name, value) edits: 0 replaces ``name``'s value, 1 appends a repeat of it,
    2 drops it."""
    pairs = list(base)
    for how, name, value in edits:
        if how == 1:
            pairs.append((name, value))
            continue
        pairs = [p for p in pairs if p[0] != name]
        if how == 0:
            pairs.append((name, value))
    return pairs


def _structured(
    bases: dict[str, list[tuple[str, str]]], params: list[str], writes: list[str]
) -> st.SearchStrategy[Case]:
    """Valid requests with a few hostile edits: mostly to known parameter names, sometimes a
    wrong method, a mangled path, odd headers or a hostile body."""
    hostile = st.sampled_from(NUMBERS) | st.sampled_from(NUMBERS) | values

    def edits(path: str) -> st.SearchStrategy[list[tuple[int, str, str]]]:
        own = sorted({name for name, _ in bases[path]})  # the endpoint's own names, most often
        names = st.sampled_from(own or params) | st.sampled_from(params) | st.text(max_size=5)
        return st.lists(st.tuples(st.integers(0, 2), names, hostile), min_size=1, max_size=3)

    def one_value(path: str) -> st.SearchStrategy[Case]:
        """A valid GET with one own parameter made hostile: the likeliest way to a bug."""
        own = sorted({name for name, _ in bases[path]}) or params
        return st.tuples(st.sampled_from(own), st.integers(0, 1), hostile).map(
            lambda e: Case("GET", path, _mutate(bases[path], [(e[1], e[0], e[2])]))
        )

    path = st.sampled_from(list(bases))
    return path.flatmap(one_value) | st.builds(
        lambda pe, m, suffix, h, b: Case(m, pe[0] + suffix, _mutate(bases[pe[0]], pe[1]), h, b),
        path.flatmap(lambda p: st.tuples(st.just(p), edits(p))),
        st.sampled_from(["GET"] * 6 + METHODS),
        st.sampled_from(["", "", "", "/", "/x", "/%00", "//"]),
        st.lists(st.tuples(st.sampled_from(["x-api-key", "accept", "x"]), values), max_size=2),
        st.none() | json_bodies,
    ) | st.builds(
        lambda p, b: Case("POST", p, [], [], b), st.sampled_from(writes), json_bodies
    )  # fmt: skip


weather_cases = _structured(OW_BASE, OW_PARAMS, list(OW_BASE))
cat_cases = _structured(CAT_BASE, CAT_PARAMS, ["/v1/favourites", "/v1/votes"])

# -- curl lines ----------------------------------------------------------------------------------


def curl_line(case: Case, host: str, quote_char: str) -> str:
    """``case`` as a model might write it: values inserted raw (not encoded) and quoted."""
    url = f"https://{host}{case.path}"
    if case.query:
        url += "?" + "&".join(f"{k}={v}" for k, v in case.query)
    parts = ["curl", "-X", case.method, f"{quote_char}{url}{quote_char}"]
    parts += [f"-H {quote_char}{k}: {v}{quote_char}" for k, v in case.headers]
    if case.body is not None:
        parts.append(f"-d {quote_char}{case.body}{quote_char}")
    return " ".join(parts)


PIECES = ["curl", "-X", "-H", "-d", "-G", "--json", "--url", "--data-urlencode", "'", '"', "\\",
          ";", "&", "|", "$(", "`", "#", "\n", "\x00", "\ud800", "(", "(\n" * 50, "%", "@",
          f"https://{OW_HOST}/data/2.5/weather?", f"https://{CAT_HOST}/v1/votes", "[::1]",
          "user@", ":8080", "{API_KEY}", "=", "&&", "é", "\u202e"]  # fmt: skip
garbage_lines = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(PIECES) | st.text(max_size=8), max_size=16).map(" ".join),
    st.lists(st.sampled_from(PIECES), max_size=16).map("".join).map(lambda s: "curl " + s),
    st.tuples(st.sampled_from(PIECES), st.integers(1, 3000)).map(lambda a: "curl " + a[0] * a[1]),
)
curl_lines = st.one_of(
    garbage_lines,
    st.tuples(weather_cases, st.sampled_from(["'", '"', ""])).map(
        lambda a: curl_line(a[0], OW_HOST, a[1])
    ),
    st.tuples(cat_cases, st.sampled_from(["'", '"', ""])).map(
        lambda a: curl_line(a[0], CAT_HOST, a[1])
    ),
)


def check_parser(line: str) -> str | None:
    """Only CurlError may escape; what parses must be sendable by httpx and re-encodable."""
    try:
        first_curl_line(line)
        request = parse_curl(line, api_key=SIMULATED_API_KEY, allowed_hosts=HOSTS)
    except CurlError as exc:
        message = str(exc)
        return None if message and "\n" not in message else f"bad CurlError text {message!r:.80}"
    except Exception as exc:
        return f"{type(exc).__name__}: {exc!s:.120}"
    try:
        if request.body is not None:
            with contextlib.suppress(CurlError):
                request.json_body()
        url = request.url()
        if len(url) > MAX_URL:
            return f"accepted a {len(url)}-character URL"
        httpx.Request(request.method, url, headers=list(request.headers), content=request.body)
    except Exception as exc:
        return f"accepted but unsendable: {type(exc).__name__}: {exc!s:.120}"
    return None


# -- raw garbage ---------------------------------------------------------------------------------

raw_cases = st.builds(
    lambda method, path, query, headers, body: (method, path, query, headers, body),
    method=st.sampled_from(METHODS) | st.text(st.characters(max_codepoint=127), max_size=8),
    path=st.text(st.characters(exclude_categories=["Cs"]), max_size=30).map(lambda p: "/" + p)
    | st.sampled_from([*CAT_BASE, *ROUTES]),
    query=st.binary(max_size=60) | st.sampled_from([b"appid=" + SIMULATED_API_KEY.encode()]),
    headers=st.lists(st.tuples(st.binary(max_size=10), st.binary(max_size=30)), max_size=4),
    body=st.binary(max_size=200),
)
RawCase = tuple[str, str, bytes, list[tuple[bytes, bytes]], bytes]


def scope_of(case: Case) -> RawCase:
    """A structured case as raw ASGI fields, encoded the way httpx/uvicorn would deliver it."""
    query = "&".join(
        f"{quote(k, safe='', errors='replace')}={quote(v, safe='', errors='replace')}"
        for k, v in case.query
    ).encode("ascii")
    headers = [(k.encode("latin-1"), v.encode("utf-8", "surrogatepass")) for k, v in case.headers]
    body = b"" if case.body is None else case.body.encode("utf-8", "surrogatepass")
    return case.method, case.path, query, headers, body


# -- calling a service as uvicorn would -----------------------------------------------------------


class ServiceFuzzer:
    """Calls one service's ASGI app on a fresh world per case, on one private event loop."""

    def __init__(self, service: SimulatedService, fields: dict[str, Any]) -> None:
        self.service = service
        self.fields = fields
        self.loop = asyncio.new_event_loop()

    def close(self) -> None:
        self.loop.close()

    def check(self, case: RawCase) -> str | None:
        """None if the app answered below 500; otherwise what went wrong, on one line."""
        try:
            status = self.loop.run_until_complete(self._call(case))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc!s:.120}"
        return None if status is not None and status < 500 else f"HTTP {status}"

    async def _call(self, case: RawCase) -> int | None:
        method, path, query, headers, body = case
        raw_path = path.encode("utf-8")
        # a content-length that lies (huge or negative) is part of the garbage
        headers = [(k.lower(), v) for k, v in headers]
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "https", "path": path, "raw_path": raw_path,
            "query_string": query, "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 1), "server": ("testserver", 443),
            "state": {"world": self.service.new_state(self.fields)},
        }  # fmt: skip
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        status: list[int] = []

        async def receive() -> dict[str, Any]:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await self.service.app(scope, receive, send)
        return status[0] if status else None


def weather_fuzzer() -> ServiceFuzzer:
    return ServiceFuzzer(WEATHER, {})


def cat_fuzzer() -> ServiceFuzzer:
    return ServiceFuzzer(CAT, {"state": CAT_STATE, "seed": 3})
