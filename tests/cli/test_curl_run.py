"""curl tasks through the CLI: hostile replies, --live on a mocked transport, toolbench serve."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from tests.conftest import CliResult, read_run
from tests.sandbox.hostile_curl import HOSTILE_CURL, SENTINEL


def _replay(path: Path, predictions: list[str]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"id": str(i), "prediction": p}) + "\n" for i, p in enumerate(predictions)
        )
    )
    return path


@pytest.mark.parametrize("task", ["the_cat_api", "open_weather"])
def test_hostile_curl_corpus_through_a_full_run(
    cli: Callable[..., CliResult], tmp_path: Path, task: str
) -> None:
    corpus = HOSTILE_CURL[:100]
    Path(SENTINEL).unlink(missing_ok=True)
    replay = _replay(tmp_path / "hostile.jsonl", [line for _, line in corpus])
    out = tmp_path / "run"
    limit = str(min(len(corpus), 100))
    code, _, _ = cli(
        "run", task, "--model", f"replay:{replay}", "--limit", limit, "--out", str(out)
    )
    assert code == 0
    info, records = read_run(out)
    assert info["status"] == "complete"
    for record in records:
        name, line = corpus[int(record["id"])]
        assert not record["success"], name
        if len(line.splitlines()) > 1:
            # Only the first curl line is taken (as the original did); the rest never runs.
            assert record["status"] in ("scored", "model_error"), name
        else:
            assert record["status"] == "model_error", (name, record["message"])
        assert "\n" not in record["message"]
    assert not Path(SENTINEL).exists()


def _cat_mock(router: respx.MockRouter, seen: list[httpx.Request]) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.method in ("POST", "DELETE"):
            return httpx.Response(200, json={"message": "SUCCESS", "id": len(seen)})
        return httpx.Response(
            200, json=[{"id": "abc", "url": "https://cdn2.thecatapi.com/images/abc.jpg"}]
        )

    router.route(host="api.thecatapi.com").mock(side_effect=answer)


def test_live_mode_sends_parsed_requests_with_the_key(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THE_CAT_API_KEY", "live-key-123")
    seen: list[httpx.Request] = []
    args = ("run", "the_cat_api", "--model", "oracle", "--live", "--limit", "8")
    with respx.mock(assert_all_called=False) as router:
        _cat_mock(router, seen)
        assert cli(*args, "--out", str(tmp_path / "a"))[0] == 0
        calls = len(seen)
        # Each distinct request went out once: the gold and the (identical) oracle answer
        # share one cached live response.
        assert calls == len({(r.method, str(r.url), r.content) for r in seen}) >= 5
        assert all(r.headers["x-api-key"] == "live-key-123" for r in seen)
        assert all(r.url.host == "api.thecatapi.com" for r in seen)
        # Same requests again: answered from the live response cache, no new traffic.
        assert cli(*args, "--out", str(tmp_path / "b"))[0] == 0
        assert len(seen) == calls
    info, _ = read_run(tmp_path / "a")
    assert info["config"]["live"] is True
    assert info["counts"]["the_cat_api"]["infra_error"] == 0


def test_live_mode_backs_off_on_429(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPEN_WEATHER_KEY", "ow-key")
    calls: list[httpx.Request] = []
    seen: set[str] = set()

    def answer(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        if str(request.url) not in seen:  # every request is rate-limited once, then answered
            seen.add(str(request.url))
            return httpx.Response(
                429, headers={"retry-after": "0"}, json={"cod": 429, "message": "slow down"}
            )
        return httpx.Response(200, json={"cod": 200, "name": "x", "main": {"temp": 280.0}})

    with respx.mock(assert_all_called=False) as router:
        router.route(host="api.openweathermap.org").mock(side_effect=answer)
        code, _, _ = cli(
            "run", "open_weather", "--model", "oracle", "--live", "--limit", "3",
            "--no-cache", "--concurrency", "1", "--out", str(tmp_path / "w"),
        )  # fmt: skip
    assert code == 0
    assert all(r.url.params.get("appid") == "ow-key" for r in calls)
    # Without the cache each sample sends its prediction (429, then a retry) and its gold.
    assert len(calls) == 3 * len(seen)
    info, _ = read_run(tmp_path / "w")
    assert info["counts"]["open_weather"]["infra_error"] == 0


def test_live_mode_without_a_key_is_a_user_error(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    os.environ.pop("THE_CAT_API_KEY", None)
    code, _, err = cli(
        "run", "the_cat_api", "--model", "oracle", "--live", "--out", str(tmp_path / "x")
    )
    assert code == 2 and "THE_CAT_API_KEY" in err
    code, _, err = cli(
        "run", "booking", "--model", "oracle", "--live", "--out", str(tmp_path / "y")
    )
    assert code == 2 and "no live API" in err


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize(
    ("task", "path"),
    [
        ("open_weather", "/data/2.5/weather?q=London&appid=toolbench-simulated-key"),
        ("the_cat_api", "/v1/breeds?limit=3"),
    ],
)
def test_serve_answers_real_http_on_loopback(task: str, path: str) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolbench.cli", "serve", task, "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}{path}", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert response.status_code == 200
        body = response.json()
        assert (body["name"] == "London") if task == "open_weather" else (len(body) == 3)
        bad = httpx.get(f"http://127.0.0.1:{port}/data/2.5/weather?q=London&appid=wrong", timeout=2)
        if task == "open_weather":
            assert bad.status_code == 401
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _original_curl_layout(root: Path) -> Path:
    """Original-shaped data written by us: no functions/, examples/, or world state."""
    ow, cat = root / "open_weather" / "v0", root / "the_cat_api" / "v0"
    ow.mkdir(parents=True)
    cat.mkdir(parents=True)
    weather = [
        ("Air quality forecast near latitude 12.5, longitute -70.1?",
         "curl -X GET 'https://api.openweathermap.org/data/2.5/air_pollution/forecast?lat=12.5&lon=-70.1&appid={API_KEY}'"),
        ("Weather in Lyon right now, in French and metric units.",
         "curl -X GET 'https://api.openweathermap.org/data/2.5/weather?q=Lyon&appid={API_KEY}&units=metric&lang=fr'"),
    ]  # fmt: skip
    (ow / "test.jsonl").write_text(
        "".join(json.dumps({"prompt": q, "completion": [c]}) + "\n" for q, c in weather)
    )
    cats = [
        ("Remove image k7q from my favourites.",
         "curl -X DELETE 'https://api.thecatapi.com/v1/favourites/k7q'", True),
        ("Give image zz1 a thumbs down.",
         "curl -X POST 'https://api.thecatapi.com/v1/votes' "
         "--data '{\"image_id\":\"zz1\", \"value\":0}'",
         False),
        ("Unfavourite image m3w please.",
         "curl -X DELETE 'https://api.thecatapi.com/v1/favourites/m3w'", False),
        ("Two Abyssinian pictures, oldest first.",
         "curl -X GET 'https://api.thecatapi.com/v1/images/search?limit=2&order=ASC&breed_ids=abys'",
         False),
    ]  # fmt: skip
    (cat / "test.jsonl").write_text(
        "".join(
            json.dumps({"prompt": q, "completion": [c], "compare_string_only": s}) + "\n"
            for q, c, s in cats
        )
    )
    return root


def test_oracle_on_original_layout_curl_data(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = _original_curl_layout(tmp_path / "data")
    out = tmp_path / "run"
    code, _, _ = cli(
        "run", "open_weather,the_cat_api", "--model", "oracle", "--data-dir", str(root),
        "--out", str(out),
    )  # fmt: skip
    assert code == 0
    info, records = read_run(out)
    for task, n in (("open_weather", 2), ("the_cat_api", 4)):
        assert info["metrics"][task]["success_rate"] == 1.0
        assert info["counts"][task] == {"scored": n, "model_error": 0, "infra_error": 0,
                                       "context_overflow": 0}  # fmt: skip
    # The DELETE of a favourite that only the gold mentions worked because the world was
    # derived from the gold requests (original lines carry no state).
    assert any(r["details"].get("same_state") for r in records if r["task"] == "the_cat_api")


def test_a_live_outage_is_an_infra_error_record_and_exit_3(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real API unreachable (no network): the sample is an infra error, retried on resume,
    and the run exits 3. It once ended the run with a traceback and no record."""

    async def unreachable(self: httpx.AsyncClient, request: httpx.Request, **_: Any) -> None:
        raise httpx.ConnectError("no route to host", request=request)

    monkeypatch.setattr(httpx.AsyncClient, "send", unreachable)
    monkeypatch.setenv("THE_CAT_API_KEY", "dummy")
    out = tmp_path / "run"
    code, _, err = cli(
        "run", "the_cat_api", "--model", "oracle", "--live", "--limit", "1", "--out", str(out)
    )
    assert code == 3, err
    info, records = read_run(out)
    assert info["status"] == "incomplete"
    assert [r["status"] for r in records] == ["infra_error"]
    assert "ConnectError" in records[0]["message"]
