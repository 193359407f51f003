"""The awareness task through the generic ``toolbench run``: its options by ``--task-option``,
its judge by ``--role``, refused before any folder when explain mode has no judge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from toolbench.runner.store import read_run_info

Cli = Callable[..., CliResult]


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """home_search twins (slot removal): both labels, no reviewer needed."""
    from toolbench.cli import main

    out = tmp_path_factory.mktemp("aware") / "twins.jsonl"
    code = main(["aware", "build", "--source", "task:home_search", "--manipulation",
                 "slot_removal", "--seed", "0", "--out", str(out)])  # fmt: skip
    assert code == 0
    return out


def _args(dataset: Path, out: Path, *extra: str) -> tuple[str, ...]:
    return ("run", "aware", "--model", "oracle", "--no-cache", "--out", str(out),
            "--task-option", f"aware.dataset={dataset}", "--task-option", "aware.families=3",
            *extra)  # fmt: skip


def test_explain_without_a_judge_is_refused_before_any_folder(
    cli: Cli, twins: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, _, err = cli(*_args(twins, out, "--task-option", "aware.modes=explain"))
    assert code == 2
    assert "task aware: mode explain needs a judge model" in err and "--role judge=SPEC" in err
    assert not out.exists()


def test_explain_with_a_judge_role_runs_and_records_the_role(
    cli: Cli, twins: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, stdout, err = cli(
        *_args(twins, out, "--task-option", "aware.modes=explain", "--role", "judge=oracle")
    )
    assert code == 0, stdout + err
    info = read_run_info(out)
    assert info["kind"] == "aware" and info["status"] == "complete"
    assert info["config"]["roles"] == {"judge": "oracle"}
    assert info["fingerprint_parts"]["settings"]["roles"] == {"judge": "oracle"}
    assert "aware-explain" in info["metrics"]
    assert "explanations: 3 of 3" in stdout  # the awareness tables, not a row of '-'
