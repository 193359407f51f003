"""An audit hook (PEP 578) that fences a running program off the file system, network and OS.

RestrictedPython decides what a program may *name*; libraries a world allows (pandas, numpy)
then act on the program's behalf with full access, through entry points nobody can list
exhaustively (``pd.read_csv(path)``, ``df.to_csv(path)``, ``df.agg("to_pickle", path)``). The
interpreter reports every such action as an audit event before doing it, whoever asked, so while
a program runs the worker refuses:

* opening any file for writing, and opening or listing anything outside Python's own
  installation and our package (lazy imports of library modules still work); inside our
  package only code files, since its data folders hold the gold answers;
* sockets, subprocesses, signals to other processes, ctypes, mmap, environment changes, and
  file-system changes of any kind.

A refusal raises ``PermissionError`` in the program, which ends as an ordinary program error.
The hook is installed once per worker (audit hooks cannot be removed) and does nothing while no
program runs: importing and preparing worlds is trusted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolbench.package import PACKAGE_DIR

# Events refused outright while a program runs (matched as exact names or "prefix.").
_REFUSED_PREFIXES = (
    "socket.",
    "subprocess.",
    "ctypes.",
    "mmap.",
    "shutil.",
    "urllib.",
    "http.client.",
    "ftplib.",
    "smtplib.",
    "poplib.",
    "imaplib.",
    "nntplib.",
    "telnetlib.",
    "webbrowser.",
    "pty.",
    "glob.",
    "winreg.",
)
_REFUSED_EVENTS = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.kill",
        "os.killpg",
        "os.putenv",
        "os.unsetenv",
        "os.chdir",
        "os.chmod",
        "os.chown",
        "os.chflags",
        "os.lchflags",
        "os.link",
        "os.symlink",
        "os.mkdir",
        "os.mkfifo",
        "os.mknod",
        "os.remove",
        "os.rename",
        "os.rmdir",
        "os.truncate",
        "os.utime",
        "os.setxattr",
        "os.removexattr",
        "os.startfile",
        "os.add_dll_directory",
        "os.getxattr",
        "os.listxattr",
        "resource.setrlimit",
        "resource.prlimit",
        "signal.pthread_kill",
        "sys.addaudithook",
        "sys.setprofile",
        "sys.settrace",
        "pickle.find_class",
        "code.__new__",
        "function.__new__",
    }
)
_PATH_EVENTS = frozenset({"os.listdir", "os.scandir"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


_CODE_SUFFIXES = (".py", ".pyc")


class _Fence:
    package = ""  # the toolbench package directory, with a trailing separator
    armed = False
    network = False  # a live world's program drives a real API: sockets allowed
    roots: tuple[str, ...] = ()


_NETWORK_PREFIXES = ("socket.", "http.client.", "urllib.")


def _readable_roots() -> tuple[str, ...]:
    """Python's installation (stdlib, site-packages) and the toolbench package: public code."""
    places = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    places.add(str(PACKAGE_DIR))
    return tuple(sorted({os.path.realpath(p) + os.sep for p in places if p}))


def _inside_roots(path: Any, listing: bool = False) -> bool:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str):  # file descriptors, path-likes of program classes
        return False
    real = os.path.realpath(path)
    if not (real + os.sep).startswith(_Fence.roots):
        return False
    # Our own package holds gold answers (data/*/test.jsonl): only its code may be read.
    inside_package = (real + os.sep).startswith(_Fence.package)
    return not inside_package or listing or real.endswith(_CODE_SUFFIXES)


def _refuse(what: str) -> None:
    raise PermissionError(f"{what} is not allowed in the sandbox")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _Fence.armed:
        return
    if event == "open":
        path, mode, flags = (*args, None, None, None)[:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _WRITE_FLAGS
        )
        if writing or not _inside_roots(path):
            _Fence.armed = False  # formatting the message must not re-enter the fence
            try:
                message = f"opening {path!r}" if isinstance(path, (str, bytes)) else "opening files"
            finally:
                _Fence.armed = True
            _refuse(message)
        return
    if event in _PATH_EVENTS:
        if not _inside_roots(args[0] if args else None, listing=True):
            _refuse("listing directories")
        return
    if _Fence.network and event.startswith(_NETWORK_PREFIXES):
        return
    if event in _REFUSED_EVENTS or event.startswith(_REFUSED_PREFIXES):
        _refuse(f"{event!r}")


_installed = False


def install() -> None:
    """Install the hook in this process (a sandbox worker); idempotent."""
    global _installed
    if not _installed:
        _Fence.roots = _readable_roots()
        _Fence.package = os.path.realpath(PACKAGE_DIR) + os.sep
        sys.addaudithook(_hook)
        _installed = True


def disarm() -> None:
    _Fence.armed = False


@contextmanager
def armed() -> Iterator[None]:
    """Refuse file, network and OS access while program code may run. Not re-entered on
    the way out: a fenced program's exception handling stays fenced until the caller, which
    disarms explicitly once the reply is encoded."""
    _Fence.armed = True
    yield


@contextmanager
def fence() -> Iterator[None]:
    """Refuse file, network and OS access for the duration (the program's run)."""
    _Fence.armed = True
    try:
        yield
    finally:
        _Fence.armed = False


@contextmanager
def lifted() -> Iterator[None]:
    """Harness code inside a program's run that needs what the fence refuses (compiling a
    sub-program the host sent: code objects); the fence is restored as it was. Nothing of the
    program runs meanwhile (garbage collection is off in program processes)."""
    was = _Fence.armed
    _Fence.armed = False
    try:
        yield
    finally:
        _Fence.armed = was


@contextmanager
def network_allowed(allowed: bool) -> Iterator[None]:
    """Within ``fence()``, let sockets through (for worlds that talk to a live service)."""
    _Fence.network = allowed
    try:
        yield
    finally:
        _Fence.network = False
