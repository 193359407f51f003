"""The program filter compiled once and patched per process equals libseccomp's own.

``ProgramFilter`` keeps one BPF program and writes each program process's id into it; if
patching ever gave a different program from compiling for that id (a libseccomp change, an
optimizer that folds the id elsewhere), signals to other processes could slip through. These
tests compare the two byte for byte and check the loaded filter's behaviour in a real process.
"""

from __future__ import annotations

import os
import signal
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.sandbox import seccomp_filter

pytestmark = pytest.mark.skipif(
    not seccomp_filter.available(), reason="libseccomp is not available here"
)
PID_MAX = 4_194_304  # the kernel's largest process id


@pytest.fixture(scope="module")
def program_filter() -> seccomp_filter.ProgramFilter:
    return seccomp_filter.ProgramFilter()


@settings(max_examples=40, deadline=None)
@given(pid=st.integers(min_value=1, max_value=PID_MAX))
def test_patched_program_is_libseccomps_program(
    program_filter: seccomp_filter.ProgramFilter, pid: int
) -> None:
    compiled = seccomp_filter._export(seccomp_filter._program_rules(False, pid))
    assert program_filter.bpf_for(pid) == compiled


def test_network_variant_is_patched_the_same_way() -> None:
    live = seccomp_filter.ProgramFilter(network=True)
    pid = 4242
    assert live.bpf_for(pid) == seccomp_filter._export(seccomp_filter._program_rules(True, pid))
    assert live.bpf_for(pid) != seccomp_filter.ProgramFilter().bpf_for(pid)


def test_offsets_refuse_programs_that_differ_elsewhere() -> None:
    probes = (0x2A5A5A, 0x35A5A5)
    one = bytes(8) + (0x15).to_bytes(2, "little") + bytes(2) + probes[0].to_bytes(4, "little")
    two = bytes(8) + (0x15).to_bytes(2, "little") + bytes(2) + probes[1].to_bytes(4, "little")
    assert seccomp_filter.pid_offsets(one, two, probes) == [12]
    other_jump = bytes(8) + (0x15).to_bytes(2, "little") + b"\x01\x00" + two[12:]
    with pytest.raises(ValueError):
        seccomp_filter.pid_offsets(one, other_jump, probes)
    with pytest.raises(ValueError):
        seccomp_filter.pid_offsets(one, one, probes)
    with pytest.raises(ValueError):
        seccomp_filter.pid_offsets(one, two + bytes(8), probes)


def _in_filtered_child(program_filter: seccomp_filter.ProgramFilter) -> int:
    """Exit code of a forked child that loads the filter and probes it: 0 when every probe
    behaved, else the number of the first probe that did not."""
    pid = os.fork()
    if pid:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    code = 0
    try:
        program_filter.load()
        probes = [
            lambda: os.kill(os.getppid(), 0),  # another process: refused
            lambda: os.fork(),  # no new processes
            lambda: os.setsid(),
        ]
        for number, probe in enumerate(probes, start=1):
            try:
                probe()
            except PermissionError:
                continue
            code = number
            break
        else:
            os.kill(os.getpid(), 0)  # itself: allowed
            signal.pthread_kill(threading.get_ident(), 0)  # tgkill on itself: allowed
    except BaseException:
        code = 99
    os._exit(code)


def test_loaded_filter_refuses_other_processes_and_forks(
    program_filter: seccomp_filter.ProgramFilter,
) -> None:
    assert _in_filtered_child(program_filter) == 0
    assert _in_filtered_child(program_filter) == 0  # a second child patches its own id
