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

from toolbench.cli import main

pytest_plugins = ["tests.browser"]

# Where bubblewrap is installed, the sandbox must reach full isolation: a probe that fails
# (a path it cannot bind, say) is then an error, not a quiet fall back to weaker layers.
if sys.platform.startswith("linux") and shutil.which("bwrap"):
    os.environ.setdefault("TOOLBENCH_ISOLATION", "full")

# The log key (runner/chain.py) of every run the tests make, in or out of process: one folder
# for the session, set before any test module is imported (some build subprocess
# environments at import), so no test reads or writes the user's ~/.config/toolbench (CI as
# root included); removed when the session's process exits. Tests of keys set their own.
_TEST_KEY_DIR = tempfile.mkdtemp(prefix="toolbench-test-keys-")
os.environ["TOOLBENCH_KEY_DIR"] = _TEST_KEY_DIR
atexit.register(shutil.rmtree, _TEST_KEY_DIR, ignore_errors=True)


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
