"""Any agent process as the thing under test (``--model agent:COMMAND``).

The contract (docs/agents.md): COMMAND is split with shlex (never a shell) and started once
per sample x epoch in a fresh empty folder of its own; it reads the user's request on stdin
(also ``$TOOLBENCH_REQUEST``), reaches the sample's world over MCP at ``$TOOLBENCH_MCP_URL``
(served by the run's ``Hub``), prints its final message on stdout and its log on stderr, and
exits 0 when done. An agent is untrusted code: each attempt runs in the OS layer of
``agents.contain`` (own namespaces, a read-only view without the data, the run folder, the
cache or other samples, an allow-listed environment, memory and process limits), and what it
does is hostile input, bounded here: wall time (``--model-arg timeout``, alias
``--agent-timeout``), and 1 MB on each of stdout and stderr (read as it comes, never all
kept); past either, the attempt is killed with everything it started and the sample is its
failure (model_error), while the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.agents import contain
from toolbench.agents.contain import AgentLimits, View
from toolbench.agents.hub import Hub
from toolbench.core.agent import MAX_FINAL_MESSAGE_CHARS, AgentBrief, AgentEnd, AgentWorld
from toolbench.errors import UserError

#: Bytes an agent may print on each of stdout and stderr before it is killed.
MAX_OUTPUT_BYTES = 1_000_000
#: The longest request also given as ``$TOOLBENCH_REQUEST`` (the OS refuses an environment
#: string over 128 KiB); a longer one is on stdin only.
MAX_ENV_REQUEST_BYTES = 100_000
#: The default wall-time limit of one attempt (``--model-arg timeout``, alias ``--agent-timeout``).
DEFAULT_TIMEOUT_S = 300.0
#: The stderr tail kept for the record of a failed attempt.
STDERR_TAIL_CHARS = 2_000
#: Seconds to wait for the pipes to close once the agent's process group is gone.
DRAIN_S = 5.0
_CHUNK = 65_536
_POLL_S = 0.02


@dataclass(frozen=True)
class AgentSettings:
    """How every attempt of a run's agent is run: wall time, the OS limits, and the cache
    folder (hidden from the agent)."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    limits: AgentLimits = field(default_factory=AgentLimits)
    cache_dir: Path | None = None


def parse_command(command: str) -> list[str]:
    """``COMMAND`` as argv (shlex, as a POSIX shell would split it, nothing expanded); a
    ``UserError`` for an empty or unbalanced command, or a program that cannot be found.

    The agent runs in a fresh folder of its own, so paths in the command are resolved here,
    against the folder toolbench was started in, as the user wrote them: a program given as a
    path (``./agent``, ``.venv/bin/python``) and any argument that names an existing file
    there (``my_agent.py``) become absolute. Other words are left as they are."""
    flag = f"--model agent:{command}"
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UserError(f"{flag}: cannot split the command ({exc}); check its quotes") from None
    if not argv:
        raise UserError(
            "--model agent:COMMAND: the command is empty; write e.g. "
            '--model agent:"python my_agent.py"'
        )
    if shutil.which(argv[0]) is None:
        raise UserError(
            f"{flag}: {argv[0]!r} is not an executable program (not found on $PATH, or not "
            'executable); give its path or the interpreter, e.g. agent:"python my_agent.py"'
        )
    program = os.path.abspath(argv[0]) if os.sep in argv[0] else argv[0]
    return [program, *(_resolved(word) for word in argv[1:])]


def _resolved(word: str) -> str:
    """``word`` made absolute when it names an existing file here (see ``parse_command``)."""
    if not word or word.startswith("-") or len(word) > 4096 or "\0" in word:
        return word
    try:
        found = os.path.isfile(word)
    except (OSError, ValueError):
        return word
    return os.path.abspath(word) if found else word


class ProcessAgent:
    """``--model agent:COMMAND``: one contained process per attempt (see module doc). An
    agent, not a model: it answers no prompt, and nothing of it is cached (an attempt is a
    run of a program on a live world, not an answer to a request). Built by
    ``agents.registry.make_agent``."""

    def __init__(
        self, command: str, argv: list[str], settings: AgentSettings | None = None
    ) -> None:
        self.name = f"agent:{command}"
        self.argv = list(argv)
        self.settings = settings or AgentSettings()
        self.containment = contain.detect()  # TOOLBENCH_ISOLATION=full: refused here
        contain.warn_once(self.containment)
        # Scratch folders and the hub's socket live here, hidden from every agent but each
        # one's own scratch folder.
        self._root = tempfile.mkdtemp(prefix="toolbench-agents-")
        socket = os.path.join(self._root, "hub.sock")
        self._hub = Hub(unix_path=socket if self.settings.limits.network == "none" else None)

    @property
    def timeout_s(self) -> float:
        return self.settings.timeout_s

    @property
    def isolation(self) -> dict[str, Any]:
        """What kept the agent in, for run.json's ``agent_isolation``."""
        return self.containment.describe(self.settings.limits)

    async def aclose(self) -> None:
        await self._hub.close()
        shutil.rmtree(self._root, ignore_errors=True)

    async def attempt(self, world: AgentWorld, brief: AgentBrief) -> AgentEnd:
        return await self.attempt_with(world, brief, brief.request)

    async def attempt_with(self, world: AgentWorld, brief: AgentBrief, stdin: str) -> AgentEnd:
        """One attempt with ``stdin`` as the process's input (the request, or the harness's
        script for its own scripted agents)."""
        async with self._hub.serving(world, brief.task) as url:
            scratch = tempfile.mkdtemp(prefix="attempt-", dir=self._root)
            try:
                env = contain.agent_environment(
                    os.environ, contract(url, brief), scratch, self.settings.limits.passed_env
                )
                return await self._run(self._command(url, brief, scratch), env, stdin, scratch)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

    def _command(self, url: str, brief: AgentBrief, scratch: str) -> list[str]:
        limits = self.settings.limits
        hidden = [brief.run_dir, brief.data_dir, self.settings.cache_dir, self._root]
        view = View(
            scratch=scratch,
            hidden=contain.sensitive_paths(hidden),
            shown=contain.command_paths(self.argv),
            socket=self._hub.unix_path,
        )
        argv = self.argv
        if limits.network == "none" and self.containment.namespaces:
            port = urllib.parse.urlsplit(url).port or 80
            bridge = [sys.executable, "-m", "toolbench.agents.bridge", contain.SOCKET_INSIDE]
            argv = [*bridge, str(port), "--", *argv]
        return contain.wrap(self.containment, argv, view, limits)

    async def _run(self, argv: list[str], env: dict[str, str], stdin: str, cwd: str) -> AgentEnd:
        started = time.monotonic()
        if shutil.which(self.argv[0]) is None:  # gone since the run began: say so plainly
            return AgentEnd("", failure=f"could not start {self.argv[0]}: no such program")
        cap = contain.ProcessCap.make(self.settings.limits.processes)
        try:
            return await self._started(argv, env, stdin, cwd, cap, started)
        finally:
            if cap is not None:
                cap.remove()

    async def _started(
        self,
        argv: list[str],
        env: dict[str, str],
        stdin: str,
        cwd: str,
        cap: contain.ProcessCap | None,
        started: float,
    ) -> AgentEnd:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
                preexec_fn=cap.enter if cap is not None else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            why = (exc.strerror if isinstance(exc, OSError) else None) or exc
            return AgentEnd("", failure=f"could not start {self.argv[0]}: {why}")
        out, err = _Sink(MAX_FINAL_MESSAGE_CHARS * 4), _Sink(STDERR_TAIL_CHARS * 4)
        flood = asyncio.Event()
        helpers = [
            asyncio.create_task(_pump(proc.stdout, out, flood)),
            asyncio.create_task(_pump(proc.stderr, err, flood)),
            asyncio.create_task(_feed(proc.stdin, stdin.encode("utf-8"))),
        ]
        try:
            stop = await _wait(proc, flood, self.timeout_s)
        finally:
            _kill_group(proc)  # its namespace (and so all it started) dies with it
            await _drain(proc, helpers)
        return _end(proc.returncode, stop, out, err, time.monotonic() - started, self.timeout_s)


def contract(url: str, brief: AgentBrief) -> dict[str, str]:
    """The ``TOOLBENCH_*`` variables an agent is told (docs/agents.md). Where the data lives
    is not among them: the data is hidden from it."""
    env = {
        "TOOLBENCH_MCP_URL": url,
        "TOOLBENCH_TASK": brief.task,
        "TOOLBENCH_SAMPLE_ID": str(brief.sample_id),
        "TOOLBENCH_EPOCH": str(brief.epoch),
        "TOOLBENCH_DATA_VERSION": brief.data_version,
    }
    if len(brief.request.encode("utf-8", errors="replace")) <= MAX_ENV_REQUEST_BYTES:
        env["TOOLBENCH_REQUEST"] = brief.request
    return env


@dataclass
class _Sink:
    """One output stream as read: its size, and its last ``keep`` bytes only."""

    keep: int
    size: int = 0
    tail: bytearray = field(default_factory=bytearray)

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        self.tail += chunk
        if len(self.tail) > self.keep:
            del self.tail[: len(self.tail) - self.keep]

    def text(self, chars: int) -> str:
        text = self.tail.decode("utf-8", errors="replace")
        return text[-chars:] if len(text) > chars else text


async def _pump(stream: asyncio.StreamReader | None, sink: _Sink, flood: asyncio.Event) -> None:
    """Read ``stream`` to its end, keeping its tail; past MAX_OUTPUT_BYTES, set ``flood``
    (reading goes on, discarded, so that a writer blocked on a full pipe is never what keeps
    the attempt alive)."""
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK):
        sink.add(chunk)
        if sink.size > MAX_OUTPUT_BYTES:
            flood.set()


async def _feed(stdin: asyncio.StreamWriter | None, data: bytes) -> None:
    """The request on stdin, then EOF; an agent that never reads it is not at fault."""
    if stdin is None:
        return
    with contextlib.suppress(OSError):  # BrokenPipe / ConnectionReset: it closed stdin
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(OSError):
        stdin.close()
        await stdin.wait_closed()


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """The agent process has exited. Not ``proc.wait()``: asyncio's waits for its pipes to
    close too, which a child that left the process group can hold open for ever."""
    while proc.returncode is None:
        await asyncio.sleep(_POLL_S)


async def _wait(proc: asyncio.subprocess.Process, flood: asyncio.Event, limit: float) -> str:
    """Wait for the agent to exit: "" if it did, "flood" or "timeout" if it was stopped."""
    exited = asyncio.create_task(_exited(proc))
    flooded = asyncio.create_task(flood.wait())
    try:
        done, _ = await asyncio.wait(
            {exited, flooded}, timeout=limit, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        flooded.cancel()
        exited.cancel()
    if flooded in done or flood.is_set():
        return "flood"
    return "" if exited in done else "timeout"


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # its session's group: the agent and its children
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def _drain(proc: asyncio.subprocess.Process, helpers: list[asyncio.Task[None]]) -> None:
    """Once the killed agent is gone, let the readers reach the pipes' ends; a child that left
    the group may hold them open: then give up after DRAIN_S and close them."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(_exited(proc), DRAIN_S)
    _, pending = await asyncio.wait(helpers, timeout=DRAIN_S)
    for task in pending:
        task.cancel()
    await asyncio.gather(*helpers, return_exceptions=True)
    if pending:  # asyncio offers no public way to let go of a subprocess's pipes
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()


def _end(
    code: int | None, stop: str, out: _Sink, err: _Sink, seconds: float, limit: float
) -> AgentEnd:
    """How the attempt ended, for the record (see ``AgentEnd``)."""
    details: dict[str, Any] = {
        "exit_code": code,
        "seconds": round(seconds, 3),
        "stdout_bytes": out.size,
        "stderr_bytes": err.size,
    }
    failure = None
    if stop == "flood":
        which = "stdout" if out.size > MAX_OUTPUT_BYTES else "stderr"
        failure = f"printed more than 1 MB on {which} (killed)"
    elif stop == "timeout":
        failure = f"ran past its {limit:g} s limit (killed)"
    elif code:
        failure = _exit_failure(code, err.text(STDERR_TAIL_CHARS * 4))
    if failure is not None:
        details["stderr_tail"] = err.text(STDERR_TAIL_CHARS)
    return AgentEnd(out.text(MAX_FINAL_MESSAGE_CHARS), failure=failure, details=details)


def _exit_failure(code: int, stderr: str) -> str:
    last = error_line(stderr)
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}: {last}"
    return f"exited with code {code}: {last}"


#: A Python traceback's frame line and headers: where they are, the error is a raised line.
_TRACEBACK = re.compile(r'Traceback \(most recent call last\):|^\s*File ".*", line \d+', re.M)
#: The header of a traceback of its own (not one inside an exception group's box).
_OUTER_HEADER = re.compile(
    r"^(?:Traceback|\s*\+ Exception Group Traceback) \(most recent call last\):", re.M
)
#: ``Name: message`` or ``package.Name: message`` (the line an uncaught exception ends with).
_RAISED = re.compile(r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(:(?:\s.*)?)?")
#: An exception without a message names itself by one of these endings (``KeyboardInterrupt``).
_EXCEPTION_ENDINGS = ("Error", "Exception", "Exit", "Interrupt", "Warning", "Group")
#: The line an exception group prints about itself, before its sub-exceptions.
_GROUP_SUMMARY = re.compile(r"\(\d+ sub-exceptions?\)$")
#: A log line after a traceback that is about a failure (the traceback was only logged).
_LOGGED_ERROR = re.compile(r"\b(?:error|fatal|failed)\b", re.I)


def error_line(stderr: str) -> str:
    """What an agent that failed said last about why, for its record's one-line message.

    Its stderr's last line is often no reason at all: Python prints an exception group
    (anyio's task groups, ``asyncio.TaskGroup``) inside a box whose last line is a border of
    dashes. Where stderr holds a traceback, the message is the exception its last traceback
    names: that line (``ValueError: boom``), never a frame, a border or a group's summary (a
    group's leaves come after its summary; the last leaf is said, and how many more there
    were), unless a line after it says error or fatal (a log line about the real failure).
    Otherwise the last line that says anything (has a letter)."""
    lines = stderr.splitlines()
    said = [line.strip() for line in lines if re.search(r"[A-Za-z]", line)]
    if not said:
        printed = [line.strip() for line in lines if line.strip()]
        return printed[-1][:300] if printed else "(nothing on stderr)"
    if not _TRACEBACK.search(stderr):
        return said[-1][:300]
    headers = [i for i, line in enumerate(lines) if _OUTER_HEADER.match(line)]
    raised = _raised_lines(lines, headers[-1] if headers else 0)
    if not raised:
        return said[-1][:300]
    later = [line.strip() for line in lines[raised[-1][0] + 1 :] if _LOGGED_ERROR.search(line)]
    if later:
        return later[-1][:300]
    leaves = [text for _, text in raised if not _GROUP_SUMMARY.search(text)]
    if not leaves:
        return raised[-1][1][:300]
    grouped = len(leaves) < len(raised) and len(leaves) > 1
    suffix = f" (and {len(leaves) - 1} more in an exception group)" if grouped else ""
    return leaves[-1][:300] + suffix


def _raised_lines(lines: list[str], start: int) -> list[tuple[int, str]]:
    """(index, text) of the lines from ``start`` on that name an exception: at the
    traceback's own margin once an exception group's ``|`` box is taken off (frames and source
    lines are indented), of the form ``Name: message`` (or a bare exception name such as
    ``KeyboardInterrupt``)."""
    found = []
    for index in range(start, len(lines)):
        text = re.sub(r"^\s*\|\s?", "", lines[index].rstrip())
        match = _RAISED.fullmatch(text)
        if match and (match.group(2) or match.group(1).endswith(_EXCEPTION_ENDINGS)):
            found.append((index, text))
    return found
