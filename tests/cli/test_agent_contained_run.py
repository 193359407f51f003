"""``toolbench run --model agent:COMMAND`` end to end with a hostile agent: through the CLI,
what the agent can reach of the run (its data, its run folder, the other sample's world) is
nothing, run.json records ``agent_isolation`` and ``report`` shows it; where bubblewrap is
missing the run says so at start and in the report, and ``TOOLBENCH_ISOLATION=full`` refuses."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.agents import contain
from toolbench.package import PACKAGE_DIR

pytest.importorskip("mcp")

ESCAPE = Path(__file__).parents[1] / "agents" / "agents_for_tests" / "escape.py"
DATA = PACKAGE_DIR / "tasks" / "home_search" / "data"


def _agent(*probes: str) -> str:
    return "agent:" + shlex.join([sys.executable, str(ESCAPE), *probes])


@pytest.mark.skipif(contain.detect().level != "full", reason="no agent containment here")
def test_a_hostile_agent_finds_nothing_of_the_run(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    probes = (f"read:{DATA}", f"read:{out}", f"read:{out / 'samples.jsonl'}", "environ",
              f"read:{Path.cwd() / 'runs'}", "hold:1")  # fmt: skip
    code, stdout, stderr = cli("run", "home_search", "--model", _agent(*probes), "--limit", "2",
                               "--concurrency", "2", "--no-cache", "--out", str(out))  # fmt: skip
    assert code in (0, 1), stdout + stderr  # its samples fail: it solved nothing
    info, records = read_run(out)
    assert len(records) == 2
    for record in records:
        seen = json.loads(record["prediction"])
        assert seen[f"read:{DATA}"] == {"error": "FileNotFoundError"}  # toolbench's tasks
        assert seen[f"read:{out}"] == {"entries": []}
        assert seen[f"read:{out / 'samples.jsonl'}"] == {"error": "FileNotFoundError"}
        assert seen["environ"] == []  # the other sample's agent runs at the same time
    assert info["agent_isolation"]["level"] == "full"
    assert info["agent_isolation"]["network"] == "host"
    code, stdout, _ = cli("report", str(out))
    assert "agent isolation: full" in stdout


def _without_bwrap(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH has Python and prlimit but no bubblewrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in (("python", sys.executable), ("prlimit", "/usr/bin/prlimit")):
        if os.path.exists(target):
            (bin_dir / name).symlink_to(target)
    return {**os.environ, "PATH": str(bin_dir), "TOOLBENCH_ISOLATION": "auto"}


@pytest.mark.slow
def test_without_bubblewrap_the_run_says_so_and_full_refuses(tmp_path: Path) -> None:
    env = _without_bwrap(tmp_path)
    out = tmp_path / "run"
    command = [sys.executable, "-m", "toolbench.cli", "run", "home_search", "--model",
               _agent("procs"), "--limit", "1", "--no-cache", "--out", str(out)]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    warnings = [line for line in done.stderr.splitlines() if "agent processes are not" in line]
    assert len(warnings) == 1 and "bubblewrap (bwrap) is not installed" in warnings[0]
    info, _ = read_run(out)
    assert info["agent_isolation"]["level"] == "none"
    report = [sys.executable, "-m", "toolbench.cli", "report", str(out)]
    shown = subprocess.run(report, env=env, capture_output=True, text=True, timeout=120)
    assert "warning: agent processes were not contained (none)" in shown.stdout
    strict = {**env, "TOOLBENCH_ISOLATION": "full"}
    command[-1] = str(tmp_path / "strict")
    refused = subprocess.run(command, env=strict, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "TOOLBENCH_ISOLATION=full" in lines[0]
    assert not (tmp_path / "strict").exists()
