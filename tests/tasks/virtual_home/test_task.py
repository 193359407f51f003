"""virtual_home end to end: our data, data generation, an original-layout folder, the CLI."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from toolbench.tasks.virtual_home import TASK, docs, generator
from toolbench.tasks.virtual_home.goals import unmet
from toolbench.tasks.virtual_home.grounding import ground
from toolbench.tasks.virtual_home.vocab import ACTIONS, valid_object_lists
from toolbench.tasks.virtual_home.world import Scene, run_plan

V0 = Path(TASK.package_dir) / "data" / "v0"
METRICS = ("executability_rate", "lcs_score", "lcs_score_if_executable")
ALL_METRICS = (*METRICS, "executable_in_world", "goal_success")


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (V0 / "test.jsonl").read_text().splitlines()]


def test_v0_records_run_and_meet_their_goals() -> None:
    records = _records()
    assert len(records) >= 150
    allow = valid_object_lists()
    rooms = set()
    for record in records:
        assert 1 <= len(record["completion"]) <= 3
        scene = Scene.from_json(record["scene"])
        for plan in record["completion"]:
            grounded = ground(plan, allow)
            assert grounded.executable, plan
            result = run_plan(scene, grounded.lines)
            assert result.ok, (record["prompt"], result.reason)
            assert unmet(record["goal"], result.state) == []
        for words in record["slots"].values():
            assert words.lower() in record["prompt"].lower()
        rooms.add(record["room"])
    assert {"kitchen", "bathroom", "bedroom", "living_room", "home_office"} <= rooms


def test_generator_is_deterministic_and_train_is_disjoint() -> None:
    assert json.dumps(generator.generate("test", 30, 1)) == json.dumps(
        generator.generate("test", 30, 1)
    )
    test = {r["prompt"].lower() for r in generator.generate("test", 160, 0)}
    train = generator.generate("train", 200, 0)
    assert len(train) == 200 and not test & {r["prompt"].lower() for r in train}
    with pytest.raises(ValueError):
        generator.generate("dev", 1, 0)


def test_docs_and_demonstrations() -> None:
    assert len(docs.EXAMPLES) >= 30
    assert set(docs.FUNCTIONS) == {a.name for a in ACTIONS}
    assert "'plate'" in docs.FUNCTIONS["Grab"] and "Agent.Grab(object)" in docs.FUNCTIONS["Grab"]
    allow = valid_object_lists()
    test = {r["prompt"].lower() for r in _records()}
    for query, plan in docs.EXAMPLES:
        assert ground(plan, allow).executable and query.lower() not in test
    saved = json.loads((V0 / "valid_object_lists.json").read_text())
    assert saved == allow


def test_data_generate_reproduces_v0_and_writes_train_pairs(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "v0"
    code, _, err = cli("data", "generate", "virtual_home", "--split", "test", "--n", "160",
                       "--seed", "0", "--out", str(out))  # fmt: skip
    assert code == 0, err
    for path in sorted(p for p in V0.rglob("*") if p.is_file()):
        assert (out / path.relative_to(V0)).read_bytes() == path.read_bytes(), path
    code, _, err = cli("data", "generate", "virtual_home", "--split", "train", "--n", "20",
                       "--seed", "0", "--out", str(tmp_path / "train"))  # fmt: skip
    assert code == 0, err
    pairs = (tmp_path / "train" / "train.jsonl").read_text().splitlines()
    first = json.loads(pairs[0])
    assert len(pairs) == 20 and first["completion"].startswith("Agent.")
    assert "Agent.Grab(object)" in first["prompt"] or "Agent." in first["prompt"]


# An original-layout folder of our own: no scenes, no goals, its own allow-lists.
ORIGINAL_ALLOW = {
    "Agent.WalkTo": {"object": ["kitchen", "bedroom", "counter", "cupboard", "wardrobe"]},
    "Agent.Find": {"object": ["cereal", "counter", "cupboard", "jumper", "wardrobe"]},
    "Agent.Grab": {"object": ["cereal", "jumper"]},
    "Agent.Open": {"object": ["cupboard", "wardrobe"]},
    "Agent.Close": {"object": ["cupboard", "wardrobe"]},
    "Agent.Put": {"object1": ["cereal"], "object2": ["counter", "cupboard"]},
    "Agent.PutOn": {"object": ["jumper"]},
}
ORIGINAL_RECORDS = [
    {"prompt": "Get breakfast cereal out",
     "completion": ["Agent.WalkTo(kitchen)\nAgent.WalkTo(cupboard)\nAgent.Open(cupboard)\n"
                    "Agent.Grab(cereal)\nAgent.Close(cupboard)\nAgent.Find(counter)\n"
                    "Agent.Put(cereal, counter)"]},
    {"prompt": "Put on a jumper",
     "completion": ["Agent.WalkTo(bedroom)\nAgent.Find(wardrobe)\nAgent.Open(wardrobe)\n"
                    "Agent.Find(jumper)\nAgent.Grab(jumper)\nAgent.PutOn(jumper)",
                    "Agent.WalkTo(bedroom)\nAgent.Find(jumper)\nAgent.Grab(jumper)\n"
                    "Agent.PutOn(jumper)"]},
]  # fmt: skip


def _original_folder(root: Path, records: list[dict[str, Any]]) -> Path:
    folder = root / "virtual_home" / "v0"
    (folder / "functions").mkdir(parents=True)
    (folder / "examples").mkdir()
    for action in ORIGINAL_ALLOW:
        (folder / "functions" / action).write_text(f"# {action}\n{action}(object)\n")
    (folder / "examples" / "0_0.txt").write_text(
        "Task: Fetch the cereal\nActions:\nAgent.WalkTo(kitchen)\nAgent.Find(cereal)\n"
        "Agent.Grab(cereal)\n"
    )
    (folder / "valid_object_lists.json").write_text(json.dumps(ORIGINAL_ALLOW))
    lines = [json.dumps(r) for r in records]
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_original_layout_folder_oracle(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = _original_folder(tmp_path / "data", ORIGINAL_RECORDS)
    out = tmp_path / "run"
    code, _, err = cli("run", "virtual_home", "--model", "oracle", "--data-dir", str(root),
                       "--out", str(out))  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    assert all(info["metrics"]["virtual_home"][m] == 1.0 for m in ALL_METRICS)
    assert len(records) == 2


def test_original_gold_failing_grounding_is_exit_2(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    bad = [*ORIGINAL_RECORDS, {"prompt": "x", "completion": ["Agent.Grab(cupboard)"]}]
    root = _original_folder(tmp_path / "data", bad)
    code, _, err = cli("run", "virtual_home", "--model", "oracle", "--data-dir", str(root),
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 2
    assert re.search(r"test\.jsonl:3: gold plan 1 line 'Agent\.Grab\(cupboard\)'", err), err
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_cli_oracle_baseline_and_replay(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    code, _, err = cli("run", "virtual_home", "--model", "oracle", "--out", str(tmp_path / "o"),
                       "--limit", "20")  # fmt: skip
    assert code == 0, err
    info, _ = read_run(tmp_path / "o")
    assert all(info["metrics"]["virtual_home"][m] == 1.0 for m in ALL_METRICS)
    code, _, err = cli("run", "virtual_home", "--model", "baseline", "--out",
                       str(tmp_path / "b"))  # fmt: skip
    assert code == 0, err
    metrics = read_run(tmp_path / "b")[0]["metrics"]["virtual_home"]
    assert 0.05 < metrics["goal_success"] < 0.95 and 0.1 < metrics["lcs_score"] < 0.95
    records = _records()
    gold = records[0]["completion"][0]
    lines = gold.split("\n")
    replay = [
        {"id": "0", "prediction": gold},
        {"id": "1", "prediction": "Actions:\n" + records[1]["completion"][0]},
        {"id": "2", "prediction": "\n".join(records[2]["completion"][0].split("\n")[1:][::-1])},
        {"id": "3", "prediction": "\n".join(lines[:1])},
    ]
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in replay) + "\n")
    code, _, err = cli("run", "virtual_home", "--model", f"replay:{path}", "--limit", "4",
                       "--out", str(tmp_path / "r"))  # fmt: skip
    assert code == 0, err
    by_id = {r["id"]: r for r in read_run(tmp_path / "r")[1]}
    assert by_id["0"]["success"] and by_id["0"]["metrics"]["goal_success"] == 1.0
    one = by_id["1"]
    assert one["metrics"]["executability_rate"] == 0.0
    assert "lcs_score_if_executable" not in one["metrics"]
    assert one["details"]["world"]["failed_line"] == 1
    assert one["details"]["non_executable_lines"] == ["Actions:"]
    two = by_id["2"]
    assert two["metrics"]["executable_in_world"] == 0.0 and two["details"]["world"]["reason"]
    assert by_id["3"]["metrics"]["goal_success"] == 0.0 and by_id["3"]["message"]


def test_prompt_resume_and_cache_work_as_for_every_task(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """The shared engine: the prompt shows the action docs, an unfinished run resumes where
    it stopped, and a second run of a served model comes from the cache."""
    from tests.fakeserver import FakeOpenAIServer

    code, prompt, _ = cli("prompt", "virtual_home", "--sample", "0")
    shown, _, settings = prompt.partition("─")  # the prompt, then its generation settings
    assert code == 0 and "Agent.WalkTo" in shown and shown.rstrip().endswith("Action:")
    assert "max_tokens: 128" in settings and "stop: '------', 'Task:'" in settings
    with FakeOpenAIServer(answer="Agent.WalkTo(kitchen)") as server:
        flags = ("--model", "openai:m", "--base-url", server.base_url, "--max-retries", "0")
        first = tmp_path / "first"
        assert cli("run", "virtual_home", *flags, "--limit", "2", "--out", str(first))[0] == 0
        assert server.calls == 2
        # The same folder with more samples: the two done are kept, two more are asked.
        assert cli("run", "virtual_home", *flags, "--limit", "4", "--out", str(first))[0] == 0
        assert len((first / "samples.jsonl").read_text().splitlines()) == 4
        assert server.calls == 4
        second = tmp_path / "second"
        assert cli("run", "virtual_home", *flags, "--limit", "4", "--out", str(second))[0] == 0
        assert server.calls == 4  # the second run: all cache hits
