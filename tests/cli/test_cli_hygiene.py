"""What a new user runs into first: help text, listing, prompts without waiting, report shape."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult


def test_run_help_shows_every_default(cli: Callable[..., CliResult]) -> None:
    code, out, _ = cli("run", "--help")
    assert code == 0
    text = " ".join(out.split())
    for shown in (
        "samples solved at once (default: 8)",
        "seconds per model request (default: 60.0)",
        "(default: 6)",
        "(default: 10)",
        "$TOOLBENCH_CACHE_DIR",
        "(default: completion)",
    ):
        assert shown in text, shown


def test_list_models_shows_every_built_in_model_and_what_it_needs(
    cli: Callable[..., CliResult],
) -> None:
    code, out, _ = cli("list", "models")
    assert code == 0
    for spec in ("baseline", "oracle", "replay:FILE", "openai:MODEL", "hf:PATH_OR_NAME"):
        assert spec in out
    for spec in ("always-yes", "always-no", "random[:SEED]", "similarity"):
        assert spec in out
    assert "needs" in out and "toolbench[dense]" in out


def test_prompt_executes_no_gold(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Showing one prompt reads the data; it must not run 70 gold programs first."""
    from toolbench.tasks.google_sheets import TASK

    async def no_golds(*_: object) -> None:
        raise AssertionError("prompt executed the golds")

    monkeypatch.setattr(type(TASK), "prepare", no_golds)
    code, out, err = cli("prompt", "google_sheets", "--sample", "1")
    assert code == 0, err
    assert "Task:" in out


def test_a_task_reports_only_its_own_metrics(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, _, err = cli(
        "run", "google_sheets", "--model", "baseline", "--limit", "3", "--out", str(out)
    )
    assert code == 0, err
    info = json.loads((out / "run.json").read_text())
    assert info["metric_names"]["google_sheets"] == ["success_rate", "crash_rate"]
    assert set(info["metrics"]["google_sheets"]) == {"success_rate", "crash_rate"}
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert all(not r["metrics"] for r in records)  # crashes fill no precision/recall/F1
    code, report, _ = cli("report", str(out), "--json")
    assert code == 0
    (entry,) = json.loads(report)["runs"].values()
    assert "precision" not in entry["google_sheets"] and "success_rate" in entry["google_sheets"]
