"""Any agent process as the thing under test (``--model agent:COMMAND``).

The contract (docs/agents.md): COMMAND is split with shlex (never a shell) and started once
per sample x epoch in a fresh empty folder of its own, in a session (process group) of its
own; it reads the user's request on stdin (also ``$TOOLBENCH_REQUEST``), reaches the sample's
world over MCP at ``$TOOLBENCH_MCP_URL`` (served by the run's ``Hub``), prints its final
message on stdout and its log on stderr, and exits 0 when done. Everything it does is hostile
input, bounded here: wall time (``--agent-timeout``), and 1 MB on each of stdout and stderr
(read as it comes, never all kept); past either, its whole process group is killed and the
sample is its failure (model_error), while the rest of the run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolbench.agents import require_mcp
from toolbench.agents.hub import Hub
from toolbench.core.agent import MAX_FINAL_MESSAGE_CHARS, AgentBrief, AgentEnd, AgentWorld
from toolbench.errors import UserError

if TYPE_CHECKING:
    from toolbench.models.base import ModelOptions
    from toolbench.types import Generation, GenerationRequest

#: Bytes an agent may print on each of stdout and stderr before it is killed.
MAX_OUTPUT_BYTES = 1_000_000
#: The longest request also given as ``$TOOLBENCH_REQUEST`` (the OS refuses an environment
#: string over 128 KiB); a longer one is on stdin only.
MAX_ENV_REQUEST_BYTES = 100_000
#: The default wall-time limit of one attempt (``--agent-timeout``).
DEFAULT_TIMEOUT_S = 300.0
#: The stderr tail kept for the record of a failed attempt.
STDERR_TAIL_CHARS = 2_000
#: Seconds to wait for the pipes to close once the agent's process group is gone.
DRAIN_S = 5.0
_CHUNK = 65_536
_POLL_S = 0.02


def make_agent(argument: str | None, options: ModelOptions) -> ProcessAgent:
    """The registry's factory for ``agent:COMMAND``: refuses, before any work, a command that
    cannot be run and a missing MCP SDK (every sample would fail the same way)."""
    command = (argument or "").strip()
    require_mcp(f"--model agent:{command}")
    argv = parse_command(command)
    timeout = float(options.agent_timeout_s)
    return ProcessAgent(command, argv, timeout_s=timeout)


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
    """``--model agent:COMMAND``: one process per attempt (see module doc). Never cached: an
    agent's attempt is a run of a program on a live world, not an answer to a request."""

    cacheable = False

    def __init__(self, command: str, argv: list[str], timeout_s: float = DEFAULT_TIMEOUT_S):
        self.name = f"agent:{command}"
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self._hub = Hub()

    async def generate(self, request: GenerationRequest) -> Generation:
        raise TypeError(
            f"{self.name} is an agent: it solves samples itself over MCP (attempt), and cannot "
            "answer a prompt; use it only as the model under test of 'toolbench run'"
        )

    async def aclose(self) -> None:
        await self._hub.close()

    async def attempt(self, world: AgentWorld, brief: AgentBrief) -> AgentEnd:
        async with self._hub.serving(world, brief.task) as url:
            with tempfile.TemporaryDirectory(
                prefix="toolbench-agent-", ignore_cleanup_errors=True
            ) as cwd:
                return await self._run(agent_env(url, brief), brief.request, cwd)

    async def _run(self, env: dict[str, str], request: str, cwd: str) -> AgentEnd:
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return AgentEnd("", failure=f"could not start {self.argv[0]}: {exc.strerror or exc}")
        out, err = _Sink(MAX_FINAL_MESSAGE_CHARS * 4), _Sink(STDERR_TAIL_CHARS * 4)
        flood = asyncio.Event()
        helpers = [
            asyncio.create_task(_pump(proc.stdout, out, flood)),
            asyncio.create_task(_pump(proc.stderr, err, flood)),
            asyncio.create_task(_feed(proc.stdin, request.encode("utf-8"))),
        ]
        try:
            stop = await _wait(proc, flood, self.timeout_s)
        finally:
            _kill_group(proc)  # nothing of the agent outlives its attempt
            await _drain(proc, helpers)
        return _end(proc.returncode, stop, out, err, time.monotonic() - started, self.timeout_s)


def agent_env(url: str, brief: AgentBrief) -> dict[str, str]:
    """The harness's environment plus what the agent is told about its sample (contract);
    a ``TOOLBENCH_*`` variable of the harness's own with one of these names is replaced."""
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_DATA_DIR"}
    env.pop("TOOLBENCH_REQUEST", None)
    if len(brief.request.encode("utf-8", errors="replace")) <= MAX_ENV_REQUEST_BYTES:
        env["TOOLBENCH_REQUEST"] = brief.request
    env.update(
        {
            "TOOLBENCH_MCP_URL": url,
            "TOOLBENCH_TASK": brief.task,
            "TOOLBENCH_SAMPLE_ID": str(brief.sample_id),
            "TOOLBENCH_EPOCH": str(brief.epoch),
            "TOOLBENCH_DATA_VERSION": brief.data_version,
        }
    )
    if brief.data_dir is not None:
        env["TOOLBENCH_DATA_DIR"] = brief.data_dir
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
        failure = _exit_failure(code, err.text(STDERR_TAIL_CHARS))
    if failure is not None:
        details["stderr_tail"] = err.text(STDERR_TAIL_CHARS)
    return AgentEnd(out.text(MAX_FINAL_MESSAGE_CHARS), failure=failure, details=details)


def _exit_failure(code: int, stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1][:300] if lines else "(nothing on stderr)"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}: {last}"
    return f"exited with code {code}: {last}"
