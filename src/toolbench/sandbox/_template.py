"""The sandbox worker's main process: a fork server that never runs program code itself.

``_process.py`` starts this in a fresh interpreter inside the OS isolation (``isolation.py``).
It imports world modules and pays their warm-up once (``prepare_sandbox_worker``, and
``prime_sandbox_worker(*args)`` per distinct factory arguments, e.g. parsing a workbook), then
runs each program in a *program process* forked from itself, so nothing a program does
(monkeypatching, library options, class patches, finalizers, fsspec's memory file system)
reaches the next program: each starts from the same clean template.

Worlds whose module sets ``SANDBOX_SHARED = True`` (no libraries, a world rebuilt from scratch,
nothing mutable reachable: home_search and booking) are the exception, because a fork costs more
than such a program: the programs of each such module share one long-lived program process,
itself forked from the template, so even they never touch the template, and two tasks' programs
never share a process.

Program processes load the stricter seccomp filter before any program code runs and talk only
to the template over pipes; the template checks what they send (size, tag, timing), kills them
at the deadline, and alone talks to the parent.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from toolbench.sandbox import audit, files, host, policy, seccomp_filter
from toolbench.sandbox._protocol import (
    ANSWER,
    ANSWER_CODE,
    FAILED,
    FILE,
    HOST,
    INTERNAL,
    LOADING,
    NONCE_BYTES,
    PROGRAM,
    READY,
    RESULT,
    encode_result,
)
from toolbench.sandbox._stream import WORLD_READY, Channel, Stream
from toolbench.sandbox._worker import Executor, build_world, harden, internal_reply
from toolbench.sandbox.limits import Limits
from toolbench.sandbox.world import PREPARE_HOOK, PRIME_HOOK, SHARED_FLAG, split_ref

CHILD_GRACE_S = 0.25  # past its wall limit a program process gets this long, then SIGKILL
_MAX_PRIMED = 4096
_MAX_EXITING = 8


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _exit_description(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"was killed by {signal.Signals(number).name}"
        except ValueError:
            return f"was killed by signal {number}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


def _died(what: str) -> bytes:
    return encode_result("worker_died", f"worker_died: the program process {what}")


class Template:
    """Serves the parent's requests until the connection closes."""

    def __init__(
        self,
        conn: Channel,
        limits: Limits,
        use_seccomp: bool,
        libraries: dict[str, str],
        network: bool = False,
    ) -> None:
        self.conn = conn
        self.limits = limits
        self.max_reply = 8 * limits.max_output_bytes + 65536
        harden(limits)
        audit.install()
        self.executor = Executor(limits)
        self.factories: dict[str, Callable[..., Any]] = {}
        self.primed: set[str] = set()
        # One per world module: a program that got past the in-process policy could leave
        # something behind in its shared process, but never reach another task's programs.
        self.shared: dict[str, _SharedProcess] = {}
        self.exiting: list[int] = []  # program processes killed after their reply, to reap
        self.nonce = b""
        self.program_filter: seccomp_filter.ProgramFilter | None = None
        if use_seccomp and seccomp_filter.available(libraries):
            seccomp_filter.load_template_filter(network)
            self.program_filter = seccomp_filter.ProgramFilter(network)
        # Collect cycles only where we choose (in program processes, under their timers).
        gc.disable()
        gc.freeze()

    def facts(self) -> bytes:
        return json.dumps({"seccomp": self.program_filter is not None, "uid": os.getuid()}).encode()

    def serve(self) -> None:
        while True:
            try:
                message = self.conn.recv_bytes()
            except (EOFError, OSError):
                return
            tag, body = message[:1], message[1:]
            if tag == FILE:
                path, _, content = body.partition(b"\0")
                files.install(path.decode("utf-8", "surrogateescape"), content)
                self._retire_shared()  # a new file: the shared process must be re-forked
            elif tag == PROGRAM:
                self.nonce, request = body[:NONCE_BYTES], body[NONCE_BYTES:]
                reply = self.handle(request)
                self.conn.send_bytes(reply[:1] + self.nonce + reply[1:])
            else:
                return  # the parent never sends anything else

    def handle(self, request: bytes) -> bytes:
        ref, _, source = request.decode("utf-8", "surrogatepass").partition("\0")
        try:
            name, args, kwargs = split_ref(ref)
            if name not in self.factories:
                self._load(name)
            module = importlib.import_module(name.partition(":")[0])
            shared = getattr(module, SHARED_FLAG, False) is True
            self._prime(ref, name, args, kwargs)
        except Exception as exc:  # the harness's own code failed: not the program's fault
            return internal_reply(exc)
        if shared:
            return self._run_shared(name, args, kwargs, source)
        # Compile here (harness code, no program runs), so the code cache lives in the
        # template and forked program processes find the program's lines already compiled.
        self.executor.code.get(source)
        return self._run_forked(name, args, kwargs, source)

    # -- loading -------------------------------------------------------------------------------

    def _load(self, name: str) -> Callable[..., Any]:
        module_name, _, qualname = name.partition(":")
        self.conn.send_bytes(LOADING + self.nonce)
        module = importlib.import_module(module_name)
        prepare = getattr(module, PREPARE_HOOK, None)
        if callable(prepare):
            prepare()  # one-off imports and warm-up, outside every program's time limits
        obj: Any = module
        for part in qualname.split("."):
            obj = getattr(obj, part)
        self.factories[name] = obj
        self._retire_shared()  # it was forked without this module
        gc.freeze()  # the freshly imported modules are permanent
        return obj

    def _prime(self, ref: str, name: str, args: list[Any], kwargs: dict[str, Any]) -> None:
        """Per distinct factory arguments, once: the module's warm-up for them (trusted)."""
        if ref in self.primed:
            return
        prime = getattr(importlib.import_module(name.partition(":")[0]), PRIME_HOOK, None)
        if callable(prime):
            prime(*args, **kwargs)
            self._retire_shared()
            gc.freeze()
        if len(self.primed) >= _MAX_PRIMED:
            self.primed.clear()
        self.primed.add(ref)

    # -- a fresh process per program -----------------------------------------------------------

    def _run_forked(self, name: str, args: list[Any], kwargs: dict[str, Any], source: str) -> bytes:
        read_fd, write_fd = os.pipe()  # program process -> template: replies and host calls
        answer_read, answer_write = os.pipe()  # template -> program process: host answers
        pid = os.fork()
        if pid == 0:  # the program process
            try:
                os.close(read_fd)
                os.close(answer_write)
                self._become_program_process()
                executor = self.executor
                host.bind(write_fd, answer_read, self.limits, executor.timers, executor.code)
                self._program_process(self.factories[name], args, kwargs, source, write_fd)
            finally:
                os._exit(0)  # never run the template's cleanup, or anything the program left
        os.close(write_fd)
        os.close(answer_read)
        try:
            data, timed_out, problem = self._converse(read_fd, answer_write)
        finally:
            os.close(read_fd)
            os.close(answer_write)
        if not timed_out and problem is None and data[:2] == WORLD_READY + RESULT:
            # A whole reply: its exit status says nothing more. The process is killed now
            # and reaped later, so its exit (unmapping a library-sized address space) is not
            # on the request's path.
            self._reap_later(pid)
            return self._judge(data, False, 0)
        status = self._reap(pid, kill=timed_out or problem is not None)
        return _died(problem) if problem else self._judge(data, timed_out, status)

    def _reap_later(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        self.exiting.append(pid)
        still = []
        for waiting in self.exiting:
            if os.waitpid(waiting, os.WNOHANG)[0] == 0:
                still.append(waiting)
        while len(still) > _MAX_EXITING:  # never more than a few zombies
            os.waitpid(still.pop(0), 0)
        self.exiting = still

    def _become_program_process(self) -> None:
        self.conn.close()  # the parent's channel is the template's alone
        if self.program_filter is not None:
            self.program_filter.load()

    def _program_process(
        self,
        factory: Callable[..., Any],
        args: list[Any],
        kwargs: dict[str, Any],
        source: str,
        out: int,
    ) -> None:
        try:
            world = build_world(factory, args, kwargs)
        except Exception as exc:
            _write_all(out, internal_reply(exc))
            return
        _write_all(out, WORLD_READY)  # from here on, anything written may be the program's
        _write_all(out, self.executor.run(world, source, collect=False))
        os.close(out)  # end of file now: the template need not wait for this process's exit

    def _converse(self, fd: int, answers: int) -> tuple[bytes, bool, str | None]:
        """What the program process wrote (its reply), up to the reply cap, answering its host
        calls on the way; (data, timed out). The program's deadline pauses while the parent
        answers a host call; a host call over the size cap or the count cap ends the program
        (the parent would refuse it anyway): (data, timed out, why it must die or None)."""
        stream = Stream(fd, self.limits.wall_s + CHILD_GRACE_S, self.max_reply)
        calls = 0
        while True:
            call = stream.next_call()
            if call is None:
                return stream.data(), stream.timed_out, None
            calls += 1
            if len(call) > self.limits.max_output_bytes:
                return b"", False, "sent a host call over the size cap"
            if calls > self.limits.max_host_calls:
                return b"", False, "made more host calls than its limit"
            started = time.monotonic()
            self.conn.send_bytes(HOST + self.nonce + call)
            answer = self.conn.recv_bytes()  # the parent is trusted; it answers or kills us
            body, compiled = self._answer_body(answer)  # compiling is the host's time too
            stream.deadline += time.monotonic() - started
            frame = host.LENGTH.pack(len(body)) + body + host.LENGTH.pack(len(compiled)) + compiled
            with contextlib.suppress(OSError):  # it died meanwhile: its end of file tells
                _write_all(answers, frame)

    def _answer_body(self, answer: bytes) -> tuple[bytes, bytes]:
        """(the answer's JSON for the program process, code objects compiled for it or b"").
        A ``Code`` answer's sources are compiled here, with the template's cache: the next
        program process is forked with them, and this one gets them marshalled."""
        tag, body = answer[:1], answer[1:]
        if tag == ANSWER:
            return body, b""
        if tag != ANSWER_CODE:
            return b'{"error": "no answer"}', b""
        message = json.loads(body)  # the parent is trusted
        answer_body = json.dumps({"ok": message["ok"]}).encode("utf-8")
        return answer_body, self.executor.code.precompile(message["compile"])

    @staticmethod
    def _reap(pid: int, kill: bool) -> int:
        """The program process's exit status; it is killed if it outlives its reply."""
        if not kill:
            for _ in range(200):  # it exits right after writing its reply
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    return status
                time.sleep(0.0005)
        os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]

    def _judge(self, data: bytes, timed_out: bool, status: int) -> bytes:
        """The reply for the parent, from what a program process wrote and how it ended."""
        if timed_out:
            return encode_result(
                "timeout", f"timeout: program ran longer than {self.limits.wall_s} s"
            )
        if len(data) > self.max_reply:
            return _died("sent a reply over the size cap")
        if not data.startswith(WORLD_READY):
            if data.startswith(RESULT) and _kind_of(data) == INTERNAL:
                return data  # written before any program code ran: trustworthy
            return _died(_exit_description(status) if not data else "sent a malformed reply")
        reply = data[len(WORLD_READY) :]
        if not reply:
            return _died(_exit_description(status))
        if not reply.startswith(RESULT) or _kind_of(reply) in (None, INTERNAL):
            return _died("sent a malformed reply")
        return reply

    # -- the shared program process (worlds that set SANDBOX_SHARED) ---------------------------

    def _run_shared(self, name: str, args: list[Any], kwargs: dict[str, Any], source: str) -> bytes:
        module = name.partition(":")[0]
        process = self.shared.get(module)
        if process is None:
            process = self.shared[module] = _SharedProcess(self)
        reply = process.run(name, args, kwargs, source)
        if reply is None or not reply.startswith(RESULT) or _kind_of(reply) is None:
            what = process.end()
            del self.shared[module]
            if reply is None and what == "timeout":
                limit = self.limits.wall_s
                return encode_result("timeout", f"timeout: program ran longer than {limit} s")
            return _died(what if reply is None else "sent a malformed reply")
        if _kind_of(reply) == INTERNAL:  # recycle it: it may not be telling the truth
            self.shared.pop(module).end()
        return reply

    def _retire_shared(self) -> None:
        """End every shared process (they were forked before the template last changed)."""
        for process in self.shared.values():
            process.end()
        self.shared.clear()


def _kind_of(reply: bytes) -> str | None:
    head, _, _ = reply[1:].partition(b"\n")
    try:
        value = json.loads(head)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0]
    return None


class _SharedProcess:
    """One long-lived program process for shared worlds; the template kills it at will."""

    def __init__(self, template: Template) -> None:
        self.template = template
        request_read, self.request_write = os.pipe()
        self.reply_read, reply_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.close(self.request_write)
                os.close(self.reply_read)
                template._become_program_process()
                self._serve(request_read, reply_write)
            finally:
                os._exit(0)
        os.close(request_read)
        os.close(reply_write)
        self.requests = Channel(self.request_write)
        self.replies = Channel(self.reply_read)
        self.last_problem = "timeout"

    def _serve(self, request_fd: int, reply_fd: int) -> None:
        requests = Channel(request_fd)
        replies = Channel(reply_fd)
        template = self.template
        while True:
            try:
                request = requests.recv_bytes()
            except (EOFError, OSError):
                return
            head, _, source = request.decode("utf-8", "surrogatepass").partition("\0")
            try:
                name, args, kwargs = json.loads(head)
                world = build_world(template.factories[name], args, kwargs)
            except Exception as exc:
                replies.send_bytes(internal_reply(exc))
                continue
            replies.send_bytes(template.executor.run(world, source, collect=True))

    def run(self, name: str, args: list[Any], kwargs: dict[str, Any], source: str) -> bytes | None:
        """The reply, or None (timeout or death: see ``end``)."""
        self.last_problem = "timeout"
        head = json.dumps([name, args, kwargs])
        try:
            self.requests.send_bytes((head + "\0" + source).encode("utf-8", "surrogatepass"))
            if not self.replies.poll(self.template.limits.wall_s + CHILD_GRACE_S):
                return None
            return self.replies.recv_bytes(self.template.max_reply)
        except (EOFError, OSError):
            self.last_problem = "died"
            return None

    def end(self) -> str:
        """Kill and reap it; what happened ('timeout', or how it died)."""
        problem = self.last_problem
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        status = os.waitpid(self.pid, 0)[1]
        for conn in (self.requests, self.replies):
            conn.close()
        if problem == "died":
            return _exit_description(status)
        return problem


def main(conn: Channel, config: dict[str, Any]) -> None:
    """Entry point called by the bootstrap command line in ``_process.py``."""
    try:
        template = Template(
            conn,
            Limits(**config["limits"]),
            bool(config.get("seccomp", True)),
            dict(config.get("libraries", {})),
            bool(config.get("network", False)),
        )
    except BaseException as exc:
        conn.send_bytes(FAILED + policy.describe_exception(exc).encode("utf-8", "replace"))
        os._exit(1)
    conn.send_bytes(READY + template.facts())
    template.serve()
    # Skip interpreter teardown: nothing of value is left.
    os._exit(0)
