"""Acceptance: a hostile model server, through a full ``toolbench run`` in its own process.

The red team's loopback servers (issue 36, findings 6-10) each used to cost the harness
gigabytes or end the run with a traceback. Now each is that sample's ``infra_error`` with one
line saying what the server sent, and the run finishes (exit 3: infra errors remain to retry):

- a gigabyte of reply (without Content-Length; as ~1 MB of gzip; behind an HTTP 500) leaves the
  harness's peak RSS under ``RSS_BUDGET_MB`` (``VmHWM`` of the run's process, read until it exits);
- a byte a second after the headers ends each attempt within ``--timeout`` + 1 s;
- every wrong reply shape is a per-sample error, and content parts are read as text;
- a ``GET /models`` of 500,000 ``[`` is no listing, not a crash;
- a 307 to another server is not followed: that server gets no request.

The servers (``tests.models.hostile_server``) make their bodies as they send them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_run
from tests.models.hostile_server import (
    REPLY_HEAD,
    HostileServer,
    chat_reply,
    send_drip,
    send_flood,
    send_json,
    send_redirect,
)

#: The most a run against a hostile server may take in memory (a run against a normal one
#: peaks at ~100 MB; the 16 MiB cap adds a few times that at most).
RSS_BUDGET_MB = 300
GOOD = send_json(chat_reply({"role": "assistant", "content": "API.search()"}))


def run_against(
    server: HostileServer, out: Path, *flags: str, limit: int = 1
) -> tuple[int, str, int, float]:
    """``toolbench run home_search`` against ``server``: (exit code, output, peak RSS in MB,
    seconds)."""
    command = [
        sys.executable, "-m", "toolbench.cli", "run", "home_search", "--model", "openai:x",
        "--base-url", server.base_url, "--out", str(out), "--no-cache", "--timeout", "5",
        "--max-retries", "0", "--concurrency", "1", "--limit", str(limit), *flags,
    ]  # fmt: skip
    log = out.parent / f"{out.name}.log"
    start = time.monotonic()
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
        peak_kb = _peak_until_exit(process)
    return process.returncode, log.read_text(), peak_kb // 1024, time.monotonic() - start


def _peak_until_exit(process: subprocess.Popen[bytes]) -> int:
    """The process's own peak RSS in kB (``VmHWM``, read until it exits). Not ``wait4``'s
    ``ru_maxrss``: Linux carries the forking parent's RSS into it across exec, so a big
    pytest process would be counted as the run's."""
    peak = 0
    status = Path(f"/proc/{process.pid}/status")
    while process.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except (OSError, ValueError, IndexError):
            pass
        time.sleep(0.02)
    return peak


def only_record(out: Path) -> dict[str, Any]:
    info, records = read_run(out)
    assert info["status"] == "incomplete" and len(records) == 1
    return records[0]


def one_line_infra_error(record: dict[str, Any], *fragments: str) -> None:
    assert record["status"] == "infra_error", record
    message = record["message"]
    assert "\n" not in message and len(message) < 600, message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.slow
@pytest.mark.parametrize(
    ("case", "answer", "says"),
    [
        ("plain, no Content-Length", send_flood(), "over 16,777,216 bytes"),
        ("1 MB of gzip expanding to 1 GB", send_flood(gzip=True), "over 16,777,216 bytes"),
        ("HTTP 500 with 1 GB of body", send_flood(status=500, first=b"oops "), "HTTP 500"),
    ],
)
def test_a_gigabyte_reply_is_one_error_and_little_memory(
    tmp_path: Path, case: str, answer: Any, says: str
) -> None:
    with HostileServer(answer) as server:
        code, output, rss_mb, seconds = run_against(server, tmp_path / "run")
    print(f"{case}: peak RSS {rss_mb} MB, {seconds:.1f} s")
    assert code == 3, output[-3000:]
    assert "Traceback" not in output
    assert rss_mb < RSS_BUDGET_MB, f"{case}: {rss_mb} MB"
    one_line_infra_error(only_record(tmp_path / "run"), says)
    (post,) = server.posts
    assert post.ended is not None and post.ended - post.started < 5  # left early, not at 1 GB


def test_max_response_bytes_sets_the_cap(tmp_path: Path) -> None:
    with HostileServer(send_flood(total=2 << 20)) as server:
        code, output, _, _ = run_against(server, tmp_path / "run", "--max-response-bytes", "50000")
    assert code == 3, output[-3000:]
    one_line_infra_error(only_record(tmp_path / "run"), "over 50,000 bytes")


@pytest.mark.slow
def test_a_byte_a_second_ends_each_attempt_within_the_timeout(tmp_path: Path) -> None:
    with HostileServer(send_drip()) as server:
        code, output, _, _ = run_against(
            server, tmp_path / "run", "--timeout", "2", "--max-retries", "1"
        )
    assert code == 3, output[-3000:]
    one_line_infra_error(only_record(tmp_path / "run"), "gave up after 2 attempts", "timed out")
    attempts = [p.ended - p.started for p in server.posts if p.ended is not None]
    print("attempts ended after", [f"{s:.2f} s" for s in attempts])
    assert len(attempts) == 2 and all(1.5 < s <= 3.0 for s in attempts), attempts


#: (what the server puts in ``choices[0]``'s place, a fragment of the sample's message; None:
#: the reply is read, and the prediction is the text given).
SHAPES: list[tuple[Any, str | None]] = [
    (chat_reply({"role": "assistant", "content": 12345}), '"content" as a number (12345)'),
    (chat_reply({"role": "assistant", "content": {"text": "x"}}), '"content" as an object'),
    (chat_reply({"role": "assistant", "content": [7]}), '"content[0]" as a number'),
    (chat_reply({"content": [{"type": "text", "text": 1}]}), '"content[0].text" as a number'),
    (chat_reply("just text"), '"message" as a string'),
    (chat_reply(["a", "list"]), '"message" as a list of 2'),
    ({"object": "chat.completion"}, "no choices"),
    ({"choices": {"0": {}}}, '"choices" as an object'),
    ({"choices": "abc"}, '"choices" as a string'),
    ({"choices": [42]}, '"choices[0]" as a number'),
    ({"choices": [{"text": ["a"]}]}, '"text" as a list of 1'),
    (chat_reply({"content": None, "tool_calls": [{"function": {"name": "f", "arguments": 5}}]}),
     '"tool_calls[0].function.arguments" as a number'),
    (chat_reply({"content": None, "tool_calls": [{"function": "f"}]}), "tool_calls[0].function"),
    (chat_reply({"content": None, "tool_calls": "f()"}), '"tool_calls" as a string'),
    ({**chat_reply({"content": "x"}), "usage": {"prompt_tokens": "many"}}, "usage.prompt_tokens"),
    ({**chat_reply({"content": "x"}), "usage": []}, '"usage" as a list'),
    ({"choices": [{"message": {"content": "x"}, "finish_reason": {"a": 1}}]}, "finish_reason"),
    ([1, 2, 3], "no choices"),
    ("a JSON string", "no choices"),
    (b"<html>502 Bad Gateway</html>", "502 Bad Gateway"),
    (b"[" * 100 + b"]" * 100, "nests JSON deeper than 64"),
    (chat_reply({"content": [{"type": "text", "text": "API.set_location(\"Austin\")\n"},
                             {"type": "thinking", "thinking": [{"type": "text", "text": "hm"}]},
                             {"type": "text", "text": "API.search()"}]}),
     None),
]  # fmt: skip


def test_every_wrong_shape_is_that_samples_error_and_the_run_finishes(tmp_path: Path) -> None:
    with HostileServer([send_json(reply) for reply, _ in SHAPES]) as server:
        code, output, _, _ = run_against(server, tmp_path / "run", limit=len(SHAPES))
    assert code == 3, output[-3000:]
    assert "Traceback" not in output
    info, records = read_run(tmp_path / "run")
    assert info["status"] == "incomplete" and len(records) == len(server.posts) == len(SHAPES)
    for record, (_, fragment) in zip(records, SHAPES, strict=True):  # --concurrency 1
        if fragment is None:  # content parts: their text parts, joined
            assert record["status"] == "scored", record
            assert record["prediction"] == 'API.set_location("Austin")\nAPI.search()'
        else:
            one_line_infra_error(record, fragment)


def test_a_deep_model_listing_is_no_listing(tmp_path: Path) -> None:
    with HostileServer(GOOD, models=send_json(b"[" * 500_000)) as server:
        code, output, _, _ = run_against(server, tmp_path / "run")
    assert code == 0, output[-3000:]
    info, records = read_run(tmp_path / "run")
    assert info["status"] == "complete" and records[0]["status"] == "scored"
    assert [r.method for r in server.requests] == ["GET", "POST"]


def test_a_deep_model_listing_leaves_a_pool_working(tmp_path: Path) -> None:
    """The pool checks every endpoint's listing at preflight (and again as its health check)."""
    deep = send_json(b"[" * 500_000)
    with HostileServer(GOOD, models=deep) as other, HostileServer(GOOD, models=deep) as server:
        code, output, _, _ = run_against(server, tmp_path / "run", "--base-url", other.base_url)
    assert code == 0, output[-3000:]
    assert read_run(tmp_path / "run")[1][0]["status"] == "scored"


def test_a_redirect_is_not_followed(tmp_path: Path) -> None:
    with HostileServer(GOOD) as third:
        target = f"{third.base_url}/completions"
        with HostileServer(send_redirect(target)) as server:
            code, output, _, _ = run_against(server, tmp_path / "run")
    assert code == 3, output[-3000:]
    assert third.requests == [], "the prompt was re-sent to the server the redirect named"
    one_line_infra_error(only_record(tmp_path / "run"), "HTTP 307", target, "not followed")
    assert len(server.posts) == 1


def test_the_reply_head_is_a_chat_reply() -> None:
    """The floods are replies cut short, not garbage: what is read of them is a chat reply."""
    assert json.loads(REPLY_HEAD + b'x"}}]}')["choices"][0]["message"]["content"] == "x"
