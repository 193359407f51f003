"""The parent trusts nothing a worker says.

Program processes cannot reach the parent's socket (``test_escaped.py``), so these tests play a
worker that is compromised anyway: a boot script that answers every program with something
hostile. Each must end that program as ``worker_died`` with a one-line reason and a replaced
worker, never an exception, a hang or a score; and the strict reply reader is fuzzed directly.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.sandbox import Limits, SandboxError, SandboxPool, _process
from toolbench.sandbox._protocol import ProtocolError, parse_result, parse_state
from toolbench.tasks.home_search.world import make_world as home_world

FAST = Limits(wall_s=0.5, cpu_s=0.5, memory_mb=256)
_HOSTILE_BOOT = """\
import os, sys, time
from multiprocessing.connection import Connection
conn = Connection(os.dup(0))
conn.send_bytes(b'r{"seccomp": true, "uid": 65534}')
while True:
    nonce = conn.recv_bytes()[1:9]
%ACTION%
"""
DEEP = "[" * 5000 + "]" * 5000
ACTIONS = {
    "unknown tag": "    conn.send_bytes(b'Z whatever')",
    "garbage": "    conn.send_bytes(os.urandom(64))",
    "forged internal": ('    conn.send_bytes(b\'R\' + nonce + b\'["internal", "forged", ""]\\n\')'),
    "unknown kind": "    conn.send_bytes(b'R' + nonce + b'[\"success\", null, \"\"]\\n{}')",
    "loading storm": "    [conn.send_bytes(b'l' + nonce) or time.sleep(0.1) for _ in range(100)]",
    "silence": "    time.sleep(30)",
    "oversized": "    conn.send_bytes(b'R' + nonce + b'' + b'x' * (8 << 20))",
    "deep state": f"    conn.send_bytes(b'R' + nonce + b'[\"ok\", null, \"\"]\\n' + b'{DEEP}')",
    "nan state": '    conn.send_bytes(b\'R\' + nonce + b\'["ok", null, ""]\\n{"a": NaN}\')',
    "huge float": '    conn.send_bytes(b\'R\' + nonce + b\'["ok", null, ""]\\n{"a": 1e999}\')',
    "huge int": "    conn.send_bytes(b'R' + nonce + b'[\"ok\", null, \"\"]\\n' + b'9' * 5000)",
    "state on an error": '    conn.send_bytes(b\'R\' + nonce + b\'["error", "E", ""]\\n{"a": 1}\')',
    "two replies": (
        "    conn.send_bytes(b'R' + nonce + b'[\"ok\", null, \"\"]\\n{}')\n"
        '    conn.send_bytes(b\'R\' + nonce + b\'["ok", null, ""]\\n{"forged": 1}\')'
    ),
    "exits": "    os._exit(0)",
}


@pytest.mark.parametrize("name", sorted(ACTIONS))
def test_hostile_worker_costs_one_program(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_process, "STARTUP_TIMEOUT_S", 2.0)
    monkeypatch.setattr(_process, "_BOOT", _HOSTILE_BOOT.replace("%ACTION%", ACTIONS[name]))
    with SandboxPool(workers=1, limits=FAST) as pool:
        if name == "forged internal":  # harness failure: an infra error, and a new worker
            for _ in range(2):
                with pytest.raises(SandboxError, match="forged"):
                    pool.run(home_world, "API.set_location('Reno')")
                assert not pool._res.live
            return
        first = pool.run(home_world, "API.set_location('Reno')")
        second = pool.run(home_world, "API.set_location('Reno')")
    for result in (first, second):
        if name == "two replies" and result.ok:
            assert result.state == {}  # the first reply; the second is refused as stale
            continue
        assert not result.ok, result
        assert result.kind in ("worker_died", "timeout"), result
        assert result.error and "\n" not in result.error and len(result.error) < 300
        assert result.state is None
        assert result.duration_s < 5.0


def test_forged_internal_is_not_trusted_from_a_program_process() -> None:
    """A program that writes an 'internal' reply itself does not make its sample an infra
    error: the template knows the world was built before the program ran."""
    from tests.sandbox.worlds import escape_world

    source = (
        "import os, stat\n"
        "for fd in range(3, 32):\n"
        "    try:\n"
        "        if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        '            os.write(fd, b\'R["internal", "forged", ""]\\n\')\n'
        "    except OSError:\n"
        "        pass\n"
        "report['x'] = 1\n"
    )
    with SandboxPool(workers=1, limits=Limits(wall_s=2.0, cpu_s=2.0)) as pool:
        result = pool.run(escape_world, f"escape({source!r})")
    assert (result.kind, result.error) == (
        "worker_died",
        "worker_died: the program process sent a malformed reply",
    )


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300))
def test_reply_reader_is_total_on_bytes(data: bytes) -> None:
    try:
        parse_result(b"R" + data, 1000)
    except ProtocolError as exc:
        assert str(exc)


@settings(max_examples=500, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=3), children, max_size=3)
        ),
        max_leaves=30,
    )
)
def test_state_reader_accepts_strict_json_only(value: object) -> None:
    try:
        text = json.dumps(value)
    except ValueError:
        return
    try:
        parsed = parse_state(text)
    except ProtocolError:
        assert "NaN" in text or "Infinity" in text
        return
    assert json.dumps(parsed) == text


@pytest.mark.parametrize(
    "head",
    [b'[["ok"], null, ""]', b'[{"k": 1}, "e", ""]', b'[1.5, "e", ""]', b'[null, "e", ""]'],
)
def test_a_kind_that_is_not_a_string_is_a_protocol_error(head: bytes) -> None:
    """Found by benchmarks/fuzz_protocol.py: an unhashable kind escaped as a TypeError."""
    with pytest.raises(ProtocolError, match="unknown result kind"):
        parse_result(b"R" + head + b"\n", 1000)


def _reference_state(text: str) -> object:
    """The reader before its decoder was built once: ``json.loads`` with the same hooks."""
    from toolbench.sandbox import _protocol

    return json.loads(
        text,
        parse_constant=_protocol._refuse_constant,
        parse_int=_protocol._checked_int,
        parse_float=_protocol._checked_float,
    )


STATE_TEXTS = st.one_of(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=12,
    ).map(json.dumps),
    st.sampled_from(["\ufeff{}", "\ufeff", " {} ", "1e999", "-1e999", "NaN", "[1,]", "9" * 301]),
    st.text(max_size=20),
)


@settings(max_examples=300, deadline=None)
@given(STATE_TEXTS)
def test_the_shared_decoder_reads_what_json_loads_read(text: str) -> None:
    """Same value, or a refusal wherever ``json.loads`` with the same hooks refused (a leading
    byte-order mark included)."""
    if not text:  # no state at all: the reader's own convention
        assert parse_state(text) is None
        return
    try:
        expected: object = _reference_state(text)
    except (ValueError, RecursionError):
        expected = ProtocolError
    try:
        got: object = parse_state(text)
    except ProtocolError:
        got = ProtocolError
    if expected is not ProtocolError and got is ProtocolError:  # e.g. nested too deeply
        return
    assert got == expected or (got != got and expected != expected)
