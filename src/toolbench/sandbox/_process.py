"""One sandbox worker process, as the parent sees it: start it, talk to it, kill it.

Workers are fresh interpreters started by fork+exec (``subprocess``), never a bare fork of the
harness, which runs threads and asyncio. We use ``subprocess`` rather than
``multiprocessing.Process`` because spawn would hand the worker our environment (API keys) and
re-run the harness's ``__main__`` inside it. Here a worker gets a clean environment, an empty
read-only working directory, its own session (the terminal's Ctrl-C is not for it) and the
parent's ``sys.path``, and talks over a ``multiprocessing`` socket ``Connection``. Only small
byte strings cross it, and replies are read with a size cap and never unpickled.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from multiprocessing import Pipe
from multiprocessing.connection import Connection

from toolbench.sandbox._protocol import FAILED, IMPORTED, LOADING, READY
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
    from toolbench.sandbox._worker import main
except BaseException as exc:
    conn.send_bytes(b"E" + repr(exc).encode("utf-8", "replace"))
    raise SystemExit(1)
main(conn, config)
"""


class WorkerProcess:
    """One worker process and our end of its socket."""

    def __init__(self, limits: Limits, workdir: str) -> None:
        ours, theirs = Pipe(duplex=True)
        path = [os.path.abspath(p) for p in sys.path if isinstance(p, str)]
        config = {"limits": asdict(limits), "path": path}
        env = {
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONHASHSEED": "0",  # reproducible set/dict-of-str order across workers
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
            "HOME": workdir,
            "TMPDIR": workdir,
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
        }
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-s", "-c", _BOOT, json.dumps(config)],
                stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=workdir,
                env=env,
                close_fds=True,
                start_new_session=True,  # terminal signals (Ctrl-C) go to the harness only
            )
        finally:
            theirs.close()
        self.conn: Connection = ours
        self.poller = select.poll()
        self.poller.register(ours.fileno(), select.POLLIN)
        self.max_reply = 8 * limits.max_output_bytes + 65536
        try:
            reply = self.receive(time.monotonic() + STARTUP_TIMEOUT_S)
        except (EOFError, OSError):
            reply = b""  # it closed the socket: it exited
        if reply != READY:
            if reply is None:
                reason = f"no answer within {STARTUP_TIMEOUT_S} s"
            elif not reply:
                reason = f"it {self.exit_description()}"
            elif reply.startswith(FAILED):
                reason = reply[1:].decode("utf-8", "replace")
            else:
                reason = "unexpected first message"
            self.kill()
            raise SandboxError(f"sandbox worker failed to start: {reason}")

    def receive(self, deadline: float) -> bytes | None:
        """The next message, or None if none came by ``deadline`` (monotonic seconds)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self.poller.poll(max(1, int(remaining * 1000) + 1)):
                return self.conn.recv_bytes(self.max_reply)

    def call(self, payload: bytes, budget_s: float) -> bytes | None:
        """Send one program, return its reply or None on timeout. EOFError/OSError: it died."""
        self.conn.send_bytes(payload)
        deadline = time.monotonic() + budget_s
        loading = False
        while True:
            reply = self.receive(deadline)
            if reply == LOADING and not loading:  # once per program, whatever the worker says
                loading = True
                deadline = time.monotonic() + STARTUP_TIMEOUT_S
            elif reply == IMPORTED:
                deadline = time.monotonic() + budget_s
            else:
                return reply

    def kill(self) -> None:
        with contextlib.suppress(OSError):  # already gone
            self.proc.kill()
        self.proc.wait()  # reap: no zombies
        self.conn.close()

    def exit_description(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"
