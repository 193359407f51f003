"""The fingerprint covers what the runner loaded, not what a task says about it.

Changing one sample's text, a task's scoring version or a task option and rerunning into the
same folder is refused (exit 2) with a line naming what changed, and the folder keeps its
records untouched. A task whose own digest never changes cannot hide a data change.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.config import RunConfig, changed_parts, fingerprint_parts
from toolbench.kinds.program_task import ProgramTask

TASK_DIR = Path(__file__).parents[2] / "src" / "toolbench" / "tasks" / "home_search" / "data"


def _data_copy(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(TASK_DIR / "v0", root / "home_search" / "v0")
    return root


def _edit_first_query(root: Path) -> None:
    path = root / "home_search" / "v0" / "test.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["prompt"] = first["prompt"] + " Please hurry."
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n")


def _run(cli: Callable[..., CliResult], out: Path, *extra: str) -> CliResult:
    return cli("run", "home_search", "--model", "oracle", "--limit", "3", "--no-cache",
               "--out", str(out), *extra)  # fmt: skip


def test_changed_sample_text_is_refused_naming_the_task(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    root = _data_copy(tmp_path)
    out = tmp_path / "run"
    assert _run(cli, out, "--data-dir", str(root))[0] == 0
    before = (out / "samples.jsonl").read_bytes()
    _edit_first_query(root)
    code, _, err = _run(cli, out, "--data-dir", str(root))
    assert code == 2
    assert "home_search: its samples or prompt context changed" in err
    assert "its data files changed" in err  # the task's own digest saw it too
    assert (out / "samples.jsonl").read_bytes() == before


def test_a_constant_task_digest_cannot_hide_a_data_change(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbench.kinds import folder

    monkeypatch.setattr(folder, "digest_folder", lambda files: "constant")
    root = _data_copy(tmp_path)
    out = tmp_path / "run"
    assert _run(cli, out, "--data-dir", str(root))[0] == 0
    _edit_first_query(root)
    code, _, err = _run(cli, out, "--data-dir", str(root))
    assert code == 2
    assert "home_search: its samples or prompt context changed" in err
    assert "data files" not in err


def test_changed_scoring_version_is_refused(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    assert _run(cli, out)[0] == 0
    info, records = read_run(out)
    assert info["fingerprint_parts"]["tasks"]["home_search"]["scoring_version"] == "2"
    monkeypatch.setattr(ProgramTask, "scoring_version", "3")
    code, _, err = _run(cli, out)
    assert code == 2
    assert 'home_search: its scoring version ("2" -> "3") changed' in err
    assert len(read_run(out)[1]) == len(records)


def test_unchanged_rerun_resumes(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run(cli, out)[0] == 0
    code, _, _ = _run(cli, out)
    assert code == 0
    assert len(read_run(out)[1]) == 3


def test_changed_parts_names_settings_and_options() -> None:
    config = RunConfig(tasks=["web_shop"], model="oracle")
    task = {"data": "d", "files": "f", "scoring_version": "1", "options": {"history": 0}}
    old = fingerprint_parts(config, {"web_shop": task})
    hotter = config.model_copy(update={"temperature": 0.7})
    new = fingerprint_parts(hotter, {"web_shop": {**task, "options": {"history": 2}}})
    assert changed_parts(old, new) == [
        "temperature: 0.0 -> 0.7",
        'web_shop: its options ({"history": 0} -> {"history": 2}) changed',
    ]
    assert changed_parts(old, old) == []
