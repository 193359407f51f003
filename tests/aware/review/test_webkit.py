"""The web servers' hostile-input parsers, fuzzed: cookies, form bodies and names."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.testclient import TestClient

from tests.aware.review.conftest import dataset
from tests.aware.review.web_data import login
from toolbench.aware.annotate.webkit import NAME_MAX, Guard, Session, valid_name
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.review.web import ReviewWeb
from toolbench.aware.schema import write_instances

GUARD = Guard("c")


def request_with_cookie(raw: bytes) -> Request:
    return Request({"type": "http", "method": "GET", "headers": [(b"cookie", raw)]})


@given(st.binary(max_size=2000))
def test_any_cookie_is_no_session_unless_we_signed_it(raw: bytes) -> None:
    assert GUARD.session(request_with_cookie(b"c=" + raw)) is None


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=100))
def test_signed_sessions_round_trip_any_name(name: str) -> None:
    from starlette.responses import Response

    response = GUARD.keep(Response(), Session(name=name, csrf="t"))
    cookie = response.headers["set-cookie"].split(";")[0].encode()
    assert GUARD.session(request_with_cookie(cookie)) == Session(name=name, csrf="t")
    assert Guard("c").session(request_with_cookie(cookie)) is None  # another server's secret


@given(st.text(max_size=200))
def test_names_are_bounded_and_printable(text: str) -> None:
    try:
        name = valid_name(text)
    except ValueError:
        return
    assert 1 <= len(name) <= NAME_MAX and name.isprintable() and name == name.strip()


@dataclass
class Fuzzed:
    ds: Path
    web: ReviewWeb
    client: TestClient
    token: str


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzzed]:
    """One signed-in server for every example (hypothesis re-runs the test body)."""
    ds = tmp_path_factory.mktemp("fuzz") / "d.jsonl"
    write_instances(ds, dataset(2))
    web = ReviewWeb(ds, hosts=("testserver",))
    client = TestClient(web.app)  # a server-side exception would be raised here
    yield Fuzzed(ds, web, client, login(client, "fuzz"))
    web.close()
    with ReviewStore(default_db_path(ds), [i.id for i in dataset(2)]) as store:
        decided = [e.instance_id for e in store.events() if e.action in ("accept", "reject")]
    assert len(decided) == len(set(decided))  # nothing decided twice, whatever was sent


FIELDS = st.dictionaries(
    st.sampled_from(["instance", "action", "reason", "note", "seq", "name", "csrf", "x"]),
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(
            ["accept", "reject", "skip", "other", "unnatural", "1", "²"]
            + [i.id for i in dataset(2) if i.label == "incomplete"]
        ),
    ),
    max_size=5,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=3000), fields=FIELDS, urlencoded=st.booleans())
def test_any_form_body_is_refused_or_handled_never_a_crash(
    fuzzed: Fuzzed, body: bytes, fields: dict[str, str], urlencoded: bool
) -> None:
    from urllib.parse import urlencode

    kind = "application/x-www-form-urlencoded" if urlencoded else "text/plain"
    signed = urlencode({**fields, "csrf": fuzzed.token}).encode()
    for path in ("/decide", "/undo", "/login"):
        for content in (body, b"csrf=" + fuzzed.token.encode() + b"&" + body, signed):
            response = fuzzed.client.post(
                path, content=content, headers={"content-type": kind}, follow_redirects=False
            )
            assert response.status_code in (303, 400, 403, 413, 415), (path, response.text)


def test_templates_and_static_files_ship_in_the_wheel() -> None:
    """Every page file is matched by a package-data pattern (else installed copies break)."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    root = Path(__file__).resolve().parents[3]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["toolbench"]
    package = root / "src" / "toolbench"
    files = [
        f.relative_to(package).as_posix()
        for folder in ("templates", "static")
        for f in (package / "aware" / "review" / folder).iterdir()
    ]
    assert files
    for name in files:
        assert any(fnmatch.fnmatch(name, pattern) for pattern in patterns), name


def test_exposure_is_said_only_off_loopback() -> None:
    from toolbench.aware.annotate.webkit import exposure

    assert exposure("127.0.0.1") == "" and exposure("localhost") == ""
    assert "other machines" in exposure("0.0.0.0")


def test_non_ascii_secrets_are_unequal_not_errors() -> None:
    """A cookie signature, CSRF token or results token holding non-ASCII (or a lone surrogate)
    is a wrong secret, never a server error."""
    from toolbench.aware.annotate.webkit import same_secret

    assert same_secret("abc", "abc")
    assert not same_secret("ab\u00e9", "abc")
    assert not same_secret("\ud800", "abc")
