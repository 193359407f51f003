"""The prompt ``show`` and the HTML report rebuild for a record is the one its model was sent.

A record keeps only the hash of its first model call's prompt; ``show``, the HTML report and
``toolbench prompt`` rebuild that prompt from the task data through the task's
``first_request``, the code its solve loop sends the call with. Tabletop's first call is an
LMP's, built inside a running program, and ``--mode tools`` adds the tools to the first call:
both used to be rebuilt as a docs + demonstrations prompt and flagged as differing. Here every
task runs for real through the CLI, in each prompt mode that changes the first call's shape,
and every record's hash must be rebuilt exactly.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.core.solve import prompt_hash
from toolbench.kinds.tool_calling import HasToolset
from toolbench.report import golds
from toolbench.report.explorer import explorer_data
from toolbench.report.summary import LoadedRun
from toolbench.tasks.registry import all_tasks, get_task

Cli = Callable[..., CliResult]

ALL_TASKS = (
    "home_search",
    "booking",
    "open_weather",
    "the_cat_api",
    "google_sheets",
    "virtual_home",
    "web_shop",
    "tabletop",
)
# The first call's shape differs by mode: chat messages (an LMP's own chat wrapping for
# tabletop), and in tools mode the chat messages plus the API as tools.
CHAT_TASKS = ("tabletop", "web_shop", "open_weather")
TOOLS_TASKS = tuple(task.name for task in all_tasks() if isinstance(task, HasToolset))
MATCHES = "prompt (rebuilt; matches the record's prompt hash)"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real oracle runs (the oracle answers every first call, so every record has a hash):
    every task over two epochs (the seed, not the prompt, changes per epoch), chat mode,
    tools mode, and web_shop with history (turn 1 has none to show)."""
    from toolbench.cli import main

    root = tmp_path_factory.mktemp("rebuilt")
    cache = ["--cache-dir", str(root / "cache")]
    plans = {
        "completion": [",".join(ALL_TASKS), "--limit", "3", "--epochs", "2"],
        "chat": [",".join(CHAT_TASKS), "--mode", "chat", "--limit", "2"],
        "tools": [",".join(TOOLS_TASKS), "--mode", "tools", "--limit", "2"],
        "history": ["web_shop", "--history", "2", "--limit", "2"],
    }
    folders = {}
    for name, plan in plans.items():
        folders[name] = root / name
        code = main(["run", *plan, "--model", "oracle", "--out", str(folders[name]), *cache])
        assert code == 0, name
    return folders


def _views(folder: Path) -> list[tuple[dict, golds.SampleView]]:
    """Each record with its rebuilt view, as ``show`` and the report build it."""
    run = LoadedRun(folder)
    sources = {task: golds.load_source(run, task, None) for task in run.by_task}
    pairs = []
    for record in run.records:
        view = golds.view_of(sources[record["task"]], str(record["id"]), record)
        assert view is not None, (record["task"], record["id"], sources[record["task"]].problem)
        pairs.append((record, view))
    return pairs


@pytest.mark.parametrize("which", ["completion", "chat", "tools", "history"])
def test_every_record_prompt_hash_is_rebuilt(runs: dict[str, Path], which: str) -> None:
    pairs = _views(runs[which])
    expected = {"completion": ALL_TASKS, "chat": CHAT_TASKS, "tools": TOOLS_TASKS}
    assert {r["task"] for r, _ in pairs} == set(expected.get(which, ("web_shop",)))
    for record, view in pairs:
        where = (which, record["task"], record["id"], record["epoch"])
        recorded = record["prompt_hash"]
        assert isinstance(recorded, str) and len(recorded) == 16, where
        assert recorded == record["calls"][0]["prompt_hash"], where  # the first call's
        assert view.prompt_matches is True, where


def test_the_hash_is_of_the_rebuilt_request_itself(runs: dict[str, Path]) -> None:
    """Not a comparison that always says yes: the hook's request hashes to the record's hash,
    and a different recorded hash is reported as differing."""
    run = LoadedRun(runs["completion"])
    for task_name in ALL_TASKS:
        record = next(r for r in run.by_task[task_name] if r["epoch"] == 1)
        source = golds.load_source(run, task_name, None)
        sample = source.samples[str(record["id"])]
        assert source.prompter is not None
        request = get_task(task_name).first_request(source.data, sample, 1, source.prompter)
        assert prompt_hash(request) == record["prompt_hash"], task_name
        tampered = {**record, "prompt_hash": "0" * 16}
        view = golds.view_of(source, str(record["id"]), tampered)
        assert view is not None and view.prompt_matches is False, task_name


def test_tabletop_shows_the_lmp_prompt_it_sent(runs: dict[str, Path]) -> None:
    """The issue's instance: the rebuilt tabletop prompt was 3 lines (an empty docs prompt)."""
    from toolbench.tasks.tabletop import docs as prompts

    record, view = next((r, v) for r, v in _views(runs["completion"]) if r["task"] == "tabletop")
    source = golds.load_source(LoadedRun(runs["completion"]), "tabletop", None)
    configs = source.samples[str(record["id"])].fields["configs"]
    assert view.prompt.startswith(prompts.BASE_PROMPTS["tabletop_ui"])
    assert "objects = " + repr([*configs["block_list"], *configs["bowl_list"]]) in view.prompt
    assert view.prompt.count("\n") > 50


@pytest.mark.parametrize("which", ["completion", "chat", "tools"])
def test_show_says_every_prompt_matches(cli: Cli, runs: dict[str, Path], which: str) -> None:
    _, records = read_run(runs[which])
    code, out, err = cli("show", str(runs[which]), "--limit", "0")
    assert code == 0, err
    assert out.count(MATCHES) == len(records)
    assert "DIFFERS" not in out


def test_html_report_explorer_marks_every_prompt_as_matching(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    loaded = [LoadedRun(runs[which]) for which in ("completion", "chat", "tools")]
    data = explorer_data(loaded, tmp_path / "cache")
    assert len(data["records"]) == sum(len(run.records) for run in loaded)
    assert all(entry["pm"] is True for entry in data["records"])


@pytest.mark.parametrize("task_name", ALL_TASKS)
def test_prompt_command_prints_the_rebuilt_prompt(
    cli: Cli, runs: dict[str, Path], task_name: str
) -> None:
    record, view = next(
        (r, v) for r, v in _views(runs["completion"]) if r["task"] == task_name and r["epoch"] == 0
    )
    code, out, err = cli("prompt", task_name, "--sample", str(record["id"]))
    assert code == 0, err
    # The prompt, then the generation settings (max_tokens and the stops) under a rule.
    assert out.startswith(view.prompt)
    settings = out[len(view.prompt) :]
    assert "generation" in settings and "max_tokens: " in settings and "stop: " in settings


@pytest.mark.parametrize("mode", ["chat", "tools"])
def test_prompt_command_in_chat_and_tools_mode(cli: Cli, runs: dict[str, Path], mode: str) -> None:
    """Messages are printed under rules, so each message's text must appear whole."""
    for record, view in _views(runs[mode]):
        if record["epoch"] != 0:
            continue
        code, out, err = cli("prompt", record["task"], "--sample", str(record["id"]),
                             "--mode", mode)  # fmt: skip
        assert code == 0, err
        source = golds.load_source(LoadedRun(runs[mode]), record["task"], None)
        assert source.prompter is not None
        sample = source.samples[str(record["id"])]
        request = get_task(record["task"]).first_request(source.data, sample, 0, source.prompter)
        assert request.messages, record["task"]
        for message in request.messages:
            assert message["content"] in out, (record["task"], message["role"])
            assert message["content"] in view.prompt


def test_a_changed_prompt_setting_is_reported_as_differing(
    cli: Cli, runs: dict[str, Path], tmp_path: Path
) -> None:
    """A run whose run.json says other prompt settings than it was run with: ``show`` rebuilds
    with those and must say the prompt differs, not claim a match."""
    folder = tmp_path / "edited"
    shutil.copytree(runs["completion"], folder)
    info_path = folder / "run.json"
    info = json.loads(info_path.read_text())
    info["config"]["top_k_example"] = 1
    info_path.write_text(json.dumps(info))
    code, out, err = cli("show", str(folder), "--task", "home_search", "--limit", "1")
    assert code == 0, err
    assert "DIFFERS from what the model was shown" in out


def test_an_image_reference_with_a_nul_is_refused_not_raised(tmp_path: Path) -> None:
    """Records are read, not trusted: a NUL in an image path made ``Path.resolve`` raise
    inside the report (found by test_parts' record-shape property)."""
    from toolbench.report.explorer import embed_image

    assert embed_image(tmp_path, "images/a\x00.png") == (None, "not a relative path")


def test_a_plugin_shaped_task_is_rebuilt_and_one_without_the_hook_is_said(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tasks outside the eight (the scripted episode and nested-call tasks the README points
    to) declare the hook the same way; a task written before it is shown with a note, and
    ``show`` goes on."""
    from tests.runner.scripted_tasks import CounterTask, PlanTask
    from toolbench.tasks import registry

    monkeypatch.setitem(registry.REGISTERED, "counter", CounterTask())
    monkeypatch.setitem(registry.REGISTERED, "plan", PlanTask())
    out = tmp_path / "run"
    code, _, err = cli("run", "counter,plan", "--model", "oracle", "--out", str(out))
    assert code == 0, err
    _, records = read_run(out)
    code, shown, err = cli("show", str(out), "--limit", "0")
    assert code == 0, err
    assert shown.count(MATCHES) == len(records) and "DIFFERS" not in shown

    class Older(PlanTask):
        first_request = None  # type: ignore[assignment]

    monkeypatch.setitem(registry.REGISTERED, "plan", Older())
    code, shown, err = cli("show", str(out), "--task", "plan", "--limit", "1")
    assert code == 0, err
    assert "(the prompt could not be rebuilt: task plan declares no first_request)" in shown
    assert "prompt (rebuilt)" in shown
