"""The human baseline in a browser, server side (starlette's TestClient), and its CLI errors."""

from __future__ import annotations

import html
import io
import re
import socket
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest
from rich.console import Console
from starlette.testclient import TestClient

from tests.aware.evaluate.test_human import SECRET_WORDS, make_dataset, session
from tests.aware.review.web_data import csrf_of, login
from toolbench.aware.evaluate.human import HumanSession
from toolbench.aware.evaluate.human_store import default_db_path
from toolbench.aware.evaluate.human_web import HumanWeb
from toolbench.aware.evaluate.prompts import EXPLICIT_SYSTEM, explicit_user_message
from toolbench.tables.grid import Grid

CliResult = tuple[int, str, str]


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "aware.jsonl")


@pytest.fixture
def study(ds: Path) -> HumanSession:
    return session(ds, n=8)


@pytest.fixture
def web(study: HumanSession) -> Iterator[HumanWeb]:
    server = HumanWeb(study, hosts=("testserver",), results_token="tok")
    yield server
    server.close()


def client_of(web: HumanWeb) -> TestClient:
    return TestClient(web.app, follow_redirects=True)


def position(page: str) -> int:
    found = re.search(r'<h1 id="position">Question (\d+) of \d+</h1>', page)
    assert found, page[:3000]
    return int(found.group(1))


def answer(client: TestClient | httpx.Client, token: str, pos: int, choice: str) -> str:
    response = client.post("/answer", data={"csrf": token, "position": pos, "choice": choice})
    assert response.status_code == 200, response.text
    return response.text


def stored(study: HumanSession) -> list[tuple[str, str, str, str | None]]:
    with study.open_store() as store:
        return [(e.instance_id, e.annotator, e.action, e.answer) for e in store.events()]


def test_the_participant_sees_the_models_text_and_nothing_else(
    study: HumanSession, web: HumanWeb
) -> None:
    client = client_of(web)
    token = login(client, "ann")
    seen: list[str] = []
    for _ in range(len(study.sample.ids)):
        page = client.get("/answer").text
        pos = position(page)
        message = re.search(r'<pre class="message" id="message">(.*?)</pre>', page, re.S)
        assert message
        instance = study.sample.instances[pos - 1]
        assert html.unescape(message.group(1)) == explicit_user_message(instance)
        instructions = re.search(r'<p class="text" id="instructions">(.*?)</p>', page, re.S)
        assert instructions and html.unescape(instructions.group(1)) == EXPLICIT_SYSTEM
        seen.append(page)
        answer(client, token, pos, "yes")
    seen.append(client.get("/answer").text)
    assert "Every question is answered" in seen[-1]
    for page in seen:
        lowered = page.lower()
        for word in SECRET_WORDS:
            assert word not in lowered, word
        for instance_id in study.sample.ids:
            assert instance_id not in page


def test_answers_skip_undo_and_progress(study: HumanSession, web: HumanWeb) -> None:
    client = client_of(web)
    token = login(client, "ann")
    order = [study.position[i] for i in study.sample.ids]
    page = client.get("/answer").text
    assert position(page) == order[0] and "0 of 8 answered" in page
    page = answer(client, token, order[0], "yes")
    assert position(page) == order[1] and "1 of 8 answered" in page
    page = answer(client, token, order[1], "skip")
    assert position(page) == order[2] and "skipped" in page
    page = answer(client, token, order[1], "skip")  # a resent skip: sent on, not stored again
    assert position(page) == order[2] and "skipped" in page
    page = answer(client, token, order[2], "no")
    seq = re.search(r'name="seq" value="(\d+)"', page)
    assert seq and "2 of 8 answered" in page
    page = client.post("/undo", data={"csrf": token, "seq": seq.group(1)}).text
    assert position(page) == order[2] and "undone" in page and "1 of 8 answered" in page
    resent = client.post("/undo", data={"csrf": token, "seq": seq.group(1)}).text
    assert "nothing to undo" in resent
    page = answer(client, token, order[0], "no")  # a resent form for an answered one
    assert "answered by someone else meanwhile" in page
    ids = study.sample.ids
    assert stored(study) == [
        (ids[0], "ann", "answer", "yes"),
        (ids[1], "ann", "skip", None),
        (ids[2], "ann", "answer", "no"),
        (ids[2], "ann", "undo", None),
    ]
    with study.open_store() as store:
        assert all(g.seconds >= 0 for g in store.given())


def test_browser_and_terminal_share_the_answer_store(study: HumanSession, web: HumanWeb) -> None:
    ann, bob = client_of(web), client_of(web)
    login(ann, "ann")
    bob_token = login(bob, "bob")
    first, second = position(ann.get("/answer").text), position(bob.get("/answer").text)
    assert first != second  # each holds a lease on their own question
    out = io.StringIO()
    study.annotate("cat", Console(file=out, width=100), stdin=io.StringIO("y\nq\n"))
    third = study.position[stored(study)[0][0]]
    assert third not in (first, second)
    page = answer(bob, bob_token, second, "no")
    assert "2 of 8 answered" in page and position(page) not in (first, second, third)


def test_bad_forms_and_results_token(study: HumanSession, web: HumanWeb) -> None:
    client = client_of(web)
    token = login(client, "ann")
    pos = position(client.get("/answer").text)
    for fields, status in (
        ({"position": "0", "choice": "yes"}, 400),
        ({"position": "abc", "choice": "yes"}, 400),
        ({"position": "²", "choice": "yes"}, 400),  # a digit to str.isdigit, not to int()
        ({"position": "9" * 40, "choice": "yes"}, 400),
        ({"position": "99", "choice": "yes"}, 400),
        ({"position": str(pos), "choice": "maybe"}, 400),
        ({"position": str(pos), "choice": "yes", "csrf": "forged"}, 403),
    ):
        response = client.post("/answer", data={"csrf": token, **fields})
        assert response.status_code == status, fields
    odd = client.post("/undo", data={"csrf": token, "seq": "²"})
    assert odd.status_code == 200 and "nothing to undo" in odd.text
    cross = client.post(
        "/answer",
        data={"csrf": token, "position": pos, "choice": "yes"},
        headers={"origin": "null"},
    )
    assert cross.status_code == 403
    assert stored(study) == []
    answer(client, token, pos, "yes")
    assert client.get("/results").status_code == 403
    assert client.get("/results?token=nope").status_code == 403
    page = client.get("/results?token=tok").text
    assert "Human baseline" in page and "answered 1 of 8" in page and "annotators" in page


class _Tables(HTMLParser):
    """Every ``<table>`` of a page: caption, header cells, body rows (cell texts), and any
    ``<pre>`` text (a terminal table dumped into the page would land there)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self.pre: list[str] = []
        self._part = ""
        self._cell: list[str] | None = None
        self._in_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"caption": "", "head": [], "body": []})
        elif tag in ("thead", "tbody", "caption"):
            self._part = tag
        elif tag == "tr" and self._part == "tbody":
            self.tables[-1]["body"].append([])
        elif tag in ("td", "th"):
            self._cell = []
        self._in_pre = self._in_pre or tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            text, self._cell = "".join(self._cell), None
            table = self.tables[-1]
            (table["head"] if self._part == "thead" else table["body"][-1]).append(text)
        elif tag == "caption":
            self._part = ""
        elif tag == "pre":
            self._in_pre = False

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        elif self._part == "caption":
            self.tables[-1]["caption"] += data
        elif self._in_pre:
            self.pre.append(data)


def test_results_page_is_an_html_table_over_http(study: HumanSession) -> None:
    """A real server on loopback: the results are <table>s with a header and a body whose
    cells are the terminal's numbers, and an annotator's markup is shown as text."""
    from tests.aware.review.web_data import NAME
    from tests.aware.review.webserver import serving

    web = HumanWeb(study, results_token="tok")
    try:
        with (
            serving(web.app) as url,
            httpx.Client(base_url=url, follow_redirects=True, timeout=30) as client,
        ):
            for name, choice in ((NAME, "yes"), ("bob", "no"), ("bob", "yes")):
                client.cookies.clear()
                token = login(client, name)
                answer(client, token, position(client.get("/answer").text), choice)
            response = client.get("/results?token=tok")
    finally:
        web.close()
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "<script>window.__xss" not in response.text  # the name is escaped
    parsed = _Tables()
    parsed.feed(response.text)
    assert parsed.pre == [] and "─" not in response.text and "│" not in response.text
    grids = [b for b in study.results() if isinstance(b, Grid)]
    assert [t["caption"] for t in parsed.tables] == [g.title for g in grids]
    for table, grid in zip(parsed.tables, grids, strict=True):
        assert table["head"] == grid.columns
        assert table["body"] == [[grid.text(c) for c in row] for row in grid.rows]
    overall = parsed.tables[0]["body"][-1]
    assert overall[:2] == ["overall", "3"] and re.fullmatch(
        r"[\d.]+ \[[\d.]+, [\d.]+\]", overall[2]
    )
    people = {row[0]: row[1:] for row in parsed.tables[1]["body"]}
    assert people[NAME][0] == "1" and people["bob"][0] == "2" and people["all"][0] == "3"
    text = html.unescape(response.text)
    assert "answered 3 of 8" in text and "confusion (label: yes / no)" in text


def test_only_the_question_handed_to_an_annotator_takes_their_answer(study: HumanSession) -> None:
    """A real server on loopback. Forms carry a position, which anyone can edit: an answer for
    a question that was not handed to this annotator (nobody's, or someone else's) is a 409
    and nothing is stored; their own question takes it, and a resent form for it goes on to
    the next question without a second answer. A restarted server hands questions anew."""
    from tests.aware.review.webserver import serving

    def post(client: httpx.Client, token: str, pos: int, choice: str) -> httpx.Response:
        return client.post("/answer", data={"csrf": token, "position": pos, "choice": choice})

    everything = set(range(1, len(study.sample.ids) + 1))
    web = HumanWeb(study, results_token="tok")
    try:
        with (
            serving(web.app) as url,
            httpx.Client(base_url=url, follow_redirects=True, timeout=30) as ann,
            httpx.Client(base_url=url, follow_redirects=True, timeout=30) as bob,
        ):
            ann_token = login(ann, "ann")
            login(bob, "bob")
            mine, bobs = position(ann.get("/answer").text), position(bob.get("/answer").text)
            nobodys = min(everything - {mine, bobs})
            for pos in (nobodys, bobs):
                for choice in ("yes", "no", "skip"):
                    response = post(ann, ann_token, pos, choice)
                    assert response.status_code == 409, (pos, choice, response.text[:300])
                    assert "not given to you" in response.text
            assert stored(study) == []
            assert position(ann.get("/answer").text) == mine  # still hers, still on screen
            assert "1 of 8 answered" in answer(ann, ann_token, mine, "yes")
            resent = answer(ann, ann_token, mine, "no")  # a double click: sent on, not stored
            assert "answered by someone else meanwhile" in resent
            assert stored(study) == [(study.sample.ids[mine - 1], "ann", "answer", "yes")]
    finally:
        web.close()
    restarted = HumanWeb(study, results_token="tok")
    try:
        with (
            serving(restarted.app) as url,
            httpx.Client(base_url=url, follow_redirects=True, timeout=30) as bob,
        ):
            token = login(bob, "bob")
            shown = position(bob.get("/answer").text)
            other = min(everything - {mine, shown})
            assert post(bob, token, other, "no").status_code == 409
            assert "2 of 8 answered" in answer(bob, token, shown, "no")
    finally:
        restarted.close()
    assert [e[1:] for e in stored(study)] == [("ann", "answer", "yes"), ("bob", "answer", "no")]


# ---- the command line ----


def test_cli_errors_are_one_line(tmp_path: Path, ds: Path, cli: Callable[..., CliResult]) -> None:
    code, _, err = cli("aware", "human", str(tmp_path / "none.jsonl"), "--web", "--port", "0")
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1
    for flag in (["--annotator", "ann"], ["--report"]):
        code, _, err = cli("aware", "human", str(ds), "--web", *flag)
        assert code == 2 and f"{flag[0]} does nothing with --web" in err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code, _, err = cli("aware", "human", str(ds), "--n", "4", "--web", "--port", str(port))
    assert code == 2 and "already in use" in err and len(err.strip().splitlines()) == 1
    assert not default_db_path(ds).exists()
    # Answers started with other options are refused before serving, as in the terminal.
    session(ds, n=8).open_store().close()
    code, _, err = cli("aware", "human", str(ds), "--n", "4", "--web", "--port", "0")
    assert code == 2 and "belong to another sample" in err and len(err.strip().splitlines()) == 1


def test_login_page_has_a_token(web: HumanWeb) -> None:
    client = client_of(web)
    assert csrf_of(client.get("/").text)
    assert client.get("/answer").url.path == "/"


def test_the_command_serves_until_ctrl_c(ds: Path) -> None:
    """End to end: the real command in its own process, answered over HTTP, stopped by SIGINT."""
    import os
    import signal
    import subprocess
    import sys

    import httpx

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = ["aware", "human", str(ds), "--n", "4", "--balanced", "--web", "--port=0"]
    server = subprocess.Popen(
        [sys.executable, "-m", "toolbench.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        lines = [server.stdout.readline() for _ in range(3)]
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", lines[0])
        token = re.search(r"results\?token=(\S+)", lines[2])
        assert found and token, lines
        with httpx.Client(base_url=found.group(1), follow_redirects=True, timeout=30) as client:
            csrf = csrf_of(client.get("/").text)
            page = client.post("/login", data={"csrf": csrf, "name": "ann"}).text
            pos = position(page)
            page = client.post(
                "/answer", data={"csrf": csrf_of(page), "position": pos, "choice": "no"}
            ).text
            assert "1 of 4 answered" in page
            assert client.get("/results").status_code == 403
            results = client.get(f"/results?token={token.group(1)}").text
            assert "answered 1 of 4" in results
    finally:
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert "server stopped; every answer is saved" in out
    study = session(ds, n=4)
    assert [(a, e, c) for _, a, e, c in stored(study)] == [("ann", "answer", "no")]
