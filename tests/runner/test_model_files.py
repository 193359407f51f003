"""The fingerprint covers what a model spec runs: the agent's files, an hf: folder's config,
tokenizer and weights, a replay file. A fixed agent rerun into its folder used to keep the
old agent's failures as its own ("this session: 0 samples")."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from toolbench.runner import model_files as mf


def test_an_agent_command_names_its_script_and_file_arguments(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("print('hi')\n")
    (tmp_path / "notes.txt").write_text("x\n")
    files = mf.model_files("agent:python3 agent.py --notes notes.txt --flag", tmp_path)
    assert set(files) == {"agent.py", "notes.txt"}
    assert mf.model_files("agent:python3 -c pass", tmp_path) == {}


def test_a_module_is_found_without_being_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "myagent"
    package.mkdir()
    marker = tmp_path / "imported"
    (package / "__init__.py").write_text(f"open({str(marker)!r}, 'w')\n")
    (package / "__main__.py").write_text("print('run')\n")
    (package / "solver.py").write_text("print('solve')\n")
    monkeypatch.chdir(tmp_path)
    whole = mf.model_files("agent:python3 -m myagent", tmp_path)
    assert set(whole) == {"myagent/__init__.py", "myagent/__main__.py"}
    inner = mf.model_files("agent:python3 -m myagent.solver --x 1", tmp_path)
    assert set(inner) == {"myagent/__init__.py", "myagent/solver.py"}
    assert not marker.exists(), "finding the module ran its package's code"


def test_an_hf_folder_and_a_replay_file(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "model.safetensors", "README.md"):
        (folder / name).write_text(name)
    assert set(mf.model_files("hf:model", tmp_path)) == {
        "model/config.json",
        "model/tokenizer.json",
        "model/model.safetensors",
    }
    (tmp_path / "preds.jsonl").write_text("{}\n")
    assert set(mf.model_files("replay:preds.jsonl", tmp_path)) == {"preds.jsonl"}
    assert mf.model_files("openai:gpt-4o", tmp_path) == {}
    assert mf.model_files("hf:org/not-a-folder", tmp_path) == {}


def test_large_weights_are_hashed_by_size_and_edges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mf, "WHOLE_FILE_BYTES", 4 << 20)
    weights = tmp_path / "w.bin"
    weights.write_bytes(os.urandom(6 << 20))
    first = mf.file_digest(weights)
    assert first.startswith("edges:")
    with weights.open("r+b") as handle:  # the last MiB changes: so does the digest
        handle.seek(-10, os.SEEK_END)
        handle.write(b"0123456789")
    assert mf.file_digest(weights) != first


def test_a_changed_agent_script_is_refused_naming_it(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("agent.py").write_text("import sys\nsys.exit(0)\n")
    run = ("run", "home_search", "--model", "agent:python3 agent.py", "--limit", "2")
    code, _, err = cli(*run, "--out", "r")
    assert code == 0, err
    parts = json.loads(Path("r/run.json").read_text())["fingerprint_parts"]
    assert set(parts["model_files"]["model"]) == {"agent.py"}
    Path("agent.py").write_text("import sys\nsys.exit(0)  # fixed\n")
    code, _, err = cli(*run, "--out", "r")
    assert code == 2
    assert "r: this run folder holds a run with a different configuration" in err
    assert "model file agent.py changed" in err
    code, _, err = cli(*run, "--runs-dir", "runs")  # no --out: a new folder, not the old one
    assert code == 0, err
    assert len(list(Path("runs").iterdir())) == 1


def test_a_changed_replay_file_is_refused(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("run", "home_search", "--model", "oracle", "--limit", "2", "--out", "o")
    assert code == 0, err
    lines = Path("o/samples.jsonl").read_text().splitlines()
    Path("preds.jsonl").write_text(
        "".join(
            json.dumps({"task": r["task"], "id": r["id"], "prediction": r["prediction"]}) + "\n"
            for r in map(json.loads, lines)
        )
    )
    run = ("run", "home_search", "--model", "replay:preds.jsonl", "--limit", "2", "--out", "p")
    code, _, err = cli(*run)
    assert code == 0, err
    Path("preds.jsonl").write_text(Path("preds.jsonl").read_text() + "\n")  # a blank line more
    code, _, err = cli(*run)
    assert code == 2 and "model file preds.jsonl changed" in err
