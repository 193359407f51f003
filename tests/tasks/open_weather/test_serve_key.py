"""``toolbench serve open_weather --api-key KEY`` accepts that key, and only that key."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable

import httpx

from tests.conftest import CliResult
from toolbench.kinds.service import SIMULATED_API_KEY


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(port: int, key: str, deadline: float) -> httpx.Response:
    url = f"http://127.0.0.1:{port}/data/2.5/weather?q=tulsa&appid={key}"
    while True:
        try:
            return httpx.get(url, timeout=10)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_serve_accepts_the_given_key_only() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolbench.cli", "serve", "open_weather", "--port", str(port),
         "--api-key", "my-own-key-123"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        mine = _get(port, "my-own-key-123", deadline)
        assert mine.status_code == 200 and mine.json()["name"] == "Tulsa"
        assert _get(port, SIMULATED_API_KEY, deadline).status_code == 401
        assert _get(port, "my-own-key-12", deadline).status_code == 401
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert "(API key: my-own-key-123;" in out


def test_bad_api_key_flags_are_exit_2(cli: Callable[..., CliResult]) -> None:
    code, _, err = cli("serve", "the_cat_api", "--api-key", "abc")
    assert code == 2 and "--api-key" in err and "drop the flag" in err
    code, _, err = cli("serve", "open_weather", "--api-key", "two words")
    assert code == 2 and "--api-key" in err and len(err.strip().splitlines()) == 1
