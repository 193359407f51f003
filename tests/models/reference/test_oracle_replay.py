"""The oracle and replay models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.models.base import ModelOutputError
from toolbench.models.reference.oracle import OracleModel
from toolbench.models.reference.replay import ReplayModel
from toolbench.types import GenerationRequest, Sample

FORMAT = "each line must be a JSON object with 'id' and 'prediction'"


def request_for(sample_id: str, task: str = "home_search", epoch: int = 0) -> GenerationRequest:
    sample = Sample(id=sample_id, task=task, query="q", labels=("gold()", "other()"))
    return GenerationRequest(prompt="p", sample=sample, epoch=epoch)


def write_lines(path: Path, lines: list[object]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


async def test_oracle_answers_the_first_label() -> None:
    oracle = OracleModel()
    generation = await oracle.generate(request_for("1"))
    assert generation.text == "gold()" and not oracle.cacheable and oracle.name == "oracle"
    with pytest.raises(ModelOutputError):
        await oracle.generate(GenerationRequest(prompt="p"))


async def test_replay_lookup_order(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "preds.jsonl",
        [
            {"id": "1", "prediction": "any task"},
            {"id": "1", "task": "home_search", "prediction": "task"},
            {"id": "1", "task": "home_search", "epoch": 1, "prediction": "task, epoch 1"},
            {"id": "2", "epoch": 2, "prediction": "epoch 2 only"},
            {"id": 3, "prediction": "integer id"},
            "",
        ],
    )
    replay = ReplayModel(path)
    assert replay.name == "replay:preds.jsonl" and not replay.cacheable and len(replay) == 5

    async def answer(sample_id: str, task: str = "home_search", epoch: int = 0) -> str:
        return (await replay.generate(request_for(sample_id, task, epoch))).text

    assert await answer("1") == "task"
    assert await answer("1", epoch=1) == "task, epoch 1"
    assert await answer("1", epoch=2) == "task"
    assert await answer("1", task="booking") == "any task"
    assert await answer("1", task="booking", epoch=1) == "any task"
    assert await answer("2", epoch=2) == "epoch 2 only"
    assert await answer("3") == "integer id"
    with pytest.raises(ModelOutputError) as caught:
        await answer("2", epoch=0)
    assert str(caught.value) == f"no prediction for sample 2 in {path}"
    with pytest.raises(ModelOutputError, match="no prediction for sample 9"):
        await answer("9")


async def test_replay_later_lines_win(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "p.jsonl", [{"id": "1", "prediction": "old"}, {"id": "1", "prediction": "new"}]
    )
    assert (await ReplayModel(path).generate(request_for("1"))).text == "new"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "invalid JSON"),
        ("[1, 2]", "expected a JSON object, got list"),
        ('{"prediction": "x"}', "missing 'id'"),
        ('{"id": "1"}', "missing 'prediction'"),
        ('{"id": "1", "prediction": 3}', "'prediction' must be a string"),
        ('{"id": null, "prediction": "x"}', "'id' must be a string"),
        ('{"id": "1", "prediction": "x", "epoch": "one"}', "'epoch' must be an integer"),
        ('{"id": "1", "prediction": "x", "task": 5}', "'task' must be a string"),
    ],
)
def test_replay_malformed_line_names_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = write_lines(tmp_path / "bad.jsonl", [{"id": "0", "prediction": "fine"}, line])
    with pytest.raises(UserError) as caught:
        ReplayModel(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:2: {problem}")
    assert message.endswith(FORMAT)


def test_replay_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"replay file not found: .*nope\.jsonl"):
        ReplayModel(tmp_path / "nope.jsonl")
