"""The OS layer around an agent process: what it sees, what it may do, and what it leaves.

An agent under test is untrusted code run on the user's behalf, so it gets what sandbox
workers get (``sandbox/isolation.py``), shaped for a program that must still run the user's
own code and usually talk to a remote LLM API. Under bubblewrap, each attempt runs in fresh
PID, mount, IPC and UTS namespaces with every capability dropped:

- **Nothing outlives the attempt.** Its PID namespace dies with it: a double fork plus
  ``setsid`` is killed with the rest when the agent exits or is stopped. It sees no process
  but its own (a fresh ``/proc``), so it cannot read another agent's environment or command
  line, nor signal the harness.
- **Read-only, minus the answers.** The file system is the host's, read-only, except: a
  private ``/tmp`` and ``/var/tmp`` (size-capped tmpfs), a fresh ``/dev``, its own writable
  scratch folder (its cwd and ``$HOME``), and *hidden* (empty in its view): the run folder,
  ``./runs``, the data folders, toolbench's own tasks (data and the generators that would
  rebuild it), the response cache, the log key folder (``package.key_dir``) and every other
  attempt's scratch folder. What the command
  line names (the program, a script and the folder it lives in) and the Python installation
  stay visible even where they lie under ``/tmp``.
- **Network**: ``host`` (default; agents call remote model APIs) keeps the host's network,
  where the only door to the harness is the sample's own MCP URL, whose token no other
  process can learn. ``none`` gives it an empty network namespace: its MCP URL then reaches
  the run's hub through a Unix socket bound into the sandbox (``agents.bridge``).
- **Limits**: address space (``--agent-memory``) and processes (threads included): a pids
  cgroup of its own where this user can make one (root, usually), else ``RLIMIT_NPROC``, which
  the kernel does not enforce for root; wall time and output are the caller's
  (``agents.process``).

Where bubblewrap cannot run (not installed, no user namespaces, not Linux) the agent runs as a
plain process in its own session, with the same environment allow-list and limits: one
warning at start, and ``describe`` says so for ``run.json`` (``agent_isolation``).
``TOOLBENCH_ISOLATION=full`` refuses to run instead; ``=none`` switches the layer off.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.package import PACKAGE_DIR, default_cache_dir, key_dir
from toolbench.sandbox.isolation import (
    ENV_VAR,
    HOW_TO,
    IsolationUnavailable,
    masked_data_dirs,
    python_dirs,
    requested,
)

#: ``--agent-network``: the host's network (default), or none but the sample's endpoint.
NETWORKS = ("host", "none")
DEFAULT_NETWORK = "host"
#: ``--agent-memory``: address space of the agent and each process it starts (MB).
DEFAULT_MEMORY_MB = 8192
#: Processes the agent's user may run at once inside (enforced where the user is not root).
DEFAULT_PROCESSES = 512
#: Size of the agent's private /tmp and /var/tmp (each).
TMP_BYTES = 256 * 1024 * 1024
#: Where the hub's Unix socket appears inside the sandbox (``--agent-network none``).
SOCKET_INSIDE = "/tmp/.toolbench-mcp.sock"

#: Environment variables an agent gets from the harness's environment, by exact name.
PASSED_NAMES = frozenset(
    {
        *("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONPATH", "VIRTUAL_ENV"),
        *("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"),
        *("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"),
        *("http_proxy", "https_proxy", "no_proxy", "all_proxy"),
    }
)
#: ... and by suffix: model API credentials and addresses (``OPENAI_API_KEY``, ``..._BASE_URL``).
PASSED_SUFFIXES = ("_API_KEY", "_API_BASE", "_BASE_URL", "_API_VERSION", "_ORG_ID")
PASSED_PREFIXES = ("LC_",)

_SYSTEM_TMP = ("/tmp", "/var/tmp")
#: Parts of the toolbench package no agent needs and that would give answers away: the
#: tasks (their data generators rebuild the test sets, gold included, byte for byte) and the
#: awareness builders. The reference agent needs neither (it sits below them in the layers).
TOOLBENCH_HIDDEN = ("tasks", "aware")


@dataclass(frozen=True)
class AgentLimits:
    """What an attempt may use (the run's ``--agent-*`` flags)."""

    memory_mb: int = DEFAULT_MEMORY_MB  # 0: no limit
    processes: int = DEFAULT_PROCESSES
    network: str = DEFAULT_NETWORK
    passed_env: tuple[str, ...] = ()  # further variable names given as they are (--agent-env)


@dataclass(frozen=True)
class Containment:
    """What this machine gives agent processes; ``level`` "full" or "none"."""

    level: str
    bwrap: str = ""
    reason: str = ""

    @property
    def namespaces(self) -> bool:
        return self.level == "full"

    def describe(self, limits: AgentLimits) -> dict[str, Any]:
        """The ``agent_isolation`` entry of run.json: level, missing layers, one line."""
        missing: list[str] = [] if self.namespaces else ["namespaces", "file system view"]
        if os.geteuid() == 0 and cgroup_root() is None:
            missing.append("process limit (root, and no pids cgroup to make)")
        memory = f"{limits.memory_mb} MB" if limits.memory_mb else "unlimited"
        if self.namespaces:
            summary = (
                "full: own PID/mount/IPC/UTS namespaces, no capabilities, data, run folder, "
                f"cache and other samples hidden; network {limits.network}; memory {memory}"
            )
        else:
            summary = f"none: {self.reason}; agents ran as plain processes; to fix: {HOW_TO}"
        return {
            "level": self.level,
            "missing": missing,
            "network": limits.network,
            "memory_mb": limits.memory_mb,
            "summary": summary,
        }


@dataclass
class View:
    """One attempt's file system: its scratch folder, what to hide and what to show."""

    scratch: str
    hidden: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    socket: str | None = None  # the hub's Unix socket (network none)


def check_network(value: str) -> str:
    if value not in NETWORKS:
        raise UserError(f"--agent-network {value!r}: use one of {', '.join(NETWORKS)}")
    return value


def sensitive_paths(extra: Iterable[str | os.PathLike[str] | None]) -> list[str]:
    """What no agent may read: ``extra`` (the run folder, data folders, cache, scratch
    parent) plus toolbench's own task data, the default cache, the key folder and
    ``./runs``."""
    places: list[str | os.PathLike[str] | None] = [
        *extra,
        default_cache_dir(),
        key_dir(),
        Path.cwd() / "runs",
        *masked_data_dirs([str(PACKAGE_DIR)]),
        *(PACKAGE_DIR / name for name in TOOLBENCH_HIDDEN),
    ]
    found = sorted({os.path.realpath(p) for p in places if p and os.path.lexists(p)})
    # A folder inside one already hidden is left alone: mounting over it would make its
    # name appear in the empty view of its parent.
    return [p for p in found if not any(p.startswith(q.rstrip("/") + "/") for q in found)]


def command_paths(argv: Sequence[str]) -> list[str]:
    """What the agent's command needs to see: the program and its virtualenv, each file its
    arguments name and that file's folder (a script imports its neighbours)."""
    shown: list[str] = []
    for index, word in enumerate(argv):
        path = shutil.which(word) if index == 0 else (word if os.path.isabs(word) else None)
        if not path or not os.path.exists(path):
            continue
        shown += [path, os.path.dirname(path)]
        venv = Path(path).parent.parent
        if index == 0 and (venv / "pyvenv.cfg").is_file():
            shown.append(str(venv))
    return shown


def agent_environment(
    harness: Mapping[str, str], contract: Mapping[str, str], home: str, passed: Iterable[str]
) -> dict[str, str]:
    """The agent's environment: an allow-list of the harness's (``PASSED_*``, plus the
    names in ``passed``), then the contract's ``TOOLBENCH_*`` variables, ``HOME`` (its
    scratch folder) and ``TMPDIR``. Nothing else of the harness's reaches it."""
    wanted = set(passed)
    env = {
        name: value
        for name, value in harness.items()
        if name in PASSED_NAMES
        or name in wanted
        or name.endswith(PASSED_SUFFIXES)
        or name.startswith(PASSED_PREFIXES)
    }
    env = {k: v for k, v in env.items() if not k.startswith("TOOLBENCH_")}
    env.setdefault("PATH", os.defpath)
    env.update({"HOME": home, "TMPDIR": "/tmp", **contract})
    return env


def _limits_prefix(limits: AgentLimits) -> list[str]:
    """``prlimit`` (util-linux) setting the limits on itself, then running the agent."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return []
    args = [prlimit, f"--nproc={limits.processes}", "--core=0"]
    if limits.memory_mb:
        args.append(f"--as={limits.memory_mb * 1024 * 1024}")
    return [*args, "--"]


def _tmp_mounts() -> list[str]:
    args = ["--dev", "/dev", "--proc", "/proc"]
    for tmp in _SYSTEM_TMP:
        if os.path.isdir(tmp) and not os.path.islink(tmp):
            args += ["--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", tmp]
    return args


def _shown_mounts(paths: Iterable[str]) -> list[str]:
    """Bind back, read-only, what must stay visible but lies under a private tmpfs."""
    args: list[str] = []
    for path in sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)}):
        if any(path == t or path.startswith(t + "/") for t in _SYSTEM_TMP):
            args += ["--ro-bind", path, path]
    return args


def _hidden_mounts(paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """An empty folder over each folder, /dev/null over each file; and the arguments that
    make those folders read-only, to come once the scratch folder is mounted (it may lie in
    one of them)."""
    args: list[str] = []
    read_only: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            args += ["--perms", "0555", "--tmpfs", path]
            read_only += ["--remount-ro", path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    return args, read_only


def wrap(
    containment: Containment, argv: Sequence[str], view: View, limits: AgentLimits
) -> list[str]:
    """The command line that runs ``argv`` contained (or, at level none, just limited)."""
    inner = [*_limits_prefix(limits), *argv]
    if not containment.namespaces:
        return inner
    hide, read_only = _hidden_mounts(view.hidden)
    mounts = [
        *("--ro-bind", "/", "/"),
        *_tmp_mounts(),
        *_shown_mounts([*python_dirs(), str(PACKAGE_DIR.parent), *view.shown]),
        *hide,
        *("--bind", view.scratch, view.scratch),
        *read_only,
    ]
    if view.socket is not None:
        mounts += ["--ro-bind", view.socket, SOCKET_INSIDE]
    flags = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if os.geteuid() != 0:
        flags.append("--unshare-user")
    if limits.network == "none":
        flags.append("--unshare-net")
    flags += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    return [containment.bwrap, *mounts, *flags, "--chdir", view.scratch, "--", *inner]


def _probe(bwrap: str) -> str | None:
    """None if a trivial command runs contained here; else bubblewrap's complaint."""
    scratch = Path(os.path.realpath(os.environ.get("TMPDIR", "/tmp")))
    view = View(scratch=str(scratch), hidden=[])
    argv = [sys.executable, "-S", "-c", "pass"]
    command = wrap(Containment("full", bwrap), argv, view, AgentLimits(memory_mb=0))
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
    return None


@functools.cache
def detect() -> Containment:
    """What this machine offers agents, probed once per process (about 10 ms)."""
    wanted = requested()
    if wanted == "none":
        return Containment("none", reason=f"off by ${ENV_VAR}=none")
    bwrap = shutil.which("bwrap")
    if not sys.platform.startswith("linux"):
        reason = f"not Linux ({sys.platform})"
    elif bwrap is None:
        reason = "bubblewrap (bwrap) is not installed"
    else:
        failure = _probe(bwrap)
        if failure is None:
            return Containment("full", bwrap)
        reason = f"bubblewrap failed: {failure}"
    if wanted == "full":
        raise IsolationUnavailable(f"{ENV_VAR}=full but agents cannot be contained: {reason}")
    return Containment("none", reason=reason)


#: Where a pids cgroup per attempt can be made: cgroup v1's pids hierarchy, or v2's root.
CGROUP_ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")


@functools.cache
def cgroup_root() -> str | None:
    """The first of ``CGROUP_ROOTS`` where this process can make a child with a ``pids.max``
    (probed once by making and removing one), or None."""
    for root in CGROUP_ROOTS:
        try:
            cap = ProcessCap.make_in(root, 1)
        except OSError:
            continue
        cap.remove()
        return root
    return None


class ProcessCap:
    """One attempt's pids cgroup: at most ``limit`` processes and threads in it, whatever the
    user (the kernel counts them per cgroup, root included). The agent's first process moves
    itself in before it runs anything (``enter``, between fork and exec), so all it starts is
    inside; ``remove`` once the attempt's namespace is gone."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make_in(cls, root: str, limit: int) -> ProcessCap:
        base = Path(root)
        if not (base / "cgroup.procs").exists():
            raise FileNotFoundError(root)
        path = base / f"toolbench-agent-{os.getpid()}-{os.urandom(6).hex()}"
        path.mkdir()
        try:
            (path / "pids.max").write_text(str(limit))
        except OSError:
            path.rmdir()
            raise
        return cls(path)

    @classmethod
    def make(cls, limit: int) -> ProcessCap | None:
        root = cgroup_root()
        if root is None:
            return None
        try:
            return cls.make_in(root, limit)
        except OSError:
            return None

    def enter(self) -> None:
        """Move the calling process in (run in the child before exec: no allocation-heavy
        work, no locks)."""
        fd = os.open(str(self.path / "cgroup.procs"), os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def remove(self) -> None:
        for _ in range(50):  # the killed namespace's processes may take a moment to go
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)


_warned = threading.Event()


def warn_once(containment: Containment) -> None:
    """One line per process when agents run without the OS layer."""
    if containment.namespaces or _warned.is_set():
        return
    _warned.set()
    print(
        f"warning: agent processes are not contained ({containment.reason}); they run as "
        f"you, seeing your files and processes; to fix: {HOW_TO}",
        file=sys.stderr,
    )
