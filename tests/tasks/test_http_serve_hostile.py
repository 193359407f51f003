"""``toolbench serve`` over real HTTP survives hostile requests: each gets its own answer below
500 (or, for bytes that are not HTTP, a closed connection), no handler raises, and the server
keeps serving."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time

import httpx
import pytest

KEY = b"appid=toolbench-simulated-key"
END = b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def _post(path: bytes, body: bytes, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    head = b"POST " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    return head + b"Content-Length: " + str(size).encode() + b"\r\n\r\n" + body


HOSTILE = [
    b"GET /data/2.5/forecast?q=London&cnt=1.5e999&" + KEY + END,
    b"GET /data/2.5/forecast?q=London&cnt=" + b"9" * 4401 + b"&" + KEY + END,
    b"GET /data/2.5/air_pollution/history?lat=1&lon=2&start=1e999&end=nan&" + KEY + END,
    b"GET /v1/images/search?limit=1.5e999&category_ids=" + b"9" * 4401 + END,
    b"GET /v1/images/search HTTP/1.1\r\nHost: x\r\nx-api-key: caf\xc3\xa9\xff\r\n"
    b"Connection: close\r\n\r\n",
    _post(b"/v1/votes", b"x" * 70_000, length=99_999_999_999),  # huge Content-Length
    _post(b"/v1/votes", b"[" * 3000 + b"]" * 3000),
    _post(b"/v1/favourites", b'{"image_id":"\\ud800"}'),
    _post(b"/v1/votes", b'{"image_id":"x","value":' + b"9" * 4401 + b"}"),
    _post(b"/v1/votes", b'{"value":NaN}'),
    _post(b"/v1/votes", b"{", length=5000),  # body ends early
    b"FOO /v1/votes" + END,
    b"GET /v1/images/\xff\xfe" + END,
    b"GET /" + b"a" * 100_000 + END,
    b"GARBAGE\r\n\r\n",
    b"\x00" * 64 + b"\r\n\r\n",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _exchange(port: int, data: bytes) -> int | None:
    """Send raw bytes; the response's status code, or None if the server just closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        try:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server may answer and close before reading everything
            pass
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except ConnectionResetError:
            pass
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", reply)
    return int(match.group(1)) if match else None


@pytest.mark.parametrize(
    ("task", "benign"),
    [
        ("open_weather", "/data/2.5/weather?q=London&appid=toolbench-simulated-key"),
        ("the_cat_api", "/v1/breeds?limit=3"),
    ],
)
def test_serve_answers_hostile_requests_and_keeps_serving(task: str, benign: str) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolbench.cli", "serve", task, "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "toolbench serve did not start"
                time.sleep(0.1)
        for data in HOSTILE:
            status = _exchange(port, data)
            assert status is None or status < 500, (data[:60], status)
        assert httpx.get(f"http://127.0.0.1:{port}{benign}", timeout=5).status_code == 200
        assert proc.poll() is None
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=10)
    assert b"Traceback" not in stderr, stderr.decode(errors="replace")[-2000:]
