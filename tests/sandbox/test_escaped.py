"""A program that escaped every in-process layer is still held by the OS isolation.

``escape_world`` hands a program real builtins with the audit fence off, as if it had found
the gadget that breaks RestrictedPython and the hook. From there it tries what the red team
did: read a gold file and the harness's files, write into a run folder, open a socket to a
listener of ours, look at the parent through ``/proc``, start a process, talk to the parent
over an inherited descriptor. Each attempt records ``"DONE"`` if it worked; all must be refused.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import toolbench
from tests.sandbox.worlds import escape_world
from toolbench.sandbox import Limits, SandboxPool, isolation

GOLD = Path(toolbench.__file__).parent / "tasks" / "home_search" / "data" / "v0" / "test.jsonl"
pytestmark = pytest.mark.skipif(
    not isolation.detect().namespaces, reason="OS isolation (bubblewrap) is not available here"
)

ATTEMPTS = """
import os, socket, subprocess

def attempt(name, action):
    try:
        action()
        report[name] = "DONE"
    except BaseException as exc:
        report[name] = "refused: " + type(exc).__name__

def read(path):
    with open(path, "rb") as handle:
        handle.read(1)

def write(path):
    with open(path, "a") as handle:
        handle.write("forged")

def connect():
    with socket.create_connection(("127.0.0.1", %PORT%), timeout=1):
        pass

def parent_proc():
    entries = [e for e in os.listdir("/proc") if e.isdigit()]
    if not entries:
        raise FileNotFoundError("no /proc")
    read("/proc/%PARENT%/environ")

def forge_on_inherited_fds():
    for fd in range(0, 64):
        try:
            kind = os.fstat(fd).st_mode
        except OSError:
            continue
        import stat
        if stat.S_ISSOCK(kind):
            os.write(fd, b"R forged")
            return
    raise OSError("no socket among the inherited descriptors")

attempt("read gold file", lambda: read("%GOLD%"))
attempt("read harness file", lambda: read("%CANARY%"))
attempt("write run folder", lambda: write("%RUN%"))
attempt("create file in run folder", lambda: write("%RUNDIR%/new.jsonl"))
attempt("new socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
attempt("connect to host loopback", connect)
attempt("unix socket pair", lambda: socket.socketpair())
attempt("parent /proc", parent_proc)
attempt("fork", lambda: os.waitpid(os.fork(), 0) if os.fork() else os._exit(0))
attempt("spawn /bin/true", lambda: subprocess.run(["/bin/true"], check=True))
attempt("exec", lambda: os.execv("/bin/true", ["true"]))
attempt("kill the parent", lambda: os.kill(%PARENT%, 0))
attempt("write outside tmp", lambda: write("/sandbox/x"))
attempt("forge a reply on an inherited socket", forge_on_inherited_fds)
report["uid"] = os.getuid()
report["root entries"] = sorted(os.listdir("/"))
"""


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.1)
    yield server
    server.close()


def test_escaped_program_is_held_by_the_os(tmp_path: Path, listener: socket.socket) -> None:
    assert GOLD.is_file()
    run_dir = tmp_path / "runs" / "r1"
    run_dir.mkdir(parents=True)
    samples = run_dir / "samples.jsonl"
    samples.write_text('{"success": false}\n')
    canary = tmp_path / "harness.txt"
    canary.write_text("secret")
    source = (
        ATTEMPTS.replace("%PORT%", str(listener.getsockname()[1]))
        .replace("%PARENT%", str(os.getpid()))
        .replace("%GOLD%", str(GOLD))
        .replace("%CANARY%", str(canary))
        .replace("%RUN%", str(samples))
        .replace("%RUNDIR%", str(run_dir))
    )
    program = f"escape({source!r})"
    with SandboxPool(workers=1, limits=Limits(wall_s=5.0, cpu_s=5.0)) as pool:
        result = pool.run(escape_world, program)
        assert result.ok, result
        assert pool.isolation["level"] == "full", pool.isolation
    report = result.state
    worked = sorted(name for name, outcome in report.items() if outcome == "DONE")
    assert worked == [], report
    assert samples.read_text() == '{"success": false}\n'
    assert sorted(p.name for p in run_dir.iterdir()) == ["samples.jsonl"]
    with pytest.raises(TimeoutError):
        listener.accept()
    if os.geteuid() == 0:
        assert report["uid"] == 65534
    # Only what imports need: system libraries, the Python installation and our code (which
    # live under /root and /work on this machine), a private /tmp, /dev, an empty /sandbox.
    visible = set(report["root entries"])
    assert not visible & {"home", "var", "run", "mnt", "opt", "srv", "boot"}, visible


LEAVE_BEHIND = """
import builtins, os
report["pid"] = os.getpid()
report["found"] = getattr(builtins, "LEFT_BEHIND", None)
builtins.LEFT_BEHIND = "from an escaped program"
"""


def test_an_escape_in_a_shared_process_never_reaches_another_tasks_programs() -> None:
    """Shared worlds (home_search, booking) keep one program process per world module: an
    escaped program can leave something for later programs of its own task (the known limit
    of sharing), never for another task's, and never in the template."""
    from tests.sandbox import shared_one, shared_two

    program = f"escape({LEAVE_BEHIND!r})"
    with SandboxPool(workers=1) as pool:
        # Load both modules first: loading one re-forks every shared process anyway.
        assert pool.run(shared_two.escape_world, "escape('')").ok
        first = pool.run(shared_one.escape_world, program)
        again = pool.run(shared_one.escape_world, program)
        other = pool.run(shared_two.escape_world, program)
        forked = pool.run(escape_world, program)  # a fresh process per program
    assert first.ok and again.ok and other.ok and forked.ok, (first, again, other, forked)
    assert first.state["found"] is None
    assert again.state == {"pid": first.state["pid"], "found": "from an escaped program"}
    assert other.state["pid"] != first.state["pid"] and other.state["found"] is None
    assert forked.state["found"] is None
