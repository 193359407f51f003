"""The browser review's server side (starlette's TestClient) and its CLI errors."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from tests.aware.review.conftest import dataset, incomplete_ids
from tests.aware.review.web_data import HOSTILE, NAME, csrf_of, login, write_hostile
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.review.web import ReviewWeb
from toolbench.aware.review_reasons import REVIEW_REASONS
from toolbench.aware.schema import read_instances, write_instances

CliResult = tuple[int, str, str]


@pytest.fixture
def web(ds: Path) -> Iterator[ReviewWeb]:
    server = ReviewWeb(ds, hosts=("testserver",), results_token="secret-token")
    yield server
    server.close()


def client_of(web: ReviewWeb) -> TestClient:
    return TestClient(web.app, follow_redirects=True)


def shown_id(html: str) -> str:
    found = re.search(r'<h1 id="instance-id">([^<]*)</h1>', html)
    assert found, html[:2000]
    return found.group(1)


def decide(client: TestClient, token: str, instance: str, action: str, **extra: object) -> str:
    data: dict[str, object] = {"csrf": token, "instance": instance, "action": action, **extra}
    response = client.post("/decide", data=data)  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    return response.text


def decisions(ds: Path) -> dict[str, tuple[str, str, tuple[str, ...], str]]:
    with ReviewStore(default_db_path(ds), [i.id for i in read_instances(ds)]) as store:
        return {
            i: (d.status, d.reviewer, d.reasons, d.note)
            for i, d in store.current_decisions().items()
        }


def test_login_then_accept_reject_skip_undo_and_progress(ds: Path, web: ReviewWeb) -> None:
    order = incomplete_ids(read_instances(ds))
    client = client_of(web)
    assert client.get("/review").url.path == "/"  # no name yet: the name form
    token = login(client, "  ann  ")
    page = client.get("/review").text
    assert shown_id(page) == order[0] and "0 of 5 reviewed" in page
    # The paper's criteria for this manipulation are the reasons offered.
    codes = list(REVIEW_REASONS[read_instances(ds)[1].manipulation])
    assert all(f'value="{code}"' in page for code in codes)
    page = decide(client, token, order[0], "accept")
    assert shown_id(page) == order[1] and "1 of 5 reviewed" in page and ">accepted<" in page
    second = list(REVIEW_REASONS[web.by_id[order[1]].manipulation])
    page = decide(client, token, order[1], "reject", reason=[second[0], second[-1]], note=" why\n")
    assert shown_id(page) == order[2]
    page = decide(client, token, order[2], "skip")
    assert shown_id(page) == order[3] and "2 of 5 reviewed" in page
    seq = re.search(r'name="seq" value="(\d+)"', page)
    assert seq
    page = client.post("/undo", data={"csrf": token, "seq": seq.group(1)}).text
    assert shown_id(page) == order[1] and "undone" in page and "1 of 5 reviewed" in page
    assert decisions(web.dataset) == {order[0]: ("accepted", "ann", (), "")}


def test_a_resent_decision_or_undo_is_not_applied_twice(ds: Path, web: ReviewWeb) -> None:
    order = incomplete_ids(read_instances(ds))
    client = client_of(web)
    token = login(client, "ann")
    decide(client, token, order[0], "accept")
    page = decide(client, token, order[0], "accept")  # a double click
    assert "decided or taken by someone else" in page
    page = decide(client, token, order[0], "skip")
    assert shown_id(page) == order[1]
    decide(client, token, order[1], "accept")
    seq = re.search(r'name="seq" value="(\d+)"', client.get("/review").text)
    assert seq
    client.post("/undo", data={"csrf": token, "seq": seq.group(1)})
    page = client.post("/undo", data={"csrf": token, "seq": seq.group(1)}).text  # resent
    assert "nothing to undo" in page
    for odd in ("²", "-1", "9" * 40, ""):
        assert "nothing to undo" in client.post("/undo", data={"csrf": token, "seq": odd}).text
    assert set(decisions(web.dataset)) == {order[0]}
    with ReviewStore(default_db_path(ds), list(web.by_id)) as store:
        assert [e.action for e in store.events()] == ["accept", "accept", "undo"]


def test_two_reviewers_hold_their_own_leases(ds: Path, web: ReviewWeb) -> None:
    order = incomplete_ids(read_instances(ds))
    ann, bob = client_of(web), client_of(web)
    ann_token, bob_token = login(ann, "ann"), login(bob, "bob")
    assert shown_id(ann.get("/review").text) == order[0]
    assert shown_id(bob.get("/review").text) == order[1]
    assert shown_id(ann.get("/review").text) == order[0]  # a reload shows what ann holds
    # bob cannot decide what ann holds (a forged or stale form).
    page = decide(bob, bob_token, order[0], "accept")
    assert "decided or taken by someone else" in page
    assert decisions(web.dataset) == {}
    decide(ann, ann_token, order[0], "reject", reason=["other"], note="odd")
    assert decisions(web.dataset) == {order[0]: ("rejected", "ann", ("other",), "odd")}
    web.close()  # stopping the server gives bob's lease back
    with ReviewStore(default_db_path(ds), list(web.by_id)) as store:
        assert store.leases() == {}


def test_bad_forms_are_refused(ds: Path, web: ReviewWeb) -> None:
    order = incomplete_ids(read_instances(ds))
    client = client_of(web)
    token = login(client, "ann")
    bad = [
        ({"instance": "nope", "action": "accept"}, 400, "not in this review"),
        ({"instance": order[0], "action": "delete"}, 400, "accept, reject or skip"),
        ({"instance": order[0], "action": "reject", "reason": "made_up"}, 400, "unknown"),
        ({"instance": order[0], "action": "reject", "note": "x" * 3000}, 400, "longer"),
        ({"instance": order[0], "action": "accept", "csrf": "forged"}, 403, "expired"),
    ]
    for fields, status, words in bad:
        response = client.post("/decide", data={"csrf": token, **fields})
        assert response.status_code == status and words in response.text, fields
    page = decide(client, token, order[0], "reject")  # no reason: back with a notice
    assert "needs at least one reason" in page
    page = decide(client, token, order[0], "reject", reason="other")
    assert "needs a note" in page
    too_big = client.post(
        "/decide",
        content=b"csrf=" + token.encode() + b"&note=" + b"x" * 70_000,
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert too_big.status_code == 413
    as_json = client.post("/decide", json={"csrf": token})
    assert as_json.status_code == 415
    assert decisions(web.dataset) == {}


def test_csrf_origin_and_host_checks(web: ReviewWeb) -> None:
    client = client_of(web)
    token = csrf_of(client.get("/").text)
    # No session cookie at all (another browser, a page elsewhere): refused.
    stranger = client_of(web)
    assert stranger.post("/login", data={"csrf": token, "name": "x"}).status_code == 403
    cross = {"origin": "http://evil.example"}
    assert (
        client.post("/login", data={"csrf": token, "name": "x"}, headers=cross).status_code == 403
    )
    site = {"sec-fetch-site": "cross-site"}
    assert client.post("/login", data={"csrf": token, "name": "x"}, headers=site).status_code == 403
    same = {"origin": "http://testserver", "sec-fetch-site": "same-origin"}
    assert client.post("/login", data={"csrf": token, "name": "x"}, headers=same).status_code == 200
    rebound = client.get("/", headers={"host": "attacker.example"})
    assert rebound.status_code == 400 and "unexpected Host" in rebound.text
    # A cookie signed by another server (e.g. a restarted one) is no session.
    other = ReviewWeb(web.dataset, hosts=("testserver",))
    try:
        foreign = TestClient(other.app, cookies=client.cookies, follow_redirects=False)
        assert foreign.get("/review").headers["location"] == "/"
    finally:
        other.close()
    assert client.get("/review").headers["content-security-policy"].startswith("default-src")


def test_names_are_checked(web: ReviewWeb) -> None:
    client = client_of(web)
    token = csrf_of(client.get("/").text)
    for name, words in (("   ", "type your name"), ("x" * 65, "1 to 64"), ("a\x07b", "1 to 64")):
        response = client.post("/login", data={"csrf": token, "name": name})
        assert response.status_code == 400 and words in response.text


def test_results_need_the_token(ds: Path, web: ReviewWeb) -> None:
    order = incomplete_ids(read_instances(ds))
    client = client_of(web)
    token = login(client, "ann")
    decide(client, token, order[0], "reject", reason=["other"], note="n")
    assert client.get("/results").status_code == 403
    assert client.get("/results?token=wrong").status_code == 403
    page = client.get("/results?token=secret-token").text
    assert "1 of 5 reviewed" in page and "<td>ann</td><td>0</td><td>1</td>" in page


def test_hostile_text_is_escaped(tmp_path: Path) -> None:
    ds = write_hostile(tmp_path / "evil.jsonl")
    web = ReviewWeb(ds, hosts=("testserver",))
    try:
        client = client_of(web)
        login(client, NAME)
        page = client.get("/review").text
    finally:
        web.close()
    for text in HOSTILE:
        assert text not in page
    assert "&lt;script&gt;window.__xss = 1;" in page
    assert "&lt;img src=x onerror=" in page
    assert page.count("<script") == 1  # only the shipped key-shortcut file
    assert "<img" not in page and "<svg" not in page and '<a href="javascript' not in page
    assert "href=&#34;javascript:window.__xss = 3" in page
    assert "&lt;b&gt;mallory&lt;/b&gt;" in page


def test_one_decision_per_instance_when_many_requests_race(ds: Path, web: ReviewWeb) -> None:
    """Several threads post for the same instance at once: one decision wins."""
    import threading

    order = incomplete_ids(read_instances(ds))
    client = client_of(web)
    token = login(client, "ann")
    client.get("/review")
    barrier = threading.Barrier(6)

    def post() -> None:
        barrier.wait()
        client.post("/decide", data={"csrf": token, "instance": order[0], "action": "accept"})

    threads = [threading.Thread(target=post) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with ReviewStore(default_db_path(ds), list(web.by_id)) as store:
        assert [e.action for e in store.events(instance_id=order[0])] == ["accept"]


# ---- the command line ----


def test_cli_bad_file_flags_and_busy_port(
    tmp_path: Path, cli: Callable[..., CliResult], ds: Path
) -> None:
    code, _, err = cli("aware", "verify", str(tmp_path / "missing.jsonl"), "--web", "--port", "0")
    missing = f"{tmp_path / 'missing.jsonl'}: no such file"  # checked while parsing the flags
    assert code == 2 and len(err.strip().splitlines()) == 1 and missing in err
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x"}\n{not json\n')
    code, _, err = cli("aware", "verify", str(broken), "--web", "--port", "0")
    assert code == 2 and f"{broken}:1" in err and len(err.strip().splitlines()) == 1
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code, _, err = cli("aware", "verify", str(ds), "--web", "--port", str(port))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"--port {port}" in err and "already in use" in err
    assert not default_db_path(ds).exists()  # nothing left behind
    code, _, err = cli("aware", "verify", str(ds), "--web", "--port", "70000")
    assert code == 2 and "0 to 65535" in err
    code, _, err = cli("aware", "verify", str(ds), "--web", "--reviewer", "ann")
    assert code == 2 and "--reviewer does nothing with --web" in err
    code, _, err = cli(
        "aware", "verify", str(ds), "--web", "--host", "no such host!", "--port", "0"
    )
    assert code == 2 and "--host" in err and len(err.strip().splitlines()) == 1


def test_the_decisions_file_is_the_terminals(tmp_path: Path) -> None:
    """Same default store as the terminal review, and --all adds auto-rejected instances."""
    ds = tmp_path / "d.jsonl"
    instances = dataset(2, auto_rejected=1)
    write_instances(ds, instances)
    web = ReviewWeb(ds, hosts=("testserver",), only_pending=False)
    try:
        assert web.db == default_db_path(ds)
        assert web.queue == incomplete_ids(instances, pending_only=False)
    finally:
        web.close()


def test_a_tab_left_open_past_its_lease_cannot_decide_again(ds: Path) -> None:
    """ann's lease runs out, bob takes and decides the instance; ann's stale form is refused."""
    import time

    order = incomplete_ids(read_instances(ds))
    web = ReviewWeb(ds, hosts=("testserver",), lease_s=0.2)
    try:
        ann, bob = client_of(web), client_of(web)
        ann_token, bob_token = login(ann, "ann"), login(bob, "bob")
        assert shown_id(ann.get("/review").text) == order[0]
        time.sleep(0.3)
        assert shown_id(bob.get("/review").text) == order[0]
        decide(bob, bob_token, order[0], "reject", reason=["other"], note="bob's call")
        page = decide(ann, ann_token, order[0], "accept")
        assert "decided or taken by someone else" in page
    finally:
        web.close()
    assert decisions(ds) == {order[0]: ("rejected", "bob", ("other",), "bob's call")}
