"""One sandbox worker, as the parent sees it: start it (isolated), talk to it, kill it.

Workers are fresh interpreters started by fork+exec (``subprocess``), never a bare fork of the
harness, which runs threads and asyncio. A worker gets a clean environment (no API keys), an
empty read-only working directory, its own session (the terminal's Ctrl-C is not for it), the
parent's ``sys.path``, and, where the machine allows, its own namespaces (``isolation.py``). It
talks over one socket ``Connection``; the parent reads every message with a size cap, never
unpickles anything, and follows the protocol strictly (``_protocol.py``): a worker that says
anything unexpected, too much, too late or too often is killed and replaced, and only that
program's result suffers.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from typing import Any

from toolbench.sandbox._protocol import (
    FAILED,
    FILE,
    LOADING,
    NONCE_BYTES,
    PROGRAM,
    READY,
    ProtocolError,
)
from toolbench.sandbox.files import MAX_FILE_BYTES
from toolbench.sandbox.isolation import Isolation, wrap_command
from toolbench.sandbox.limits import Limits


class SandboxError(RuntimeError):
    """The sandbox itself failed (worker would not start, world factory broke): not a program
    error, so callers should treat it as an infrastructure failure."""


STARTUP_TIMEOUT_S = 60.0  # interpreter start, or importing a factory's module
_BOOT = """\
import json, os, sys
from multiprocessing.connection import Connection
conn = Connection(os.dup(0))
try:
    config = json.loads(sys.argv[1])
    sys.path[:] = config["path"]
    from toolbench.sandbox._template import main
except BaseException as exc:
    conn.send_bytes(b"E" + repr(exc).encode("utf-8", "replace"))
    raise SystemExit(1)
main(conn, config)
"""


def _environment(workdir: str) -> dict[str, str]:
    return {
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",  # reproducible set/dict-of-str order across workers
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "HOME": workdir,
        "TMPDIR": "/tmp" if workdir.startswith("/sandbox") else workdir,
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


def _spawn(argv: list[str], **options: Any) -> Any:
    """``Popen`` from one thread that lives as long as the process: bubblewrap's
    --die-with-parent fires when the thread that started it ends, not the process."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawn")
    return _spawner.submit(lambda: subprocess.Popen(argv, **options)).result()


@functools.cache
def _libraries() -> dict[str, str]:
    if not sys.platform.startswith("linux"):
        return {}
    from toolbench.sandbox.seccomp_filter import library_names

    return library_names()


class WorkerProcess:
    """One worker process and our end of its socket."""

    def __init__(
        self,
        limits: Limits,
        workdir: str,
        isolation: Isolation,
        code_dirs: list[str],
        masked: list[str],
        network: bool = False,
    ) -> None:
        ours, theirs = Pipe(duplex=True)
        path = [os.path.abspath(p) for p in sys.path if isinstance(p, str)]
        config = {
            "limits": asdict(limits),
            "path": path,
            "seccomp": isolation.level != "none",
            "libraries": _libraries(),
            "network": network,
        }
        argv = [sys.executable, "-s", "-c", _BOOT, json.dumps(config)]
        cwd = workdir
        # A live world's programs drive a real service with real credentials from the host:
        # its workers keep the host's view (seccomp still applies, sockets allowed).
        if isolation.namespaces and not network:
            argv = wrap_command(isolation.bwrap, argv, code_dirs, masked, network=network)
            workdir = "/sandbox"
        try:
            self.proc = _spawn(
                argv,
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=cwd,
                env=_environment(workdir),
                close_fds=True,
                start_new_session=True,  # terminal signals (Ctrl-C) go to the harness only
            )
        finally:
            theirs.close()
        self.conn: Connection = ours
        self.poller = select.poll()
        self.poller.register(ours.fileno(), select.POLLIN)
        self.max_reply = 8 * limits.max_output_bytes + 65536
        self.max_stdout = limits.max_output_bytes
        self.files_sent: set[tuple[str, str]] = set()
        self.profile: Any = None  # the pool's label of what this worker was started for
        self.facts = self._handshake()

    def _handshake(self) -> dict[str, Any]:
        try:
            reply = self.receive(time.monotonic() + STARTUP_TIMEOUT_S)
        except (EOFError, OSError):
            reply = b""  # it closed the socket: it exited
        if reply is not None and reply.startswith(READY):
            try:
                facts = json.loads(reply[1:])
            except ValueError:
                facts = None
            if isinstance(facts, dict):
                return facts
        if reply is None:
            reason = f"no answer within {STARTUP_TIMEOUT_S} s"
        elif not reply:
            reason = f"it {self.exit_description()}"
        elif reply.startswith(FAILED):
            reason = reply[1:].decode("utf-8", "replace")[:500]
        else:
            reason = "unexpected first message"
        self.kill()
        raise SandboxError(f"sandbox worker failed to start: {reason}")

    def receive(self, deadline: float) -> bytes | None:
        """The next message, or None if none came by ``deadline`` (monotonic seconds).

        OSError (message over the cap), EOFError (the worker is gone)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self.poller.poll(max(1, int(remaining * 1000) + 1)):
                try:
                    return self.conn.recv_bytes(self.max_reply)
                except OSError:
                    raise ProtocolError("the worker sent a message over the size cap") from None

    def send_file(self, path: str, content: bytes, digest: str) -> None:
        if (path, digest) in self.files_sent:
            return
        if len(content) > MAX_FILE_BYTES:
            raise SandboxError(f"{path}: too large to hand to a sandbox worker")
        self.conn.send_bytes(FILE + path.encode("utf-8", "surrogateescape") + b"\0" + content)
        self.files_sent.add((path, digest))

    def call(self, payload: bytes, budget_s: float) -> bytes | None:
        """Send one program, return its reply or None on timeout.

        EOFError/OSError: it died or overflowed; ProtocolError: it broke the protocol. The
        worker may ask for import time once (``LOADING``); a second ask is a protocol error,
        so no worker can keep a program alive by asking again and again."""
        nonce = os.urandom(NONCE_BYTES)
        self.conn.send_bytes(PROGRAM + nonce + payload)
        deadline = time.monotonic() + budget_s
        loading = False
        while True:
            reply = self.receive(deadline)
            if reply is None:
                return None
            if reply[1 : 1 + NONCE_BYTES] != nonce:  # a stale or invented message
                raise ProtocolError("the worker sent a message that answers no request")
            if reply[:1] != LOADING:
                return reply[:1] + reply[1 + NONCE_BYTES :]
            if loading:
                raise ProtocolError("the worker asked for import time twice for one program")
            loading = True
            deadline = time.monotonic() + STARTUP_TIMEOUT_S + budget_s

    def kill(self) -> None:
        with contextlib.suppress(OSError):  # already gone
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()  # reap: no zombies
        self.conn.close()

    def exit_description(self) -> str:
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"
