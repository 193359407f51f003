"""The tiers of tests/tiers.py name real tests, and timing claims live only in the perf tier."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests import tiers

ROOT = Path(__file__).resolve().parent.parent
#: What a test calls to time something against a budget or a ratio.
TIMING_HELPERS = {"assert_linear", "growth", "budget", "slowdown"}


def _test_functions(path: Path) -> dict[str, ast.AST]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    }


def _is_marked_perf(function: ast.AST) -> bool:
    decorators = getattr(function, "decorator_list", [])
    return any("mark.perf" in ast.unparse(decorator) for decorator in decorators)


def test_every_named_file_and_test_exists() -> None:
    missing = [name for name in tiers.INTEGRATION_FILES if not (ROOT / name).is_file()]
    missing += [name for name in tiers.INTEGRATION_FOLDERS if not (ROOT / name).is_dir()]
    for test_id in tiers.PERF_TESTS:
        file, _, name = test_id.partition("::")
        if not (ROOT / file).is_file() or name not in _test_functions(ROOT / file):
            missing.append(test_id)
    assert not missing, f"tests/tiers.py names what is not there: {sorted(missing)}"


def test_timing_claims_are_in_the_perf_tier() -> None:
    """A test that times a ratio or a budget (tests/worst_case.py, tests/perf.py) is perf:
    a unit or integration test never fails because the machine is busy."""
    wrong = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.endswith(tiers.PERF_FILE_SUFFIX):
            continue
        for name, function in _test_functions(path).items():
            called = {
                node.func.id
                for node in ast.walk(function)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            }
            timed = called & TIMING_HELPERS
            perf = _is_marked_perf(function) or f"{relative}::{name}" in tiers.PERF_TESTS
            if timed and not perf:
                wrong.append(f"{relative}::{name} calls {sorted(timed)}")
    assert not wrong, "timing claims outside the perf tier: " + "; ".join(wrong)


def _collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_marks_select_the_tiers() -> None:
    """``-m`` selects on the conftest's marks: a CLI file is integration, a worst-case file
    perf, a parser's unit tests neither."""
    cli_file, perf_file = "tests/cli/test_argtypes.py", "tests/prompts/test_extract_worst_case.py"
    unit_file = "tests/prompts/test_extract.py"
    files = (cli_file, perf_file, unit_file)
    integration = _collected("-m", "integration", *files)
    perf = _collected("-m", "perf", *files)
    unit = _collected("-m", "not integration and not perf", *files)
    assert integration and all(line.startswith(cli_file) for line in integration)
    assert perf and all(line.startswith(perf_file) for line in perf)
    assert unit and all(line.startswith(unit_file) for line in unit)
