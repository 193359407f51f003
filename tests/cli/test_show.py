"""``toolbench show``: a run's samples with what the records do not hold (query, the prompt
rebuilt and checked against the recorded hash, the closest gold) recovered from the task
data, a per-key diff of the world states, the message, and each step of a tool-calling
sample; model text never reaches the terminal as control sequences."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run

Cli = Callable[..., CliResult]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from toolbench.cli import main

    root = tmp_path_factory.mktemp("show")
    oracle = root / "oracle"
    assert main(["run", "home_search,virtual_home", "--model", "oracle", "--limit", "4",
                 "--out", str(oracle)]) == 0  # fmt: skip
    golds = {(r["task"], str(r["id"])): r["prediction"] for r in read_run(oracle)[1]}
    predictions = dict(golds)
    predictions[("home_search", "1")] = golds[("home_search", "1")].replace(
        "API.search()", "API.set_num_beds(9)\nAPI.search()"
    )
    predictions[("home_search", "2")] = 'API.set_location("\x1b[2J\x1b]0;pwned\x07Boston")'
    predictions[("virtual_home", "0")] = "Agent.WalkTo(kitchen)\nAgent.Grab(nothing_here)"
    replay = root / "replay.jsonl"
    replay.write_text("".join(json.dumps({"task": t, "id": i, "prediction": p}) + "\n"
                              for (t, i), p in predictions.items()))  # fmt: skip
    assert main(["run", "home_search,virtual_home", "--model", f"replay:{replay}",
                 "--limit", "4", "--out", str(root / "replay")]) == 0  # fmt: skip
    tools = root / "tools"
    assert main(["run", "home_search", "--model", "oracle", "--mode", "tools", "--limit", "1",
                 "--out", str(tools)]) == 0  # fmt: skip
    return {"replay": root / "replay", "tools": tools}


def _sections(out: str) -> list[str]:
    return [line.strip("─ ").strip() for line in out.splitlines() if line.startswith("─")]


def test_failed_sample_shows_query_prompt_gold_and_state_diff(
    cli: Cli, runs: dict[str, Path]
) -> None:
    code, out, err = cli("show", str(runs["replay"]), "--failed", "--task", "home_search",
                         "--id", "1")  # fmt: skip
    assert code == 0, err
    _, records = read_run(runs["replay"])
    record = next(r for r in records if r["task"] == "home_search" and r["id"] == "1")
    assert record["success"] is False and "query" not in record  # the record holds no query
    sections = _sections(out)
    assert sections[0].startswith("home_search #1 epoch 0: scored, failed")
    assert "prompt (rebuilt; matches the record's prompt hash)" in sections
    assert "closest gold (label 1 of 1)" in sections
    assert "world state diff (0 changed, 0 missing, 1 extra of" in out
    assert "! num_beds: extra  predicted 9  gold -" in out
    from toolbench.tasks.registry import get_task

    sample = next(s for s in get_task("home_search").load("v0", None).samples if s.id == "1")
    assert sample.query in out and sample.labels[0] in out


def test_line_diff_where_a_task_keeps_no_state_and_messages(
    cli: Cli, runs: dict[str, Path]
) -> None:
    code, out, _ = cli("show", str(runs["replay"]), "--failed", "--task", "virtual_home",
                       "--no-prompt")  # fmt: skip
    assert code == 0
    assert "diff (- gold, + prediction)" in _sections(out)
    assert "+ Agent.Grab(nothing_here)" in out and "\n- Agent." in out
    assert "message" in _sections(out) and "prompt (" not in out


def test_terminal_control_sequences_in_a_prediction_are_escaped(
    cli: Cli, runs: dict[str, Path]
) -> None:
    code, out, _ = cli("show", str(runs["replay"]), "--task", "home_search", "--id", "2",
                       "--no-prompt")  # fmt: skip
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b[2J\\x1b]0;pwned\\x07Boston" in out


def test_tool_calling_steps_are_shown(cli: Cli, runs: dict[str, Path]) -> None:
    code, out, _ = cli("show", str(runs["tools"]), "--id", "0", "--no-prompt")
    assert code == 0
    calls = [s for s in _sections(out) if s.startswith("call ")]
    assert len(calls) >= 2 and "tool calls: " in out and "set_location" in out


def test_selection_and_bad_flags(cli: Cli, runs: dict[str, Path]) -> None:
    code, out, _ = cli("show", str(runs["replay"]), "--failed", "--limit", "1", "--no-prompt")
    assert code == 0 and "... 2 more; narrow with --task/--id or raise --limit" in out
    for flags, words in (
        (("--task", "bookin"), ["--task bookin", "home_search, virtual_home"]),
        (("--id", "999"), ["--id 999", "no such sample"]),
        (("--limit", "-1"), ["--limit", "-1", "at least 0"]),
    ):
        code, _, err = cli("show", str(runs["replay"]), *flags)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert all(w in err for w in words), err


def test_changed_task_data_is_said(cli: Cli, runs: dict[str, Path], tmp_path: Path) -> None:
    """A run whose data digest no longer matches says so instead of showing a wrong gold."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs["replay"], copy)
    info = json.loads((copy / "run.json").read_text())
    info["data"]["home_search"]["digest"] = "0000000000000000"
    (copy / "run.json").write_text(json.dumps(info))
    code, out, _ = cli("show", str(copy), "--task", "home_search", "--id", "0", "--no-prompt")
    assert code == 0 and "changed since this run" in out
