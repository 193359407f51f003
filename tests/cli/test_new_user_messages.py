"""What a new user met on a fresh clone, each now one true line: ``run all`` is every tool
task, ``aware`` is not offered where a plain run cannot run it, the awareness task's option is
named as it is given, a misspelt flag is named (not the required flag it hid), a line that is
not JSON says where without a dangling "at", and an installed model that states nothing is
offered for the tool tasks only."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult
from tests.test_plugins_broken import Broken, install, toolbench
from toolbench.tasks.registry import BUILTIN, OWN_COMMAND, parse_task_list


def test_all_is_every_tool_task(cli: Callable[..., CliResult]) -> None:
    names = [task.name for task in parse_task_list("all")]
    assert names == [name for name in BUILTIN if name not in OWN_COMMAND]
    assert parse_task_list("booking,all")[0].name == "booking"
    code, _, err = cli("run", "all", "--model", "oracle", "--mode", "tools")
    assert code == 2
    assert "--mode tools: task open_weather, the_cat_api, google_sheets" in err


def test_a_misspelt_task_is_offered_the_runnable_names(cli: Callable[..., CliResult]) -> None:
    code, _, err = cli("run", "home_serch", "--model", "oracle")
    assert code == 2 and "did you mean 'home_search'?" in err
    code, _, err = cli("run", "nosuch", "--model", "oracle")
    assert code == 2 and "choose from: all, booking," in err and "aware" not in err


def test_run_aware_names_its_option_as_it_is_given(cli: Callable[..., CliResult]) -> None:
    code, _, err = cli("run", "aware", "--model", "oracle")
    assert code == 2 and "--task-option aware.dataset=FILE" in err


def test_a_misspelt_flag_is_named_not_the_flag_it_hid(cli: Callable[..., CliResult]) -> None:
    code, _, err = cli("run", "home_search", "--modle", "baseline")
    assert code == 2
    assert "unrecognized arguments: --modle (did you mean '--model'?)" in err
    assert "required" not in err
    code, _, err = cli("run", "home_search", "--model", "baseline", "--limt", "3")
    assert code == 2
    assert err.startswith("toolbench run: error: unrecognized arguments: --limt")
    assert "(did you mean '--limit'?)" in err


def test_a_line_that_is_not_json_says_where(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    lines = ['{"id": "a", "prediction": "x"}', '{"id": "b", "prediction": "unterminated}']
    (tmp_path / "preds.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = cli("run", "home_search", "--model", f"replay:{tmp_path / 'preds.jsonl'}")
    assert code == 2
    assert "preds.jsonl:2: invalid JSON (Unterminated string at column 27)" in err
    assert "at at" not in err


PLAIN = Broken(
    dist="plain-factory",
    module="def make(argument, options):\n    raise SystemExit('not built in this test')\n",
    entry_points="[toolbench.models]\nplainfactory = tb_plain_factory:make\n",
    says="",
    task="",
    model="plainfactory",
)


def test_a_plain_factory_model_is_offered_for_tool_tasks_only(tmp_path: Path) -> None:
    site = tmp_path / "site"
    install(site, PLAIN)
    listed = toolbench(site, tmp_path, "list", "models")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    (header,) = [row for row in lines if "used by" in row]
    column = [cell.strip() for cell in header.split("┃")].index("used by")
    (line,) = [row for row in lines if "plainfactory" in row]
    where = line.split("│")[column].strip()  # the listing's "used by" column
    assert where == "run", line
    dataset = tmp_path / "aware.jsonl"
    dataset.write_text("")
    refused: subprocess.CompletedProcess[str] = toolbench(
        site, tmp_path, "aware", "run", str(dataset), "--model", "plainfactory"
    )
    assert refused.returncode == 2
    assert "--model plainfactory: this model cannot answer awareness questions" in refused.stderr
    assert "KnownModel" in refused.stderr
