"""The google_sheets world hands programs real pandas and numpy: hostile use of them is contained.

Every case in ``hostile_pandas.py`` runs in one module-wide pool and must end as its case says
(never ``ok``), without any file appearing where it tried to write. Workers are reused for
thousands of programs, so scoring is only sound if no program can change what a later one sees:
after *every* case the same worker runs a benign edit and a probe of library-wide state, and
both must give exactly what they gave on a fresh pool. (The pool hands work to its most recently
released worker, so sequential runs stay on the worker the case ran in.) A case that poisons the
worker gets the pool replaced, so one hole does not cascade into the cases after it.

Benign pandas/numpy programs run too and must succeed: a fence that refuses everyday code would
score correct programs as failures.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import toolbench
from tests.sandbox.hostile_pandas import (
    BENIGN,
    BENIGN_PROGRAMS,
    CASES,
    PROBE,
    Benign,
    Case,
)
from toolbench.sandbox import ExecResult, Limits, SandboxPool
from toolbench.sandbox.pool import KINDS
from toolbench.tasks.google_sheets.emulator import Spreadsheet
from toolbench.tasks.google_sheets.world import make_world

# Short timers keep the timeout cases cheap; programs here run in milliseconds once warm, and
# a worker's one-off imports happen before its first program's clock starts.
LIMITS = Limits(wall_s=1.0, cpu_s=1.0)
TABLE: list[list[Any]] = [["Product", "Cost"], ["apple", 1.5], ["rice", 3]]
PACKAGE_DIR = str(Path(toolbench.__file__).parent)
# Under the OS isolation a write may be refused before the audit hook sees it: the folder is
# not there (or read-only) in the worker's view. Either refusal contains the program.
OS_REFUSALS = (
    "non-existent directory",
    "No such file or directory",
    "Read-only file system",
    "Permission denied",
    "Operation not permitted",
)


class Sandbox:
    """The module's pool, the placeholders' values, and what a fresh worker reports."""

    def __init__(self, workbook: Path, out: Path, tmp_prefix: str) -> None:
        self.factory = functools.partial(make_world, str(workbook), "any-digest", "Data", False)
        self.out = out
        self.tmp_prefix = tmp_prefix
        self.pool = SandboxPool(2, LIMITS)
        fresh = self.observe()
        assert fresh[0] is not None and fresh[1] is not None, "fresh pool failed the baseline"
        self.expected: tuple[Any, str | None] = fresh

    def render(self, source: str) -> str:
        return (
            source.replace("%OUT%", str(self.out))
            .replace("%TMP%", self.tmp_prefix)
            .replace("%PKG%", PACKAGE_DIR)
        )

    def run(self, source: str) -> ExecResult:
        return self.pool.run(self.factory, self.render(source))

    def observe(self) -> tuple[Any, str | None]:
        """(state of the benign edit, output of the probe); None for a program that failed."""
        benign, probe = self.run(BENIGN), self.run(PROBE)
        return (benign.state if benign.ok else None), (probe.stdout if probe.ok else None)

    def written(self) -> set[Path]:
        return set(self.out.iterdir()) | set(Path(self.tmp_prefix).parent.glob(self.tmp_name()))

    def tmp_name(self) -> str:
        return Path(self.tmp_prefix).name + "*"

    def reset(self) -> None:
        self.pool.close()
        self.pool = SandboxPool(2, LIMITS)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    book = Spreadsheet("t", sheet_title="Data")
    book.sheet1.update(TABLE, "A1", raw=False)
    workbook = tmp_path_factory.mktemp("book") / "workbook.json"
    workbook.write_text(json.dumps(book.to_dict()))
    out = tmp_path_factory.mktemp("out")
    tmp_prefix = f"/tmp/toolbench_hostile_pandas_{out.parent.name}_{out.name}"
    box = Sandbox(workbook, out, tmp_prefix)
    try:
        yield box
    finally:
        box.pool.close()
        for path in box.written():
            _remove(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def _params(items: list[Any], reason: Callable[[Any], str | None]) -> list[Any]:
    """One pytest param per item; strict xfail where ``reason`` names a known hole/over-block."""
    params = []
    for item in items:
        why = reason(item)
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        params.append(pytest.param(item, id=item.name, marks=marks))
    return params


# -- the corpus itself ------------------------------------------------------------------------


def test_corpus_is_large_unique_and_consistent() -> None:
    names = [case.name for case in CASES]
    assert len(names) >= 60
    assert len(set(names)) == len(names)
    assert len(BENIGN_PROGRAMS) >= 10
    assert len({b.name for b in BENIGN_PROGRAMS}) == len(BENIGN_PROGRAMS)
    for case in CASES:
        assert case.kinds and case.kinds <= KINDS - {"ok"}, case.name
        # A hole's case must pass once the hole is refused in any way, so strict xfail notices.
        assert case.hole is None or case.error is None, case.name


# -- hostile programs -------------------------------------------------------------------------


@pytest.mark.parametrize("case", _params(CASES, lambda case: case.hole))
def test_hostile_pandas_program_is_contained(sandbox: Sandbox, case: Case) -> None:
    before = sandbox.written()
    result = sandbox.run(case.source)
    problems: list[str] = []
    if result.ok or result.kind not in case.kinds:
        problems.append(f"ended {result.kind} (expected {sorted(case.kinds)}): {result}")
    refused_by_os = any(text in (result.error or "") for text in OS_REFUSALS)
    if case.error is not None and case.error not in (result.error or "") and not refused_by_os:
        problems.append(f"error {result.error!r} does not mention {case.error!r}")
    if result.error and ("\n" in result.error or len(result.error) > 300):
        problems.append(f"error is not one short line: {result.error!r}")
    if result.state is not None:
        problems.append(f"a failed program returned a state: {result.state!r}")
    for path in sorted(sandbox.written() - before):
        problems.append(f"the program created {path}")
        _remove(path)
    # Whatever the program did, the same worker must still score the next program as new.
    after = sandbox.observe()
    if after != sandbox.expected:
        problems.append(f"leaked into later programs: {after!r} != {sandbox.expected!r}")
        sandbox.reset()
    assert not problems, "\n".join(problems)


# -- benign programs --------------------------------------------------------------------------


@pytest.mark.parametrize("program", _params(BENIGN_PROGRAMS, lambda program: program.blocked))
def test_benign_pandas_program_succeeds(sandbox: Sandbox, program: Benign) -> None:
    result = sandbox.run(program.source)
    assert result.ok, result
    if program.stdout is not None:
        assert result.stdout == program.stdout
    if program.rows is not None:
        assert result.state["columns"] == TABLE[0]
        assert result.state["rows"] == program.rows
        assert result.state["index"] == list(range(len(program.rows)))
    assert not sandbox.written()
