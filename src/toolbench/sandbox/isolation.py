"""Layer 2 of the sandbox: each worker in its own Linux namespaces, as an unprivileged user.

In-process policy (RestrictedPython, guarded attributes, the audit hook) decides what a program
may *name*, and libraries that look names up themselves will always offer one more gadget. This
layer does not depend on knowing any gadget: a worker runs under bubblewrap in fresh mount, PID,
network, IPC, UTS and user namespaces, as uid/gid 65534, seeing read-only only what it needs to
import code (the system's shared libraries, the Python installation, the packages of the world
factories, with their ``data/`` folders masked: they hold gold answers), an empty private
``/tmp``, a minimal ``/dev`` and no ``/proc``; its network namespace is empty. Inside, the worker
adds ``PR_SET_NO_NEW_PRIVS`` and a seccomp filter (``seccomp_filter.py``).

Run as root (CI, containers), bubblewrap cannot bind paths below ``/root`` once it runs as an
unprivileged user, so the namespaces are made in two steps: bubblewrap as root makes the mount,
PID, network, IPC and UTS namespaces; ``setpriv`` drops to 65534 with no capabilities; a second
bubblewrap, now unprivileged, makes the user namespace and hides ``/proc`` (the first needs it
for the second). Run as an ordinary user, one bubblewrap does it all.

Where a layer is missing (no bubblewrap, no user namespaces, macOS) the sandbox still works with
what is left, warns once naming what is missing, and ``describe()`` says so for ``run.json``.
``TOOLBENCH_ISOLATION=full`` turns a missing layer into an error; ``=none`` switches layer 2
off (for debugging only).
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.package import PACKAGE_DIR

SANDBOX_UID = 65534  # "nobody" on Debian and most distributions
ENV_VAR = "TOOLBENCH_ISOLATION"
WORKDIR = "/sandbox"  # the worker's empty, read-only working directory inside the namespaces
TMP_BYTES = 64 * 1024 * 1024
HOW_TO = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on Linux"
# Host paths every dynamically linked program needs (shared libraries, the loader's cache).
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")


class IsolationUnavailable(UserError, RuntimeError):
    """``TOOLBENCH_ISOLATION`` holds no known setting, or ``full`` was asked for and a layer
    is missing here: the user's setting to fix, so the CLI prints it as one line (exit 2)."""


SETTINGS = ("auto", "full", "none")


def requested() -> str:
    """The setting in ``TOOLBENCH_ISOLATION`` (unset or blank: auto); the CLI calls this
    before any work so a typo is refused up front, not after a whole run."""
    raw = os.environ.get(ENV_VAR, "")
    wanted = raw.strip().lower() or "auto"
    if wanted not in SETTINGS:
        raise IsolationUnavailable(
            f"${ENV_VAR}={raw!r} is not a setting; use one of {', '.join(SETTINGS)} "
            "(or unset it: auto)"
        )
    return wanted


@dataclass(frozen=True)
class Isolation:
    """What this machine gives the sandbox; ``command`` wraps a worker's command line."""

    level: str  # "full" | "reduced" | "none"
    namespaces: bool
    bwrap: str = ""  # bubblewrap's path, where namespaces are used
    missing: tuple[str, ...] = ()
    reasons: dict[str, str] = field(default_factory=dict)

    def describe(self, seccomp: bool | None = None) -> dict[str, Any]:
        """The run.json entry: level, missing layers and one line for people."""
        missing = list(self.missing)
        level = self.level
        if seccomp is False and "seccomp" not in missing:
            missing.append("seccomp")
            level = "reduced" if level == "full" else level
        if level == "full":
            summary = "full: namespaces (user, mount, pid, net, ipc), uid 65534, seccomp"
        else:
            summary = f"{level}: missing {', '.join(missing)}; to fix: {HOW_TO}"
        return {"level": level, "missing": missing, "summary": summary}


def _existing_unique(paths: Iterable[str]) -> list[str]:
    """Real, existing directories, without any that lies inside another one of them."""
    real = sorted({os.path.realpath(p) for p in paths if p and os.path.isdir(p)})
    kept: list[str] = []
    for path in real:
        if not any(path == k or path.startswith(k.rstrip(os.sep) + os.sep) for k in kept):
            kept.append(path)
    return kept


def python_dirs() -> list[str]:
    """The Python installation a worker imports from: prefixes, stdlib, site-packages, and
    the directory of the interpreter binary."""
    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    places += [os.path.dirname(os.path.realpath(sys.executable))]
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        places.append(sysconfig.get_paths().get(key, ""))
    places += [*site.getsitepackages(), site.getusersitepackages()]
    return _existing_unique(places)


def _parents(path: str) -> list[str]:
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _bind_args(code_dirs: Sequence[str], masked: Sequence[str]) -> list[str]:
    """The bubblewrap arguments that build the worker's read-only view of the file system."""
    args: list[str] = []
    for name in _SYSTEM_DIRS:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for name in _SYSTEM_FILES:
        if os.path.isfile(name):
            args += ["--ro-bind", name, name]
    made: set[str] = {"/", "/tmp"}  # /tmp is the private tmpfs, mounted before these binds
    system = tuple(d for d in _SYSTEM_DIRS if os.path.isdir(d) and not os.path.islink(d))
    for source in _existing_unique([*python_dirs(), *code_dirs]):
        if source in system or source.startswith(tuple(s + "/" for s in system)):
            continue  # already visible through /usr and friends
        for parent in _parents(source):  # bubblewrap makes parents 0700: nobody could enter
            if parent not in made:
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        args += ["--ro-bind", source, source]
        made.add(source)
    for folder in masked:  # gold answers live in the packages' data folders
        args += ["--tmpfs", folder]
    return args


# --die-with-parent: the kernel signals when the *thread* that started bubblewrap ends, so
# workers are started from one long-lived thread (``_process._spawn``); when the harness dies,
# bubblewrap dies, and with it the PID namespace and every process in it.
_COMMON = (
    *("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"),
    *("--die-with-parent", "--new-session", "--chdir", WORKDIR),
)


def _private_dirs() -> list[str]:
    return [
        *("--dev", "/dev", "--perms", "1777", "--size", str(TMP_BYTES), "--tmpfs", "/tmp"),
        *("--perms", "0555", "--dir", WORKDIR),
    ]


def wrap_command(
    bwrap: str,
    argv: Sequence[str],
    code_dirs: Sequence[str],
    masked: Sequence[str],
    network: bool = False,
) -> list[str]:
    """The full command line that runs ``argv`` in the namespaces (``network``: keep the
    host's network, for worlds that drive a live service)."""
    # The private /tmp first: code that lives under the host's /tmp (a CI checkout) is then
    # bound inside it instead of being hidden by it.
    view = [*_private_dirs(), *_bind_args(code_dirs, masked)]
    common = [*_COMMON] if network else ["--unshare-net", *_COMMON]
    if network:
        view += [*("--ro-bind-try", "/etc/resolv.conf", "/etc/resolv.conf")]
        view += [
            *("--ro-bind-try", "/etc/ssl", "/etc/ssl", "--ro-bind-try", "/etc/hosts", "/etc/hosts")
        ]
    if os.geteuid() != 0:
        return [bwrap, *view, "--unshare-user", *common, "--cap-drop", "ALL", "--", *argv]
    uid = str(SANDBOX_UID)
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    inner = [
        *(bwrap, "--unshare-user", "--uid", uid, "--gid", uid, "--ro-bind", "/", "/"),
        *("--bind", "/tmp", "/tmp", "--dev", "/dev", "--perms", "0555", "--tmpfs", "/proc"),
        *("--die-with-parent", "--chdir", WORKDIR, "--"),
    ]
    drop = [
        *(setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"),
        *("--inh-caps=-all", "--bounding-set=-all", "--"),
    ]
    outer = [bwrap, *view, "--proc", "/proc", "--remount-ro", "/", *common, "--"]
    return [*outer, *drop, *inner, *argv]


def masked_data_dirs(package_dirs: Iterable[str]) -> list[str]:
    """Every ``data`` folder below the given package folders that is not itself a Python
    package (task data: gold answers)."""
    found: set[str] = set()
    for package in package_dirs:
        root = Path(package)
        if root.is_dir():
            found.update(
                str(p.resolve())
                for p in root.rglob("data")
                if p.is_dir() and not (p / "__init__.py").exists()
            )
    return sorted(found)


def _probe(bwrap: str) -> str | None:
    """None if a trivial program runs in the namespaces; else bubblewrap's complaint."""
    package = str(PACKAGE_DIR.resolve())
    argv = [sys.executable, "-s", "-c", "import os; print(os.getuid())"]
    command = wrap_command(bwrap, argv, [package], [])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
    return None


_lock = threading.Lock()


@functools.cache
def detect() -> Isolation:
    """What this machine offers, probed once per process (about 20 ms)."""
    wanted = requested()
    if wanted == "none":
        return Isolation(
            "none", False, missing=("namespaces", "seccomp"), reasons={"namespaces": "off by env"}
        )
    reasons: dict[str, str] = {}
    bwrap = shutil.which("bwrap")
    if not sys.platform.startswith("linux"):
        reasons["namespaces"] = f"not Linux ({sys.platform})"
    elif bwrap is None:
        reasons["namespaces"] = "bubblewrap (bwrap) is not installed"
    elif os.geteuid() == 0 and shutil.which("setpriv") is None:
        reasons["namespaces"] = "setpriv (util-linux) is not installed"
    else:
        failure = _probe(bwrap)
        if failure is not None:
            reasons["namespaces"] = f"bubblewrap failed: {failure}"
    if not reasons and bwrap is not None:
        return Isolation("full", True, bwrap=bwrap)
    if wanted == "full":
        raise IsolationUnavailable(
            f"{ENV_VAR}=full but the sandbox cannot isolate workers: "
            f"{reasons['namespaces']}; {HOW_TO}"
        )
    missing = ("namespaces", "unprivileged uid")
    return Isolation("reduced", False, missing=missing, reasons=reasons)


_warned: set[str] = set()


def warn_once(isolation: Isolation, seccomp: bool | None) -> None:
    """One warning per process for each distinct shortfall."""
    described = isolation.describe(seccomp)
    if described["level"] == "full":
        return
    reason = "; ".join(f"{k}: {v}" for k, v in isolation.reasons.items())
    line = f"sandbox isolation is {described['summary']}" + (f" ({reason})" if reason else "")
    with _lock:
        if line in _warned:
            return
        _warned.add(line)
    print(f"warning: {line}", file=sys.stderr)
