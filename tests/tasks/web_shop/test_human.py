"""``toolbench web_shop human``: a person (here: a script posting the store's forms over HTTP)
shops; each finished episode is a record of a run folder, made by the task's own solve loop,
that ``toolbench report`` reads like a model's run. Stopping keeps the finished episodes; the
same command continues with the rest and stops the server when the last one is recorded."""

from __future__ import annotations

import asyncio
import dataclasses
import html
import json
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import CliResult, read_run
from tests.tasks.web_shop.live import free_port
from toolbench.cli import serve as serve_cli
from toolbench.config import RunConfig
from toolbench.runner.engine import solve_sample
from toolbench.runner.run import prepare_tasks
from toolbench.tasks.web_shop.expert import ideal_action
from toolbench.tasks.web_shop.web.episode import Episode
from toolbench.tasks.web_shop.web.human import Handed, HumanModel
from toolbench.tasks.web_shop.world import Session, Store


class Person:
    """Shops through the HTML forms, as a browser would post them."""

    def __init__(self, base: str) -> None:
        self.client = httpx.Client(base_url=base, timeout=30, follow_redirects=True)
        self.page = self.client.get("/")
        self.path = self.page.url.path

    def act(self, action: str) -> None:
        if action.startswith("search["):
            form = {"action": "search", "query": action[len("search[") : -1]}
        else:
            form = {"action": action}
        self.page = self.client.post(self.path, data=form)
        assert self.page.status_code == 200, self.page.text


def _expert(person: Person, session: Session, steps: int = 99) -> None:
    for _ in range(steps):
        if session.done:
            return
        action = ideal_action(session)
        session.step(action)
        person.act(action)


class HumanCommand:
    """``toolbench web_shop human`` in a thread (the shop stays loaded in this process)."""

    def __init__(self, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch) -> None:
        self.servers: list[Any] = []
        original = serve_cli.run_server

        def capturing(app: Any, host: str, port: int, announce: Any, started: Any = None) -> None:
            def both(server: Any) -> None:
                self.servers.append(server)
                started(server)

            original(app, host, port, announce, both)

        monkeypatch.setattr(serve_cli, "run_server", capturing)
        self.cli = cli

    def start(self, *args: str) -> tuple[threading.Thread, list[CliResult], str]:
        self.servers.clear()
        port = free_port()
        result: list[CliResult] = []
        argv = ("web_shop", "human", "--port", str(port), *args)
        thread = threading.Thread(target=lambda: result.append(self.cli(*argv)))
        thread.start()
        deadline = time.monotonic() + 60
        while not (self.servers and self.servers[0].started):
            assert time.monotonic() < deadline and thread.is_alive(), result
            time.sleep(0.05)
        return thread, result, f"http://127.0.0.1:{port}"


def test_person_is_recorded_resumed_and_reported(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    store, out = Store.load(), tmp_path / "human"
    args = ("--n", "3", "--name", "alice", "--out", str(out))
    command = HumanCommand(cli, monkeypatch)

    thread, result, base = command.start(*args)
    person = Person(base)
    _expert(person, store.new_session(0))  # goal 0: the right product
    assert person.page.text.count('id="reward">1.000<') == 1
    assert '<a href="/" id="next">Next goal</a>' in person.page.text  # goals 1 and 2 are left
    assert 'id="ended"' not in person.page.text
    other = _buy_a_wrong_product(Person(base), store, 1)  # "Next goal": goal 1
    person = Person(base)  # goal 2: two actions, then the person stops
    _expert(person, store.new_session(2), steps=2)
    command.servers[0].should_exit = True
    thread.join(timeout=30)
    code, stdout, _ = result[0]
    assert code == 130 and "alice: 2 of 3 episodes recorded" in stdout
    info, records = read_run(out)
    assert info["status"] == "interrupted" and [r["id"] for r in records] == ["0", "1"]

    thread, result, base = command.start(*args)  # the same command: goal 2 from the start
    person = Person(base)
    assert "alice: 2 of 3 episodes recorded" in person.page.text
    _expert(person, store.new_session(2))
    thread.join(timeout=30)  # the last record stops the server by itself
    code, stdout, _ = result[0]
    assert code == 0 and "alice: 3 of 3 episodes recorded" in stdout
    _the_last_page_links_nowhere(person.page.text, base, out)
    info, records = read_run(out)
    assert info["status"] == "complete" and info["config"]["model"] == "human:alice"
    assert [r["id"] for r in records] == ["0", "1", "2"] and info["log_verified"]
    rewards = [r["metrics"]["reward"] for r in records]
    assert rewards[0] == rewards[2] == 1.0 and rewards[1] < 1.0
    assert info["metrics"]["web_shop"]["reward"] == pytest.approx(sum(rewards) / 3)
    assert info["metrics"]["web_shop"]["success_rate"] == 1.0
    assert records[1]["details"]["bought"] == other
    assert len(records[2]["calls"]) == records[2]["metrics"]["mean_turns"]
    assert {call["finish_reason"] for call in records[2]["calls"]} == {"human"}
    assert info["model_notes"] == {"person": "alice"}

    oracle = tmp_path / "oracle"
    _same_as_the_oracle_run(cli, oracle, {0: records[0], 2: records[2]})
    code, text, err = cli("report", str(out), str(oracle))
    assert code == 0, err
    assert "human:alice" in text and "reward" in text
    code, text, _ = cli("report", "--json", str(out))
    reported = json.loads(text)["runs"][str(out)]["web_shop"]
    assert reported["purchase_match_rate"]["mean"] == pytest.approx(2 / 3)


def _the_last_page_links_nowhere(page: str, base: str, out: Path) -> None:
    """The page of the last goal's end offers no "Next goal" (nor any link to the server,
    which has stopped): it says the session is over and which commands read the run."""
    with pytest.raises(httpx.ConnectError):
        httpx.get(base, timeout=5)  # the server is gone: a link to it would be a dead end
    assert 'id="reward"' in page and 'id="next"' not in page and "href=" not in page
    text = html.unescape(page)
    assert "This session is over: all 3 goals are recorded" in text
    assert f"<code>toolbench report {out}</code>" in text
    assert "<code>toolbench run web_shop --model MODEL --limit 3</code>" in text


def _buy_a_wrong_product(person: Person, store: Store, goal: int) -> str:
    assert "alice: 1 of 3 episodes recorded" in person.page.text
    query, wanted = store.goal(goal).query, store.goal(goal).asin
    listed = [store.products[i].asin for i in store.search(query)]
    other = next(asin for asin in listed if asin != wanted)
    for action in (f"search[{query}]", f"click[{other}]", "click[Buy Now]"):
        person.act(action)
    return other


def _same_as_the_oracle_run(
    cli: Callable[..., CliResult], oracle: Path, mine: dict[int, dict[str, Any]]
) -> None:
    """Where the person played the expert's actions, the record is the oracle's record (its
    schema, trace, metrics and prompt hashes: the pages the person acted on were the pages
    the oracle was shown)."""
    code, _, err = cli("run", "web_shop", "--model", "oracle", "--limit", "3", "--out", str(oracle))
    assert code == 0, err
    _, model_records = read_run(oracle)
    for position, record in mine.items():
        theirs = model_records[position]
        assert set(record) == set(theirs)
        assert record["trace"] == theirs["trace"] and record["metrics"] == theirs["metrics"]
        hashes = [c["prompt_hash"] for c in theirs["calls"]]
        assert [c["prompt_hash"] for c in record["calls"]] == hashes


def test_bad_flags_are_exit_2(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    code, _, err = cli("web_shop", "human", "--name", "two words")
    assert code == 2 and "--name" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("web_shop", "human", "--n", "0")
    assert code == 2 and "--n" in err
    code, _, err = cli("web_shop", "human", "--host", "no.such.host.invalid")
    assert code == 2 and "--host" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        code, _, err = cli("web_shop", "human", "--port", port, "--out", str(tmp_path / "x"))
    assert code == 2 and f"--port {port}: already in use" in err
    assert not (tmp_path / "x").exists()  # nothing written


def test_an_action_on_another_page_than_the_task_shows_is_no_record_of_the_person() -> None:
    """The record is the task's own episode; the person acts in a mirror of it. An action
    handed for another page than the task's request shows (a harness bug) makes the sample an
    infra error, retried by the next run, never a scored record of the person."""
    config = RunConfig(tasks=["web_shop"], model="human:x", limit=1, use_cache=False)
    prepared = prepare_tasks(config, _NoPrograms(), None)
    p = prepared[0]
    mirror = Episode(p.data.runtime.store.new_session(0))
    while not mirror.over:
        mirror.step(ideal_action(mirror.session))
    handed = [Handed(0, n, turn) for n, turn in enumerate(mirror.turns, start=1)]

    async def shop(actions: list[Handed]) -> dict[str, Any]:
        model = HumanModel("x")
        assert model.fit(prepared) == {"person": "x"}
        solving = asyncio.create_task(solve_sample(p.task, p.resources, p.samples[0], 0, model))
        while model.first_goal is None:
            await asyncio.sleep(0)
        for action in actions:
            assert model.hand(action)
        return await solving

    record = asyncio.run(shop(handed))
    assert record["status"] == "scored" and record["metrics"]["reward"] == 1.0
    assert [call["text"] for call in record["calls"]] == [t.action for t in mirror.turns]
    moved = dataclasses.replace(handed[1].turn, page="another page")
    record = asyncio.run(shop([handed[0], dataclasses.replace(handed[1], turn=moved)]))
    assert record["status"] == "infra_error" and "harness bug" in record["message"]


class _NoPrograms:
    """web_shop runs no programs: any use of the sandbox is a bug."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"web_shop used the sandbox ({name})")


def test_in_a_browser_next_goal_only_while_a_goal_is_left(
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    browser_page: Any,
) -> None:
    """Chromium shops both goals of ``--n 2`` through the real command: after the first,
    "Next goal" opens the second; after the second there is no link to follow (the server
    has stopped) but the session's end and the commands to run next, on screen."""
    from tests.tasks.web_shop.test_web_browser import _act

    store, out, page = Store.load(), tmp_path / "human", browser_page
    page.set_default_timeout(15_000)
    thread, result, base = HumanCommand(cli, monkeypatch).start(
        "--n", "2", "--name", "bo", "--out", str(out)
    )
    page.goto(base)
    for goal in (0, 1):
        mirror = store.new_session(goal)
        assert store.goal(goal).instruction_text in page.inner_text("#instruction")
        while not mirror.done:
            action = ideal_action(mirror)
            mirror.step(action)
            _act(page, action)
        if goal == 0:
            assert page.inner_text("#next") == "Next goal" and page.locator("#ended").count() == 0
            page.click("#next")
            page.wait_for_load_state()
    thread.join(timeout=30)
    assert result and result[0][0] == 0, result
    assert page.inner_text("#reward") == "1.000"
    assert page.locator("#next").count() == 0 and page.locator("a").count() == 0
    ended = page.locator("#ended")
    assert ended.is_visible()
    assert "This session is over: all 2 goals are recorded" in ended.inner_text()
    commands = page.locator("#ended code").all_inner_texts()
    assert commands[0] == f"toolbench report {out}"
    assert commands[1] == "toolbench run web_shop --model MODEL --limit 2"
