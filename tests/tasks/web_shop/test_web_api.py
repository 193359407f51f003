"""The store's JSON API over real HTTP on loopback (httpx against a live uvicorn): the expert
reaches reward 1 through it with the very pages the task shows a model, a wrong purchase
scores below 1 with the task's reward, the 25-turn cap holds, and hostile requests get a
4xx answer while the server keeps serving. Plus ``toolbench serve web_shop`` itself."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.conftest import CliResult
from tests.tasks.web_shop.live import free_port, serving
from toolbench.cli import serve as serve_cli
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.web.app import MAX_ACTION_CHARS, CyclePicker, ShopConfig, create_app
from toolbench.tasks.web_shop.world import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store.load()


@pytest.fixture(scope="module")
def url(store: Store) -> Iterator[str]:
    app = create_app(ShopConfig(store, "v0", CyclePicker([5, 9], len(store.goals))))
    with serving(app) as base:
        yield base


def _open(client: httpx.Client, goal: int | None = None) -> dict[str, Any]:
    response = client.post("/api/sessions", json={} if goal is None else {"goal": goal})
    assert response.status_code == 201, response.text
    return response.json()


def _step(client: httpx.Client, sid: str, action: str) -> dict[str, Any]:
    response = client.post(f"/api/sessions/{sid}/step", json={"action": action})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("goal", [0, 7, 123])
def test_expert_reaches_reward_1_over_the_api(url: str, store: Store, goal: int) -> None:
    mirror = store.new_session(goal)  # the task's own session, stepped alongside
    with httpx.Client(base_url=url, timeout=30) as client:
        state = _open(client, goal)
        assert state["observation"] == mirror.observation and state["turns"] == 0
        assert state["page"]["has_search_bar"] and state["goal"] == goal
        while not state["done"]:
            action = ideal_action(mirror)
            expected = mirror.step(action)
            state = _step(client, state["id"], action)
            assert state["observation"] == expected.observation
            assert state["page"]["kind"] == expected.page.kind
        assert state["reward"] == 1.0 and state["bought"] and not state["truncated"]
        assert state["info"]["reward_parts"]["reward"] == 1.0
        assert state["page"]["kind"] == "done" and state["page"]["reward"] == 1.0
        again = _step(client, state["id"], "click[buy now]")
        assert again["info"] == {"valid": False, "reason": "the episode is over"}
        assert again["turns"] == state["turns"] and again["reward"] == 0.0
        got = client.get(f"/api/sessions/{state['id']}").json()
        assert got["done"] and got["reward"] == 1.0


def test_wrong_purchase_scores_below_1(url: str, store: Store) -> None:
    goal = store.goal(7)
    mirror = store.new_session(7)
    with httpx.Client(base_url=url, timeout=30) as client:
        state = _open(client, 7)
        state = _step(client, state["id"], f"search[{goal.query}]")
        mirror.step(f"search[{goal.query}]")
        other = next(r["asin"] for r in state["page"]["results"] if r["asin"] != goal.asin)
        assert other.lower() in state["page"]["clickables"]
        for action in (f"click[{other}]", "click[Buy Now]"):
            expected = mirror.step(action)
            state = _step(client, state["id"], action)
        assert state["done"] and state["bought"] and state["info"]["bought"]["asin"] == other
        assert state["reward"] == expected.reward < 1.0


def test_turn_cap_truncates_at_25(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:
        state = _open(client)
        assert state["goal"] in (5, 9)  # the picker's goals, in turn
        for turn in range(1, 26):
            state = _step(client, state["id"], "click[nothing here]")
            assert state["info"]["valid"] is False and state["turns"] == turn
            assert state["done"] is (turn == 25)
        assert state["truncated"] and not state["bought"] and state["reward"] == 0.0
        assert _step(client, state["id"], "search[socks]")["turns"] == 25


HOSTILE: list[tuple[str, bytes, int]] = [
    ("/api/sessions", b"{not json", 400),
    ("/api/sessions", b"[" * 50_000, 400),
    ("/api/sessions", b'{"goal": "seven"}', 400),
    ("/api/sessions", b'{"goal": true}', 400),
    ("/api/sessions", b'{"goal": -1}', 404),
    ("/api/sessions", b'{"goal": 99999999999}', 404),
    ("/api/sessions", b"\xff\xfe", 400),
    ("/api/sessions", b"x" * 70_000, 413),
    ("/api/sessions/nope/step", b'{"action": "click[x]"}', 404),
]


def test_hostile_requests_get_4xx_and_the_server_keeps_serving(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:
        for path, body, status in HOSTILE:
            response = client.post(path, content=body)
            assert response.status_code == status, (path, body[:40], response.text)
            assert "error" in response.json()
        sid = _open(client, 3)["id"]
        for body, status in [
            (b'{"action": 5}', 400),
            (b'{"action": ["click[x]"]}', 400),
            (b"{}", 400),
            ('{"action": "%s"}' % ("a" * (MAX_ACTION_CHARS + 1)), 413),
        ]:
            response = client.post(f"/api/sessions/{sid}/step", content=body)
            assert response.status_code == status, response.text
        for action in ["search[\u202e\U0001f600 \u0000]", "click[a]\nclick[b]", "search[]", "]["]:
            state = _step(client, sid, action)
            assert state["info"]["valid"] is (action.startswith("search[\u202e"))
        assert client.get(f"/api/sessions/{sid}").json()["turns"] == 4
        assert client.get("/s/nope").status_code == 404
        page = client.get("/?goal=3", follow_redirects=True)
        form = page.url.path
        for body, status in [
            (b"action=" + b"x" * (MAX_ACTION_CHARS + 1), 413),
            (b"&".join([b"a=1"] * 20), 400),
            (b"action=\xff\xfe%00%ZZ&query=\x00", 303),
            (b"action=search&query=" + b"%5B" * 3000, 303),
            (b"z" * 70_000, 413),
        ]:
            response = client.post(form, content=body)
            assert response.status_code == status, (body[:30], response.text[:200])
        assert client.get(form).status_code == 200
        assert client.get("/?goal=abc").status_code == 400


def test_toolbench_serve_web_shop_v1(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``toolbench serve web_shop`` through the CLI, in a thread (a subprocess would load the
    shop again): HTML at /, the JSON API with v1 observations, stopped like Ctrl-C stops it."""
    servers: list[Any] = []
    original = serve_cli.run_server

    def capturing(app: Any, host: str, port: int, announce: Any, started: Any = None) -> None:
        original(app, host, port, announce, servers.append)

    monkeypatch.setattr(serve_cli, "run_server", capturing)
    port = free_port()
    result: list[CliResult] = []
    thread = threading.Thread(
        target=lambda: result.append(
            cli("serve", "web_shop", "--port", str(port), "--version", "v1")
        )
    )
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not (servers and servers[0].started):
            assert time.monotonic() < deadline and thread.is_alive(), "serve did not start"
            time.sleep(0.05)
        page = httpx.get(f"http://127.0.0.1:{port}/", follow_redirects=True, timeout=10)
        assert page.status_code == 200 and 'id="instruction"' in page.text
        assert "script-src" not in page.headers["content-security-policy"]
        opened = httpx.post(f"http://127.0.0.1:{port}/api/sessions", json={"goal": 3}, timeout=10)
        assert opened.json()["observation"].startswith("Amazon Shopping Game\nInstruction:")
    finally:
        if servers:
            servers[0].should_exit = True
        thread.join(timeout=20)
    code, out, err = result[0]
    assert code == 0 and f"http://127.0.0.1:{port}/" in out and "v1 pages" in out, (out, err)


def test_serve_flags_are_checked(cli: Callable[..., CliResult]) -> None:
    code, _, err = cli("serve", "web_shop", "--api-key", "k")
    assert code == 2 and "--api-key" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("serve", "open_weather", "--version", "v1")
    assert code == 2 and "--version" in err
    code, _, err = cli("serve", "web_shop", "--version", "v7")
    assert code == 2 and "--version" in err


OPEN_A_RESULT = "<open a result>"  # replaced by a click on a listed product
_ACTIONS = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "click[Next >]",
            "click[< Prev]",
            "click[Back to Search]",
            "click[Buy Now]",
            "click[Description]",
            " search[socks] ",
            "search[tea]",
            "click[black]",
            "click[large]",
            "Action: search[x]",
            OPEN_A_RESULT,
            OPEN_A_RESULT,
        ]
    ),
    st.builds("click[{}]".format, st.text(min_size=1, max_size=12)),
)


@pytest.fixture(scope="module")
def client(store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(ShopConfig(store))) as test_client:
        yield test_client


def test_goal_ids_are_the_stores_goals_and_the_next_one_is_refused(
    client: TestClient, store: Store
) -> None:
    """Goal ids run 0..len(goals)-1 (the property test below draws from that range); one past
    the end is the documented 404, not a session."""
    last = len(store.goals) - 1
    assert client.post("/api/sessions", json={"goal": last}).status_code == 201
    response = client.post("/api/sessions", json={"goal": last + 1})
    assert response.status_code == 404 and "error" in response.json()


@settings(max_examples=30, deadline=None)
@given(data=st.data(), actions=st.lists(_ACTIONS, max_size=8), pick=st.integers(0, 9))
def test_any_actions_reach_the_pages_the_task_session_reaches(
    client: TestClient, store: Store, data: st.DataObject, actions: list[str], pick: int
) -> None:
    """Whatever is sent, the API shows what the task's own session shows after the same
    (stripped) actions: one implementation of the rules. In-process (ASGI) for speed. Goals
    are drawn from the store's own ids (unknown ids are the 404 tested above)."""
    goal = data.draw(st.integers(0, len(store.goals) - 1), label="goal")
    mirror = store.new_session(goal)
    sid = client.post("/api/sessions", json={"goal": goal}).json()["id"]
    for action in actions:
        if action == OPEN_A_RESULT:
            listed = mirror.page.results
            action = f"click[{listed[pick % len(listed)].asin}]" if listed else "search[tea]"
        state = client.post(f"/api/sessions/{sid}/step", json={"action": action}).json()
        if not mirror.done:
            expected = mirror.step(action.strip())
            assert state["observation"] == expected.observation
            assert state["reward"] == expected.reward
            assert state["info"]["valid"] == expected.info["valid"]
        assert state["observation"] == mirror.observation and state["turns"] == mirror.steps
