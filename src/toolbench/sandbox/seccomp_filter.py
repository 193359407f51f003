"""Seccomp filters for sandbox workers (inside the worker only; libseccomp through pyseccomp).

Two filters, stacked (a process can only ever add restrictions, and children inherit them):

* the **template** filter, loaded once a worker has started: no executing programs, no new
  sockets, no ptrace or reading other processes' memory, no namespaces, mounts, kernel keys,
  BPF, io_uring (whose requests bypass seccomp), module loading or clock changes. The template
  runs only harness code, but it still needs ``fork`` to make program processes.
* the **program** filter, loaded in each forked program process before the program starts:
  additionally no process or thread creation at all and no signals to other processes.
  The template compiles it once (``ProgramFilter``) and each program process loads it with
  one ``prctl``, its own process id written into the program.

Refused calls fail with ``EPERM`` (``ENOSYS`` for ``clone3``, so that C libraries fall back to
``clone``, whose flags a filter can read), so a program sees an ordinary ``PermissionError``.
Setting a filter also sets ``PR_SET_NO_NEW_PRIVS``. System calls of another architecture (the
32-bit entry points) kill the process: libseccomp's default for a foreign architecture.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from typing import Any

_TEMPLATE_DENIED = (
    *("execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp"),
    *("pidfd_getfd", "pidfd_open", "socket", "socketpair", "mount", "umount2", "pivot_root"),
    *("chroot", "unshare", "setns", "move_mount", "open_tree", "fsopen", "fsmount"),
    *("fsconfig", "fspick", "mount_setattr", "bpf", "perf_event_open", "userfaultfd"),
    *("io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key"),
    *("request_key", "kexec_load", "kexec_file_load", "init_module", "finit_module"),
    *("delete_module", "reboot", "swapon", "swapoff", "acct", "syslog", "quotactl"),
    *("open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "vhangup"),
    *("settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "sethostname"),
    *("setdomainname", "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid"),
    *("setgroups", "setfsuid", "setfsgid", "capset", "fanotify_init", "lookup_dcookie"),
    "personality",
)
_PROGRAM_DENIED = ("clone", "fork", "vfork", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
_PROGRAM_DENIED_ALSO = ("setsid", "setpgid", "prctl")
# Signals may go to the program process itself only (Python's own raise_signal uses tgkill).
_SIGNAL_CALLS = ("kill", "tkill", "tgkill")
# clone() flags that make namespaces: refused even where clone itself is allowed.
_NAMESPACE_FLAGS = (
    0x00000080,  # CLONE_NEWTIME
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)


def library_names() -> dict[str, str]:
    """Parent side: the C libraries pyseccomp loads, by name, as this machine resolves them.

    ``ctypes.util.find_library`` runs ``ldconfig`` in a subprocess, which is pointless (and
    slow) in every worker; the names it gives (sonames such as ``libseccomp.so.2``) are the
    same inside the worker's view, where the dynamic loader finds them."""
    import ctypes.util  # here: worker templates import this module and need not load subprocess

    found = {name: ctypes.util.find_library(name) for name in ("c", "seccomp")}
    return {name: soname for name, soname in found.items() if soname}


def available(names: dict[str, str] | None = None) -> bool:
    """Whether libseccomp can be used here (Linux with libseccomp and pyseccomp)."""
    import ctypes.util  # here: as in library_names

    original = ctypes.util.find_library
    known = dict(names or {})
    ctypes.util.find_library = lambda name: known.get(name) or original(name)
    try:
        import pyseccomp  # noqa: F401  (a Linux-only dependency: probed, not assumed)
    except (ImportError, OSError, RuntimeError, AttributeError):
        return False
    finally:
        ctypes.util.find_library = original
    return True


def _filter(names: tuple[str, ...]) -> Any:
    import pyseccomp as seccomp  # Linux only; callers checked available() first

    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    refuse = seccomp.ERRNO(errno.EPERM)
    for name in names:
        try:
            rules.add_rule(refuse, name)
        except (ValueError, RuntimeError, OSError):
            continue  # a system call this kernel or architecture does not have
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    return rules


def _denied(names: tuple[str, ...], network: bool) -> tuple[str, ...]:
    """Live worlds' workers talk to a real service: they may open sockets."""
    return tuple(n for n in names if n not in ("socket", "socketpair")) if network else names


def load_template_filter(network: bool = False) -> None:
    """Restrict this process (a worker template) for the rest of its life."""
    import pyseccomp as seccomp  # Linux only; callers checked available() first

    rules = _filter(_denied(_TEMPLATE_DENIED, network))
    for flag in _NAMESPACE_FLAGS:
        namespace = seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag)
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", namespace)
    rules.load()


def _program_rules(network: bool, pid: int) -> Any:
    import pyseccomp as seccomp  # Linux only; callers checked available() first

    rules = _filter(_denied((*_TEMPLATE_DENIED, *_PROGRAM_DENIED, *_PROGRAM_DENIED_ALSO), network))
    others = seccomp.Arg(0, seccomp.NE, pid)
    for name in _SIGNAL_CALLS:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), name, others)
    return rules


def load_program_filter(network: bool = False) -> None:
    """Restrict this process (a program process, just forked) for the rest of its life.

    Compiles the filter with libseccomp here (~3 ms); the template uses ``ProgramFilter``,
    which compiles once and loads per program process with one system call."""
    _program_rules(network, os.getpid()).load()


# Two process ids no live process has at once: compiling the program filter for each and
# comparing the two programs finds the instructions that hold the id (see ``ProgramFilter``).
_PID_PROBES = (0x2A5A5A, 0x35A5A5)
_INSTRUCTION = struct.Struct("=HBBI")  # struct sock_filter: code, jt, jf, k
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _export(rules: Any) -> bytes:
    """The filter as the kernel's BPF program (libseccomp's own compilation, byte for byte)."""
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(write_fd, "wb", closefd=True) as sink:
            rules.export_bpf(sink)
        chunks = []
        while chunk := os.read(read_fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(read_fd)
    return b"".join(chunks)


def pid_offsets(first: bytes, second: bytes, probes: tuple[int, int]) -> list[int]:
    """Byte offsets of the ``k`` fields that hold the process id: the only difference between
    the two programs, compiled for the two probe ids. ValueError if the programs differ in
    any other way (then patching would not give libseccomp's program)."""
    if len(first) != len(second) or len(first) % _INSTRUCTION.size or first == second:
        raise ValueError("the program filter does not depend on the process id as expected")
    offsets = []
    for at in range(0, len(first), _INSTRUCTION.size):
        a, b = first[at : at + _INSTRUCTION.size], second[at : at + _INSTRUCTION.size]
        if a == b:
            continue
        (*head_a, k_a), (*head_b, k_b) = _INSTRUCTION.unpack(a), _INSTRUCTION.unpack(b)
        if head_a != head_b or (k_a, k_b) != probes:
            raise ValueError("the program filters differ outside the process id")
        offsets.append(at + _INSTRUCTION.size - 4)
    return offsets


class ProgramFilter:
    """The program filter, compiled once in the template and loaded in each program process.

    libseccomp compiles a filter in ~3 ms of CPU, mostly page faults in a freshly forked
    process; a template that forks one program process per sample paid that every time. The
    filter depends on the process only through its id (signals may go to itself alone), so the
    template compiles it twice, for two probe ids, keeps the BPF program and the places that
    hold the id; a program process writes its own id there and loads the program with
    ``prctl`` (what ``seccomp_load`` does). ``tests/sandbox`` checks the patched program equals
    libseccomp's compilation for that id, byte for byte."""

    def __init__(self, network: bool = False) -> None:
        first, second = (_export(_program_rules(network, pid)) for pid in _PID_PROBES)
        self.offsets = pid_offsets(first, second, _PID_PROBES)
        self.program = ctypes.create_string_buffer(first, len(first))
        self.fprog = _SockFprog(len(first) // _INSTRUCTION.size, ctypes.addressof(self.program))
        self.prctl = ctypes.CDLL(None, use_errno=True).prctl

    def bpf_for(self, pid: int) -> bytes:
        """The program for ``pid``, as ``load`` installs it."""
        program = bytearray(self.program.raw)
        for offset in self.offsets:
            struct.pack_into("=I", program, offset, pid)
        return bytes(program)

    def load(self) -> None:
        """Restrict this process (a program process, just forked) for the rest of its life."""
        ctypes.memmove(self.program, self.bpf_for(os.getpid()), len(self.program.raw))
        for args in (
            (_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
            (_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(self.fprog), 0, 0),
        ):
            if self.prctl(*(ctypes.c_ulong(arg) for arg in args)) != 0:
                number = ctypes.get_errno()
                raise OSError(number, f"loading the program filter: {os.strerror(number)}")
