"""One sandbox worker, as the parent sees it: start it (isolated), talk to it, kill it.

Workers are fresh interpreters started by fork+exec (``subprocess``), never a bare fork of the
harness, which runs threads and asyncio. A worker gets a clean environment (no API keys), an
empty read-only working directory, its own session (the terminal's Ctrl-C is not for it), the
parent's ``sys.path``, and, where the machine allows, its own namespaces (``isolation.py``). It
talks over one socket (a ``Connection`` on its side); the parent never blocks on it, reads
every message with a size cap, never unpickles anything, and follows the protocol strictly
(``_protocol.py``): a worker that says anything unexpected, too much, too late or too often is
killed and replaced, and only that program's result suffers. The same socket is driven from a
thread (``call``: ``poll`` with a deadline) or from an event loop (``acall``: ``add_reader``
and a timer), with the same framing, nonce and ``LOADING`` rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from typing import Any

from toolbench.sandbox._protocol import (
    FAILED,
    FILE,
    HOST,
    READY,
    Exchange,
    FrameReader,
    encode_answer,
    frame,
)
from toolbench.sandbox.files import MAX_FILE_BYTES
from toolbench.sandbox.isolation import Isolation, wrap_command
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.seccomp_filter import library_names

# The parent's side of a host call: the call's JSON body -> the framed-to-be answer message.
HostAnswerer = Callable[[bytes], Awaitable[bytes]]
NO_HOST = "host calls are not available here (the caller gave no host)"


class SandboxError(RuntimeError):
    """The sandbox itself failed (worker would not start, world factory broke): not a program
    error, so callers should treat it as an infrastructure failure."""


STARTUP_TIMEOUT_S = 60.0  # interpreter start, or importing a factory's module
_BOOT = """\
import json, os, struct, sys
fd = os.dup(0)
try:
    config = json.loads(sys.argv[1])
    sys.path[:] = config["path"]
    from toolbench.sandbox._stream import Channel
    from toolbench.sandbox._template import main
except BaseException as exc:
    failure = b"E" + repr(exc).encode("utf-8", "replace")
    os.write(fd, struct.pack("!i", len(failure)) + failure)
    raise SystemExit(1)
main(Channel(fd), config)
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
    return library_names()


class WorkerProcess:
    """One worker process and our end of its socket (non-blocking: see ``pump``)."""

    def __init__(
        self,
        limits: Limits,
        workdir: str,
        isolation: Isolation,
        code_dirs: list[str],
        masked: list[str],
        network: bool = False,
    ) -> None:
        ours, theirs = socket.socketpair()  # what multiprocessing.Pipe(duplex=True) uses
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
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.setblocking(False)  # our end only: the worker's end is its own file description
        self.sock = ours
        self.fd = ours.fileno()
        # An event loop watching the fd must close it itself, after ``remove_reader``: closed
        # under it, the loop would never hear of it (and might mistake a reused fd number).
        self._guard = threading.Lock()
        self._watched = False
        self._killed = False
        self.poller = select.poll()
        self.poller.register(self.fd, select.POLLIN)
        self.max_reply = 8 * limits.max_output_bytes + 65536
        self.reader = FrameReader(self.max_reply)
        self.max_stdout = limits.max_output_bytes
        self.max_host_calls = limits.max_host_calls
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

    # -- both paths -------------------------------------------------------------------------

    def pump(self) -> None:
        """Take in what the worker has sent so far; never blocks. EOFError: it closed the
        socket; OSError: the socket broke; ProtocolError (from the reader): over the cap."""
        try:
            data = self.sock.recv(self.reader.wanted())
        except (BlockingIOError, InterruptedError):
            return
        if not data:
            raise EOFError("the worker closed its socket")
        self.reader.feed(data)

    def _send_some(self, data: memoryview) -> memoryview:
        """What is left of ``data`` after one non-blocking send."""
        try:
            return data[self.sock.send(data) :]
        except (BlockingIOError, InterruptedError):
            return data

    def file_message(self, path: str, content: bytes, digest: str) -> bytes | None:
        """The message that hands a world's data file to this worker, None if it has it.
        Counted as sent now: a worker whose send then fails is killed anyway."""
        if (path, digest) in self.files_sent:
            return None
        if len(content) > MAX_FILE_BYTES:
            raise SandboxError(f"{path}: too large to hand to a sandbox worker")
        self.files_sent.add((path, digest))
        return FILE + path.encode("utf-8", "surrogateescape") + b"\0" + content

    # -- from a thread ----------------------------------------------------------------------

    def receive(self, deadline: float) -> bytes | None:
        """The next message, or None if none came by ``deadline`` (monotonic seconds).

        ProtocolError (message over the size cap), EOFError (the worker is gone), OSError."""
        while True:
            message = self.reader.message()
            if message is not None:
                return message
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            if self.poller.poll(max(1, int(remaining * 1000) + 1)):
                self.pump()

    def send(self, message: bytes, deadline: float) -> bool:
        """Send one message; False if the worker did not take it by ``deadline``."""
        data = memoryview(frame(message))
        writable: Any = None
        while True:
            data = self._send_some(data)
            if not data:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if writable is None:
                writable = select.poll()
                writable.register(self.fd, select.POLLOUT)
            writable.poll(max(1, int(remaining * 1000) + 1))

    def call(self, files: Sequence[bytes], payload: bytes, budget_s: float) -> bytes | None:
        """Send the files a world needs and one program; its reply, or None on timeout.

        EOFError/OSError: it died or the socket broke; ProtocolError: it broke the protocol
        (the rules are ``Exchange``'s)."""
        exchange = Exchange(payload, budget_s, STARTUP_TIMEOUT_S, self.max_host_calls)
        for message in (*files, exchange.request):
            if not self.send(message, exchange.deadline):
                return None
        while True:
            reply = self.receive(exchange.deadline)
            if reply is None:
                return None
            result = exchange.accept(reply)
            if result is not None and result[:1] == HOST:
                exchange.count_host_call()
                if not self.send(encode_answer(error=NO_HOST), exchange.deadline):
                    return None
            elif result is not None:
                return result

    # -- from an event loop -----------------------------------------------------------------

    async def _ready(self, writable: bool, deadline: float) -> bool:
        """Wait, without a thread, until the socket can be read (written) or the deadline
        passes; False at the deadline."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[bool] = loop.create_future()
        with self._guard:
            if self._killed:
                raise OSError("the worker's socket is closed")
            if writable:
                loop.add_writer(self.fd, _resolve, ready, True)
            else:
                loop.add_reader(self.fd, _resolve, ready, True)
            self._watched = True
        timer = loop.call_later(remaining, _resolve, ready, False)
        try:
            return await ready
        finally:
            timer.cancel()
            with self._guard:
                if writable:
                    loop.remove_writer(self.fd)
                else:
                    loop.remove_reader(self.fd)
                self._watched = False
                if self._killed:  # ``kill`` left the closing to us
                    self.sock.close()

    async def _asend(self, message: bytes, exchange: Exchange) -> bool:
        data = self._send_some(memoryview(frame(message)))
        while data:
            if not await self._ready(True, exchange.deadline):
                return False
            data = self._send_some(data)
        return True

    async def acall(
        self,
        files: Sequence[bytes],
        payload: bytes,
        budget_s: float,
        host: HostAnswerer | None = None,
    ) -> bytes | None:
        """``call`` for the event loop's thread: the same messages and rules, no blocking.

        A host call (``HOST``) is answered by ``host`` while the program waits; the deadline
        is paused meanwhile (the worker pauses the program's own timers too). Whatever ``host``
        raises propagates: the caller must then replace this worker, which is mid-program."""
        exchange = Exchange(payload, budget_s, STARTUP_TIMEOUT_S, self.max_host_calls)
        for message in (*files, exchange.request):
            if not await self._asend(message, exchange):
                return None
        while True:
            reply = self.reader.message()
            if reply is None:
                if not await self._ready(False, exchange.deadline):
                    return None
                self.pump()
                continue
            result = exchange.accept(reply)
            if result is not None and result[:1] == HOST:
                exchange.count_host_call()
                left = exchange.pause()
                answer = encode_answer(error=NO_HOST) if host is None else await host(result[1:])
                exchange.resume(left)
                if not await self._asend(answer, exchange):
                    return None
            elif result is not None:
                return result

    # -- ending -----------------------------------------------------------------------------

    def kill(self) -> None:
        """Kill and reap the worker (from any thread; again is harmless). A loop waiting on
        its socket wakes to end of file and closes the socket itself."""
        with contextlib.suppress(OSError):  # already gone
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        self.proc.wait()  # reap: no zombies
        with self._guard:
            self._killed = True
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            if not self._watched:
                self.sock.close()

    def exit_description(self) -> str:
        try:
            code = self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return "stopped answering"
        return _describe_exit(code)

    async def aexit_description(self) -> str:
        """``exit_description`` without blocking the loop: poll for up to a second."""
        for _ in range(20):
            code = self.proc.poll()
            if code is not None:
                return _describe_exit(code)
            await asyncio.sleep(0.05)
        return "stopped answering"


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _resolve(future: asyncio.Future[bool], value: bool) -> None:
    if not future.done():
        future.set_result(value)
