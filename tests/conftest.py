"""Shared fixtures: every test gets its own cache dir and runs dir, never the user's."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import tiers
from toolbench.cli import main

pytest_plugins = ["tests.browser"]

_ROOT = Path(__file__).resolve().parent.parent

# Where bubblewrap is installed, the sandbox must reach full isolation: a probe that fails
# (a path it cannot bind, say) is then an error, not a quiet fall back to weaker layers.
if sys.platform.startswith("linux") and shutil.which("bwrap"):
    os.environ.setdefault("TOOLBENCH_ISOLATION", "full")

# The log key (runner/chain.py) of every run the tests make, in or out of process: one folder
# for the session, set before any test module is imported (some build subprocess
# environments at import), so no test reads or writes the user's ~/.config/toolbench (CI as
# root included); removed when the session's process exits. Tests of keys set their own.
# Tables are drawn to the terminal's width, and piped output reads $COLUMNS: xdist's workers
# get COLUMNS=80 from execnet, a developer's shell may export anything. Every test sees the
# same width whether the suite runs serially or in parallel; a test of widths sets its own.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

_TEST_KEY_DIR = tempfile.mkdtemp(prefix="toolbench-test-keys-")
os.environ["TOOLBENCH_KEY_DIR"] = _TEST_KEY_DIR
atexit.register(shutil.rmtree, _TEST_KEY_DIR, ignore_errors=True)


def _tier_of(item: pytest.Item) -> str | None:
    """``perf``, ``integration`` or None (the unit tier) for one collected test, from
    ``tests/tiers.py`` and the test's own markers and fixtures."""
    path = Path(str(item.path)).resolve().relative_to(_ROOT).as_posix()
    test_id = f"{path}::{item.name.partition('[')[0]}"
    if item.get_closest_marker("perf") or path.endswith(tiers.PERF_FILE_SUFFIX):
        return "perf"
    if test_id in tiers.PERF_TESTS:
        return "perf"
    if (
        item.get_closest_marker("integration")
        or item.get_closest_marker("slow")
        or path in tiers.INTEGRATION_FILES
        or path.startswith(tiers.INTEGRATION_FOLDERS)
        or "browser_page" in getattr(item, "fixturenames", ())
    ):
        return "integration"
    return None


def perf_requested(config: pytest.Config) -> bool:
    """Timing claims run when asked for: ``-m`` naming ``perf``, or ``TOOLBENCH_PERF=1``
    (``scripts/test`` sets it under CI, where the perf tier's budgets must hold too)."""
    return "perf" in (config.getoption("markexpr") or "") or os.environ.get("TOOLBENCH_PERF") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its tier (``-m`` selects on the marks), and skip the perf tier
    unless it was asked for."""
    skip_perf = pytest.mark.skip(reason="a timing budget: run with -m perf or TOOLBENCH_PERF=1")
    run_perf = perf_requested(config)
    for item in items:
        tier = _tier_of(item)
        if tier is None:
            continue
        if not item.get_closest_marker(tier):
            item.add_marker(tier)
        if tier == "perf" and not run_perf:
            item.add_marker(skip_perf)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


CliResult = tuple[int, str, str]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run the toolbench CLI in-process: (exit code, stdout, stderr)."""

    def run(*args: str) -> CliResult:
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse exits for usage errors
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run


def read_run(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    info = json.loads((folder / "run.json").read_text())
    lines = (folder / "samples.jsonl").read_text().splitlines()
    return info, [json.loads(line) for line in lines]
