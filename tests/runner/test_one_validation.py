"""Every refusal of a tool-task run, through the command line and through ``toolbench.run``:
both must refuse with the same one line and leave no run folder behind (the API used to skip
the command line's checks, so ``mode="tools"`` on tabletop ran in completion mode and
``run.json`` said tools)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolbench
from tests.conftest import CliResult
from toolbench.errors import UserError

# (flags after `run TASKS`, toolbench.run keywords, a fragment of the one-line message)
REFUSALS: list[tuple[str, list[str], dict[str, Any], str]] = [
    (
        "tabletop",
        ["--model", "oracle", "--mode", "tools"],
        {"model": "oracle", "mode": "tools"},
        "--mode tools: task tabletop has no tools mode",
    ),
    (
        "home_search",
        ["--model", "always-yes"],
        {"model": "always-yes"},
        "--model always-yes: this model cannot answer tool tasks",
    ),
    (
        "home_search",
        ["--model", "oracle", "--system-prompt", "Be brief."],
        {"model": "oracle", "system_prompt": "Be brief."},
        "--system-prompt: completion prompts have no system message",
    ),
    (
        "home_search",
        ["--model", "oracle", "--task-option", "tabletop.fix_corner_name=true"],
        {"model": "oracle", "task_options": {"tabletop": {"fix_corner_name": True}}},
        "task option tabletop.fix_corner_name: task tabletop is not in this run",
    ),
    (
        "aware",
        ["--model", "agent:python3 x.py"],
        {"model": "agent:python3 x.py"},
        "task aware cannot be solved by an agent",
    ),
    (
        "home_search",
        ["--model", "oracle", "--data-dir", "/nonexistent/toolbench-data"],
        {"model": "oracle", "data_dir": "/nonexistent/toolbench-data"},
        "/nonexistent/toolbench-data: no such folder",
    ),
]


@pytest.mark.parametrize(("tasks", "flags", "keywords", "message"), REFUSALS)
def test_the_command_line_and_the_api_refuse_alike(
    cli: Callable[..., CliResult],
    tmp_path: Path,
    tasks: str,
    flags: list[str],
    keywords: dict[str, Any],
    message: str,
) -> None:
    out_cli, out_api = tmp_path / "cli", tmp_path / "api"
    code, _, err = cli("run", tasks, *flags, "--out", str(out_cli))
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], err
    model = keywords.pop("model")
    with pytest.raises(UserError) as refused:
        toolbench.run(tasks, model, out=out_api, **keywords)
    assert message in str(refused.value)
    assert not out_cli.exists() and not out_api.exists()


def test_a_setting_the_api_does_not_know_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"unknown setting 'limt' \(did you mean 'limit'\?\)"):
        toolbench.run("home_search", "oracle", out=tmp_path / "r", limt=3)
    with pytest.raises(UserError, match=r"epochs=0: .*greater than or equal to 1"):
        toolbench.run("home_search", "oracle", out=tmp_path / "r", epochs=0)
    assert not (tmp_path / "r").exists()
