"""Imports sit at the top of a module; one inside a function says why on its line or the line
above (``# deferred: ...``): a heavy or optional dependency only one path needs, a command's
module loaded only when that command runs, an import cycle broken on purpose.

An import hidden in a function with no reason given hides a module's dependencies from its
reader and from the import-layers contract's reader alike, and turns a missing dependency into
a failure deep inside a run instead of at start-up.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import toolbench

SRC = Path(toolbench.__file__).resolve().parent


def uncommented_imports(path: Path, root: Path = SRC.parent) -> list[str]:
    """``path:line: statement`` (path relative to ``root``) for each import inside a function
    with no comment on its line or on the line above."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    found = []
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            line = lines[node.lineno - 1]
            above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
            if "#" not in line and not above.startswith("#"):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {line.strip()}")
    return sorted(set(found))


def test_every_function_level_import_says_why() -> None:
    files = sorted(SRC.rglob("*.py"))  # all of src/toolbench
    assert len(files) > 100, SRC
    found = [row for path in files for row in uncommented_imports(path)]
    assert not found, "give each a top-level import or a '# deferred: why' comment:\n" + (
        "\n".join(found)
    )


def test_the_check_finds_an_uncommented_import(tmp_path: Path) -> None:
    module = tmp_path / "toolbench" / "sample.py"
    module.parent.mkdir()
    module.write_text(
        "import os\n\n\n"
        "def quiet():\n    import json\n\n\n"
        "def said():\n    # deferred: heavy\n    import numpy\n\n\n"
        "def inline():\n    import torch  # deferred: optional extra\n\n\n"
        "async def nested():\n    if True:\n        from a import b\n"
    )
    found = uncommented_imports(module, tmp_path)
    assert found == [
        "toolbench/sample.py:19: from a import b",
        "toolbench/sample.py:5: import json",
    ]


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["list", "tasks"]])
def test_help_and_one_command_load_no_other_command(argv: list[str]) -> None:
    """The dispatcher imports a command's module only when that command runs: ``--help`` and
    ``list`` load neither ``run``'s, ``report``'s, ``serve``'s nor ``aware``'s module (nor the
    HTML report's matplotlib, nor uvicorn)."""
    probe = (
        "import sys\n"
        "from toolbench.cli.main import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(done.stdout.split())
    unwanted = {
        "toolbench.cli.run",
        "toolbench.cli.report",
        "toolbench.cli.show",
        "toolbench.cli.serve",
        "toolbench.cli.aware",
        "toolbench.cli.web_shop",
        "toolbench.report.html",
        "matplotlib",
        "uvicorn",
    }
    if argv != ["list", "tasks"]:
        unwanted.add("toolbench.cli.listing")
    assert not unwanted & loaded, sorted(unwanted & loaded)
