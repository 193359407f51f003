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
    for spec in ("baseline", "oracle", "replay:FILE", "openai:MODEL", "hf:FOLDER"):
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


def test_every_task_folder_has_its_readme() -> None:
    from toolbench.tasks.registry import all_tasks

    for task in all_tasks():
        if task.name == "aware":  # its data is a dataset file (an option), not a task folder
            continue
        folder = task.package_dir
        assert folder is not None and (folder / "README.md").is_file(), task.name


def test_report_json_into_a_closed_pipe_exits_quietly(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    import subprocess
    import sys

    out = tmp_path / "run"
    assert cli("run", "booking", "--model", "oracle", "--limit", "40", "--out", str(out))[0] == 0
    entry = "import sys; from toolbench.cli import main; sys.exit(main())"
    report = subprocess.Popen(
        [sys.executable, "-c", entry, "report", str(out), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert report.stdout is not None and report.stderr is not None
    report.stdout.close()  # like `| head -0`: the reader is gone before the first write
    err = report.stderr.read().decode()
    assert report.wait(timeout=60) == 0
    assert "Traceback" not in err and "BrokenPipe" not in err


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([{"id": "0", "prediction": "x"}, {"id": "nope", "prediction": "x"}], "name no sample"),
        ([{"id": "0", "prediction": "x"}, {"id": "0", "prediction": "y"}], "repeat an earlier"),
        ([{"id": "0", "prediction": "x"}], "have no prediction"),
    ],
)
def test_replay_files_are_checked_before_anything_runs(
    cli: Callable[..., CliResult], tmp_path: Path, lines: list[dict[str, str]], expected: str
) -> None:
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "run"
    base = ("run", "booking", "--model", f"replay:{replay}", "--limit", "2", "--out", str(out))
    code, _, err = cli(*base)
    assert code == 2 and expected in err and "--allow-missing" in err and err.count("\n") == 1
    assert not out.exists()
    code, _, err = cli(*base, "--allow-missing")
    assert code == 0 and expected in err
    records = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2
