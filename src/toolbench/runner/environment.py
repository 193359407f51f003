"""What a run was produced with, recorded in run.json's ``environment``: two runs of one
configuration can then be told apart by how they were made.

It holds toolbench's version and, run from a git checkout, its commit and whether the tree
had uncommitted changes; Python; the OS; the CPU, memory and GPUs; the versions of the
packages a run's results can depend on (the model backends, the sandbox's and the agents'
layers are recorded beside it as ``isolation`` and ``agent_isolation``). ``MATTERS`` names
the fields whose change can change a result: ``differences`` compares two records on them, for
the warning a resumed run prints and the one ``report`` prints across runs.

Everything is read from files and package metadata; the only programs started are ``git``
(on toolbench's own checkout, with a timeout) and ``bwrap --version``. Nothing fails a run:
a value that cannot be read is None.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolbench.package import __version__

__all__ = ["MATTERS", "differences", "environment_record", "session_environment", "summary"]

# Packages whose versions can change a generation, a score or a sandbox's behaviour.
PACKAGES = (
    "torch",
    "transformers",
    "tokenizers",
    "accelerate",
    "safetensors",
    "sentence-transformers",
    "openai",
    "httpx",
    "mcp",
    "ray",
    "numpy",
    "pydantic",
    "bm25s",
    "playwright",
    "inspect-ai",
)

# Fields (dotted paths into the record) whose change can change a result.
MATTERS = (
    "toolbench.version",
    "toolbench.commit",
    "toolbench.dirty",
    "packages.torch",
    "packages.transformers",
    "packages.tokenizers",
    "packages.openai",
    "packages.sentence-transformers",
    "packages.bm25s",
)

_GIT_TIMEOUT_S = 5.0


@functools.lru_cache(maxsize=1)
def environment_record() -> dict[str, Any]:
    """This process's environment (read once: it does not change during a run)."""
    return {
        "toolbench": _toolbench(),
        "python": {
            "version": platform.python_version(),
            "implementation": platform.python_implementation(),
            "executable": sys.executable,
        },
        "os": {
            "system": platform.system(),
            "release": platform.release(),
            "machine": platform.machine(),
        },
        "hardware": {
            "cpu": _cpu_model(),
            "cpus": os.cpu_count(),
            "memory_gb": _memory_gb(),
            "gpus": _gpus(),
        },
        "packages": _packages(),
        "bubblewrap": _bwrap_version(),
    }


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``"toolbench.commit: 1a2b3c4 -> 5d6e7f8"`` for each field of ``MATTERS`` that two
    records give differently (a field neither record has is no difference)."""
    lines = []
    for path in MATTERS:
        before, after = _at(old, path), _at(new, path)
        if before != after:
            lines.append(f"{path}: {_shown(before)} -> {_shown(after)}")
    return lines


def summary(record: Mapping[str, Any]) -> str:
    """One line for a person: ``toolbench 0.1.0 (abc1234, dirty), Python 3.11.2, Linux ...``."""
    tool = record.get("toolbench") or {}
    commit = tool.get("commit")
    where = (
        f" ({commit[:7]}{', uncommitted changes' if tool.get('dirty') else ''})" if commit else ""
    )
    python = (record.get("python") or {}).get("version")
    system = record.get("os") or {}
    hardware = record.get("hardware") or {}
    gpus = hardware.get("gpus") or []
    packages = record.get("packages") or {}
    backends = ", ".join(
        f"{name} {packages[name]}"
        for name in ("torch", "transformers", "openai")
        if packages.get(name)
    )
    parts = [
        f"toolbench {tool.get('version')}{where}",
        f"Python {python}",
        f"{system.get('system')} {system.get('release')}",
        f"{hardware.get('cpus')} CPUs" + (f", {len(gpus)} GPU ({gpus[0]})" if gpus else ", no GPU"),
    ]
    return "; ".join([*parts, backends] if backends else parts)  # fmt: skip


def _at(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _shown(value: Any) -> str:
    if isinstance(value, str) and len(value) == 40:
        return value[:10]  # a commit
    return "none" if value is None else str(value)


def _toolbench() -> dict[str, Any]:
    """The version, and the commit and dirty flag of the checkout toolbench runs from (an
    editable install's version is a constant; its commit is not)."""
    root = Path(__file__).resolve().parents[3]
    record: dict[str, Any] = {"version": __version__, "commit": None, "dirty": None}
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return record
    head = _run([git, "-C", str(root), "rev-parse", "HEAD"])
    if head:
        record["commit"] = head.strip()
        status = _run([git, "-C", str(root), "status", "--porcelain", "--untracked-files=no"])
        record["dirty"] = None if status is None else bool(status.strip())
    return record


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _packages() -> dict[str, str]:
    found = {}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gb() -> float | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
    return round(pages * size / 2**30, 1)


def _gpus() -> list[str]:
    """NVIDIA GPUs as the driver lists them (no CUDA library is loaded to ask)."""
    root = Path("/proc/driver/nvidia/gpus")
    names = []
    try:
        for info in sorted(root.glob("*/information")):
            for line in info.read_text(errors="replace").splitlines():
                if line.startswith("Model:"):
                    names.append(line.partition(":")[2].strip())
    except OSError:
        return names
    return names


def _bwrap_version() -> str | None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    out = _run([bwrap, "--version"])
    return out.strip() if out else None


def session_environment(previous: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """run.json's environment fields for a session of a run whose run.json was ``previous``
    (empty for a new run), and what changed since the last session in a way that matters:
    ``environment`` is this session's record; ``environment_changes`` lists, cumulatively,
    each change between sessions (the folder then mixes records made two ways)."""
    current = environment_record()
    fields: dict[str, Any] = {"environment": current}
    before = previous.get("environment")
    changes = differences(before, current) if isinstance(before, Mapping) else []
    carried = previous.get("environment_changes")
    history = [*carried] if isinstance(carried, list) else []
    history.extend(changes)
    if history:
        fields["environment_changes"] = history
    return fields, changes
