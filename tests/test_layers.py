"""The import layers contract (pyproject.toml ``[tool.importlinter]``) holds for the source tree.

Run by the test command as well as by .ci/run, so an upward import fails where a developer
runs the tests, with lint-imports' own report of the chain that breaks it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_package_imports_a_layer_above_its_own() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    assert lint_imports.exists(), "lint-imports is missing: scripts/test --install-only"
    done = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "Contracts: 1 kept, 0 broken." in done.stdout
