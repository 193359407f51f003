"""Resource limits for one sandboxed program.

They are plain data because the parent hands them to each worker process at start: the memory
and file limits are kernel rlimits set once per worker, the CPU limit is a per-program timer in
the worker, and the wall-clock limit is enforced twice (a timer in the worker for programs stuck
in Python code, and a kill from the parent for programs stuck in C code or in a dead worker).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# A program's default limits, named so that the run configuration and the command line state
# the same values as a bare ``Limits()``.
DEFAULT_WALL_S = 2.0  # seconds of wall-clock time per program
DEFAULT_CPU_S = 2.0  # seconds of CPU time per program
DEFAULT_MEMORY_MB = 768  # address space of a worker process


@dataclass(frozen=True)
class Limits:
    # Per program: a timer in the worker stops Python code at wall_s; the parent kills and
    # replaces a worker that has not answered by wall_s + pool.GRACE_S (C code, dead worker).
    wall_s: float = DEFAULT_WALL_S
    cpu_s: float = DEFAULT_CPU_S  # per program
    # Address-space limit of a worker (RLIMIT_AS), set once at worker start.
    memory_mb: int = DEFAULT_MEMORY_MB
    max_output_bytes: int = 65536  # cap on serialized state and on captured print output
    # Host calls (see host.py): how many one program may make, and how deeply the code they
    # bring may nest. The wait for an answer does not count against wall_s or cpu_s.
    max_host_calls: int = 64
    max_host_depth: int = 8

    def __post_init__(self) -> None:
        for name in ("wall_s", "cpu_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValueError(f"Limits.{name} must be a positive number of seconds")
        # Below ~64 MB a Python interpreter cannot even import the simulators.
        if not isinstance(self.memory_mb, int) or self.memory_mb < 64:
            raise ValueError("Limits.memory_mb must be an integer >= 64")
        if not isinstance(self.max_output_bytes, int) or self.max_output_bytes < 1024:
            raise ValueError("Limits.max_output_bytes must be an integer >= 1024")
        for name in ("max_host_calls", "max_host_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"Limits.{name} must be an integer >= 0")
