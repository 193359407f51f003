"""Issue 37, findings 7, 8, 9 and 11, where a user meets them: ``toolbench run``.

- 7: an HTTP server that is no OpenAI API (a file server, a URL without ``/v1``) is exit 2
  naming ``--base-url`` and the fix, before any sample, instead of 7 attempts per sample and
  "run the same command again"; a server that only lacks ``/models``, or fails for a moment,
  still runs; a 501 is not retried.
- 8: an agent that dies of an exception group is recorded with its error (``ValueError:
  boom``), not the group's border of dashes.
- 9: ``hf:`` never reaches a network: a hub name is exit 2 saying how to give a folder, and a
  folder with a missing file is an error too, both without one request to the hub.
- 11: ``--executor ray`` without an address joins the cluster ``ray start --head`` left in
  Ray's current-cluster file, or starts a private one where that cluster has died, and says
  which.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from tests.fakeserver import FakeOpenAIServer
from tests.models.hostile_server import LISTING, HostileServer, chat_reply, send_json
from tests.raycluster import CLUSTER_ENV, free_port, local_cluster

AGENTS = Path(__file__).parents[1] / "agents" / "agents_for_tests"
GOOD = send_json(chat_reply({"role": "assistant", "content": "API.search()"}))


def toolbench(*args: str, env: dict[str, str] | None = None, timeout_s: float = 300) -> CliResult:
    """``toolbench ARGS`` in its own process: (exit code, stdout, stderr)."""
    command = [sys.executable, "-m", "toolbench.cli", *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout_s, env=env or dict(os.environ)
    )
    return done.returncode, done.stdout, done.stderr


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def run_args(base_url: str, out: Path, limit: int = 5) -> list[str]:
    return [
        "run", "home_search", "--model", "openai:x", "--base-url", base_url, "--out", str(out),
        "--no-cache", "--limit", str(limit), "--concurrency", "1", "--timeout", "5",
    ]  # fmt: skip


# ---- 7: a server that is no OpenAI API ----


@contextlib.contextmanager
def file_server(folder: Path) -> Iterator[str]:
    """``python -m http.server`` serving ``folder`` on 127.0.0.1: its base URL."""
    port = free_port()
    command = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]
    process = subprocess.Popen(
        command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait(10)


def test_a_file_server_is_exit_2_naming_the_base_url_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "www").mkdir()
    with file_server(tmp_path / "www") as url:
        start = time.monotonic()
        code, _, err = toolbench(*run_args(url, tmp_path / "run"))
        took = time.monotonic() - start
    assert code == 2, err
    line = one_line(err)
    assert line.startswith(f"toolbench: error: --base-url {url}: no OpenAI-compatible API"), line
    assert "POST /chat/completions: HTTP 501" in line
    assert f"add /v1 to it (--base-url {url}/v1)" in line
    assert took < 20  # was 27 s for 5 samples, then exit 3
    assert not (tmp_path / "run").exists()  # refused before the run began


def test_a_url_without_v1_is_exit_2_before_any_request(cli: Callable[..., CliResult],
                                                       tmp_path: Path) -> None:  # fmt: skip
    with FakeOpenAIServer() as server:
        root = server.base_url.removesuffix("/v1")
        code, _, err = cli(*run_args(root, tmp_path / "run"))
        assert server.calls == 0  # no sample's request was sent (was: 404 x every sample)
    assert code == 2, err
    line = one_line(err)
    assert "GET /models: HTTP 404" in line and "POST /completions: HTTP 404" in line
    assert line.endswith(f"add /v1 to it (--base-url {root}/v1), the API's root on most servers")


def test_a_url_ending_in_the_path_is_told_to_give_the_root(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    with FakeOpenAIServer() as server:
        code, _, err = cli(*run_args(f"{server.base_url}/chat/completions", tmp_path / "run"))
    assert code == 2, err
    assert f"without /chat/completions (--base-url {server.base_url})" in one_line(err)


def test_a_listing_only_server_is_exit_2(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    """A web page at /models and 404 on both API paths: not the server the user meant."""
    page = send_json(b"<html><body>models</body></html>")
    with HostileServer(send_json({"detail": "Not Found"}, 404), models=page) as server:
        code, _, err = cli(*run_args(server.base_url, tmp_path / "run"))
    assert code == 2, err
    line = one_line(err)
    assert "GET /models: HTTP 200 with an HTML page" in line
    assert "POST /chat/completions: HTTP 404" in line
    assert "the server's /chat/completions and /models follow" in line  # it has /v1 already


def test_a_server_without_a_listing_still_runs(cli: Callable[..., CliResult],
                                               tmp_path: Path) -> None:  # fmt: skip
    with HostileServer(GOOD, models=send_json({"detail": "Not Found"}, 404)) as server:
        code, _, err = cli(*run_args(server.base_url, tmp_path / "run", limit=2))
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert info["status"] == "complete" and {r["status"] for r in records} == {"scored"}


def test_a_server_failing_for_a_moment_is_still_retried(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """503 to the listing and to the first request: a server starting up, not a wrong URL."""
    busy = send_json({"error": {"message": "loading"}}, 503)
    with HostileServer([busy, GOOD], models=busy) as server:
        code, _, err = cli(
            *run_args(server.base_url, tmp_path / "run", limit=1), "--max-retries", "2"
        )
        assert len(server.posts) == 2  # the 503, then its retry
    assert code == 0, err
    assert read_run(tmp_path / "run")[1][0]["status"] == "scored"


@pytest.mark.parametrize("status", [404, 405, 501])
def test_a_listed_server_that_serves_no_requests_is_exit_2_at_the_first(
    cli: Callable[..., CliResult], tmp_path: Path, status: int
) -> None:
    """A server that lists models but answers the completions path with 404/405/501: the
    first request stops the run (exit 2 naming --base-url), not one infra error per sample
    (100 of them, exit 3); the folder keeps nothing, so the fixed command runs into it."""
    refused = send_json({"error": {"message": "Not Found"}}, status)
    with HostileServer(refused, models=send_json(LISTING)) as server:
        code, _, err = cli(*run_args(server.base_url, tmp_path / "run", limit=3))
        assert len(server.posts) == 1  # was 7 attempts each, then one each
    assert code == 2
    line = one_line(err)
    assert f"HTTP {status} to the model's requests" in line and "--base-url" in line
    assert not (tmp_path / "run" / "run.json").exists()
    with HostileServer(GOOD, models=send_json(LISTING)) as server:
        code, _, err = cli(*run_args(server.base_url, tmp_path / "run", limit=1))
    assert code == 0, err


# ---- 8: an agent that dies of an exception group ----


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is Python 3.11+")
@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("group", "exited with code 1: ValueError: boom"),
        ("taskgroup", "exited with code 1: ValueError: boom"),
        ("two", "exited with code 1: ValueError: boom (and 1 more in an exception group)"),
    ],
)
def test_an_agent_that_raised_is_recorded_with_its_error(
    cli: Callable[..., CliResult], tmp_path: Path, mode: str, message: str
) -> None:
    pytest.importorskip("mcp")
    agent = "agent:" + shlex.join([sys.executable, str(AGENTS / "raises.py"), mode])
    out = tmp_path / "run"
    code, _, err = cli("run", "home_search", "--model", agent, "--limit", "1", "--no-cache",
                       "--out", str(out))  # fmt: skip
    assert code == 0, err
    record = read_run(out)[1][0]
    assert record["status"] == "model_error"
    assert record["message"] == message  # was "exited with code 1: +-----..."
    assert "+------------------------------------" in record["details"]["agent"]["stderr_tail"]


# ---- 9: hf: never reaches a network ----


@contextlib.contextmanager
def recording_hub() -> Iterator[tuple[str, list[bytes]]]:
    """A stand-in for the Hugging Face hub on 127.0.0.1 (``HF_ENDPOINT``): answers every
    request 404 at once and keeps its first bytes, so a test sees whether anything asked."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                with contextlib.suppress(OSError):
                    seen.append(conn.recv(4096))
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def online_env(hub: str) -> dict[str, str]:
    """This environment with the hub at ``hub`` and nothing saying "offline"."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    }
    return {**env, "HF_ENDPOINT": hub}


def test_a_hub_name_is_exit_2_and_asks_nothing_of_the_hub(tmp_path: Path) -> None:
    with recording_hub() as (hub, seen):
        start = time.monotonic()
        code, _, err = toolbench(
            "run", "home_search", "--model", "hf:gpt2-nonexistent-model", "--limit", "1",
            "--out", str(tmp_path / "run"), env=online_env(hub),
        )  # fmt: skip
        took = time.monotonic() - start
    assert seen == []  # was: 5 retries, 75 s, against the real hub
    assert code == 2, err
    line = one_line(err)
    assert line.startswith("toolbench: error: --model hf:gpt2-nonexistent-model: no model folder")
    assert "never the hub" in line
    assert "hf download gpt2-nonexistent-model --local-dir models/gpt2-nonexistent-model" in line
    assert line.endswith("give --model hf:models/gpt2-nonexistent-model")
    assert took < 30


def test_a_folder_missing_a_file_is_an_error_not_a_download(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from tests.models.test_hf import build_tiny_model

    folder = build_tiny_model(tmp_path / "tiny")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    with recording_hub() as (hub, seen):
        code, _, err = toolbench(
            "run", "home_search", "--model", f"hf:{folder}", "--limit", "1",
            "--out", str(tmp_path / "run"), env=online_env(hub),
        )  # fmt: skip
    assert seen == []
    assert code == 2, err
    assert f"--model hf:{folder}: cannot load Hugging Face model from {folder}" in one_line(err)


# ---- 11: Ray without an address ----


def ray_env(root: Path) -> dict[str, str]:
    """A Ray temp root of this test's own (``RAY_TMPDIR``), no address, no usage stats."""
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return {**env, **CLUSTER_ENV, "RAY_TMPDIR": str(root), "RAY_DISABLE_USAGE_STATS": "1"}


def current_cluster(root: Path, address: str) -> Path:
    """Ray's current-cluster file under ``root``, naming ``address`` (what ``ray start``
    writes there)."""
    file = root / "ray" / "ray_current_cluster"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(address)
    return file


def ray_run(out: Path, env: dict[str, str]) -> CliResult:
    return toolbench("run", "home_search", "--model", "baseline", "--limit", "2", "--no-cache",
                     "--executor", "ray", "--out", str(out), env=env, timeout_s=400)  # fmt: skip


@pytest.mark.slow  # a private Ray cluster starts: ~20 s
def test_a_dead_clusters_file_starts_a_private_cluster(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    root = Path(f"/tmp/rt-{uuid.uuid4().hex[:6]}")  # short: Ray's socket paths must fit
    dead = f"127.0.0.1:{free_port()}"  # nobody listens there
    try:
        file = current_cluster(root, dead)
        code, _, err = ray_run(tmp_path / "run", ray_env(root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert code == 0, err[-3000:]  # was exit 2: "num_cpus and num_gpus must not be provided"
    said = [line for line in err.splitlines() if line.startswith("toolbench: Ray:")]
    assert said == [
        "toolbench: Ray: started a private local cluster for this run (it stops when the run "
        f"ends); the cluster {file} names ({dead}) is not running"
    ], err[-3000:]
    assert read_run(tmp_path / "run")[0]["status"] == "complete"


@pytest.mark.slow  # a real 'ray start --head' cluster: ~30 s on 2 cores
def test_a_running_ray_start_cluster_is_joined(tmp_path: Path) -> None:
    root = Path(f"/tmp/rt-{uuid.uuid4().hex[:6]}")
    try:
        with local_cluster(workers=0) as cluster:
            current_cluster(root, cluster.address)
            code, _, err = ray_run(tmp_path / "run", ray_env(root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert code == 0, err[-3000:]  # was exit 2: "num_cpus and num_gpus must not be provided"
    said = [line for line in err.splitlines() if line.startswith("toolbench: Ray:")]
    assert len(said) == 1, err[-3000:]
    assert said[0].startswith(
        f"toolbench: Ray: joined the running local cluster at {cluster.address}"
    )
    assert read_run(tmp_path / "run")[0]["status"] == "complete"
