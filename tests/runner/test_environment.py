"""run.json records what a run was produced with (``environment``), and a resume under another
environment that can change results says so and keeps the change on record."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from toolbench.runner import environment


def test_a_run_records_its_environment(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    code, _, err = cli("run", "home_search", "--model", "oracle", "--limit", "1", "--out",
                       str(tmp_path / "r"))  # fmt: skip
    assert code == 0, err
    record = json.loads((tmp_path / "r" / "run.json").read_text())["environment"]
    assert record["toolbench"]["version"]
    assert record["python"]["version"].count(".") == 2
    assert record["os"]["system"] and record["hardware"]["cpus"] >= 1
    assert "pydantic" in record["packages"]
    root = Path(environment.__file__).resolve().parents[3]
    if (root / ".git").exists():  # run from a checkout: the commit, and whether it was dirty
        assert len(record["toolbench"]["commit"]) == 40
        assert isinstance(record["toolbench"]["dirty"], bool)
    assert environment.summary(record).startswith(f"toolbench {record['toolbench']['version']}")


def test_differences_name_what_matters_only() -> None:
    old = {"toolbench": {"commit": "a" * 40}, "packages": {"torch": "2.1", "numpy": "1"}}
    new = {"toolbench": {"commit": "b" * 40}, "packages": {"torch": "2.2", "numpy": "2"}}
    assert environment.differences(old, new) == [
        f"toolbench.commit: {'a' * 10} -> {'b' * 10}",
        "packages.torch: 2.1 -> 2.2",
    ]
    assert environment.differences(old, old) == []


def test_a_resume_under_another_environment_warns_and_keeps_it_on_record(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "r"
    code, _, err = cli("run", "home_search", "--model", "oracle", "--limit", "1", "--out",
                       str(folder))  # fmt: skip
    assert code == 0, err
    real = environment.environment_record()
    changed = json.loads(json.dumps(real))
    changed["packages"]["torch"] = "0.0-other"
    monkeypatch.setattr(environment, "environment_record", lambda: changed)
    code, out, err = cli("run", "home_search", "--model", "oracle", "--limit", "2", "--out",
                         str(folder))  # fmt: skip
    assert code == 0, err
    assert "resumed with another environment (packages.torch:" in out + err
    info = json.loads((folder / "run.json").read_text())
    assert info["environment"]["packages"]["torch"] == "0.0-other"
    assert info["environment_changes"] == [
        f"packages.torch: {real['packages'].get('torch', 'none')} -> 0.0-other"
    ]


def test_report_shows_the_environment_and_warns_across_runs(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    run = ("run", "home_search", "--model", "oracle", "--limit", "1", "--out")
    assert cli(*run, str(first))[0] == 0
    changed = json.loads(json.dumps(environment.environment_record()))
    changed["packages"]["transformers"] = "0.0-other"
    monkeypatch.setattr(environment, "environment_record", lambda: changed)
    assert cli(*run, str(second))[0] == 0
    code, out, _ = cli("report", str(first))
    assert code == 0 and "environment: toolbench " in out
    code, out, _ = cli("report", str(first), str(second))
    assert code == 0
    assert "warning: a and b were made differently: packages.transformers:" in out
    code, out, _ = cli("report", str(first), str(second), "--json")
    shown = json.loads(out)
    assert set(shown["environment"]) == {str(first), str(second)}
    assert any("packages.transformers" in line for line in shown["environment_warnings"])
