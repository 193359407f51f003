"""``aware run`` on a dataset whose instances are mostly still pending review: the scores
would rest on a reviewer's first picks (pending left out) or on unreviewed twins (pending
included), so it warns on stderr with the counts and the flag that changes it, and runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from toolbench.aware.evaluate.run import PENDING_WARN_SHARE, pending_warnings
from toolbench.aware.schema import read_instances


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolbench.cli import main

    out = tmp_path_factory.mktemp("pending") / "all.jsonl"
    argv = ["aware", "build", "--source", "task:home_search", "--manipulation", "slot_removal"]
    assert main([*argv, "--out", str(out)]) == 0
    return out


def _with_pending(built: Path, folder: Path, families: int, pending: int) -> Path:
    """``families`` complete/incomplete pairs, the first ``pending`` incomplete ones pending."""
    rows = [json.loads(line) for line in built.read_text().splitlines()]
    incomplete = [r for r in rows if r["label"] == "incomplete"][:families]
    twins = {r["twin_id"] for r in incomplete}
    complete = [r for r in rows if r["label"] == "complete" and r["id"] in twins]
    for row in incomplete[:pending]:
        row["verification"]["status"] = "pending"
    path = folder / f"{families}-{pending}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in complete + incomplete))
    return path


def _run(cli: Callable[..., CliResult], dataset: Path, out: Path, *flags: str) -> str:
    code, _, err = cli(
        "aware", "run", str(dataset), "--model", "always-no", "--out", str(out), *flags
    )
    assert code == 0, err
    return err


def test_69_of_70_pending_warns_with_the_counts_and_the_flag(
    cli: Callable[..., CliResult], built: Path, tmp_path: Path
) -> None:
    dataset = _with_pending(built, tmp_path, 70, 69)
    err = _run(cli, dataset, tmp_path / "left-out")
    warning = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1, err
    assert "69 of 70 incomplete instances are pending review" in warning[0]
    assert "rest on 1 accepted" in warning[0] and "--include-pending" in warning[0]
    err = _run(cli, dataset, tmp_path / "included", "--include-pending")
    assert "69 of 70 incomplete instances are pending review" in err
    assert "scored unreviewed" in err and "drop --include-pending" in err


def test_a_reviewed_dataset_runs_without_a_word(
    cli: Callable[..., CliResult], built: Path, tmp_path: Path
) -> None:
    dataset = _with_pending(built, tmp_path, 20, 0)
    assert "warning" not in _run(cli, dataset, tmp_path / "run")


def test_all_pending_is_still_refused(
    cli: Callable[..., CliResult], built: Path, tmp_path: Path
) -> None:
    dataset = _with_pending(built, tmp_path, 10, 10)
    code, _, err = cli(
        "aware", "run", str(dataset), "--model", "always-no", "--out", str(tmp_path / "r")
    )
    assert code == 2 and "all 10 incomplete instances are pending review" in err


@pytest.mark.parametrize("pending", range(0, 11))
def test_the_warning_starts_at_the_documented_share(
    built: Path, tmp_path: Path, pending: int
) -> None:
    instances = read_instances(_with_pending(built, tmp_path, 10, pending))
    lines = pending_warnings(Path("d.jsonl"), instances, include_pending=False)
    assert bool(lines) == (pending >= PENDING_WARN_SHARE * 10)
    assert all(f"{pending} of 10 incomplete" in line for line in lines)
