"""A model that cannot answer a command's question is refused before the run: each registry
entry declares what it answers (tool tasks, awareness questions, free-form requests), and
``toolbench run``, ``aware run`` (--model, --judge) and ``aware build`` (--model,
--verify-model) check it up front, leaving no run folder and no dataset behind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult
from toolbench.errors import UserError
from toolbench.models.registry import BUILTIN as MODELS
from toolbench.models.spec import (
    AWARENESS,
    FREE_TEXT,
    QUESTIONS,
    TOOL_TASKS,
    known_model,
    require,
)


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolbench.cli import main

    out = tmp_path_factory.mktemp("caps") / "aware.jsonl"
    argv = ["aware", "build", "--source", "task:home_search", "--manipulation", "slot_removal"]
    assert main([*argv, "--out", str(out)]) == 0
    return out


def test_every_entry_answers_something_and_every_question_has_models() -> None:
    assert all(model.answers and model.answers <= set(QUESTIONS) for model in MODELS)
    for use in QUESTIONS:
        assert any(use in model.answers for model in MODELS), use


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.spec)
def test_each_spec_pattern_finds_its_own_entry(model: object) -> None:
    from toolbench.models.spec import KnownModel

    assert isinstance(model, KnownModel)
    written = model.spec.replace("[:SEED]", ":7").replace("FILE", "x.jsonl")
    assert known_model(written) is model
    for use in QUESTIONS:
        if use in model.answers:
            require(written, use)
        else:
            with pytest.raises(UserError, match=r"cannot answer .*; use one of"):
                require(written, use)


def test_names_the_registry_does_not_hold_are_left_to_make_model() -> None:
    assert known_model("nope") is None
    require("nope", AWARENESS)  # make_model says "unknown model 'nope' (did you mean ...)"


def test_the_floors_answer_only_awareness_and_baseline_only_tool_tasks() -> None:
    for spec in ("always-yes", "always-no", "random", "random:3", "similarity"):
        entry = known_model(spec)
        assert entry is not None and entry.answers == {AWARENESS}
    baseline = known_model("baseline")
    assert baseline is not None and baseline.answers == {TOOL_TASKS}
    oracle = known_model("oracle")
    assert oracle is not None and FREE_TEXT not in oracle.answers


def _one_line(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_aware_run_refuses_baseline_and_says_which_models_can(
    cli: Callable[..., CliResult], dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, _, err = cli("aware", "run", str(dataset), "--model", "baseline", "--out", str(out))
    line = _one_line(code, err)
    assert "--model baseline" in line and "awareness questions" in line
    for able in ("oracle", "openai:MODEL", "hf:FOLDER", "always-yes", "similarity"):
        assert able in line
    assert "baseline," not in line.split("use one of")[1]
    assert not out.exists()


def test_aware_run_refuses_a_judge_that_cannot_grade(
    cli: Callable[..., CliResult], dataset: Path, tmp_path: Path
) -> None:
    argv = ("aware", "run", str(dataset), "--model", "oracle", "--mode", "explain")
    code, _, err = cli(*argv, "--judge", "always-no", "--out", str(tmp_path / "r"))
    line = _one_line(code, err)
    assert "--judge always-no" in line and "openai:MODEL" in line
    # and a judge given where nothing is explained would be silently unused
    code, _, err = cli(*argv[:-2], "--judge", "openai:x", "--out", str(tmp_path / "r"))
    assert "--judge grades explanations" in _one_line(code, err)


def test_tool_task_run_refuses_awareness_floors(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    for spec in ("always-yes", "random:3", "similarity"):
        out = tmp_path / spec
        code, _, err = cli("run", "home_search", "--model", spec, "--out", str(out))
        line = _one_line(code, err)
        assert f"--model {spec}" in line and "tool tasks" in line and "baseline" in line
        assert not out.exists()


def test_aware_build_refuses_models_that_cannot_write_free_text(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "built.jsonl"
    base = ("aware", "build", "--source", "task:home_search", "--out", str(out))
    code, _, err = cli(*base, "--manipulation", "utterance_removal", "--model", "baseline")
    assert "--model baseline" in _one_line(code, err)
    code, _, err = cli(*base, "--manipulation", "api_replacement", "--verify-model", "oracle")
    assert "--verify-model oracle" in _one_line(code, err)
    assert not out.exists()


def test_list_models_says_where_each_model_is_used(cli: Callable[..., CliResult]) -> None:
    code, out, _ = cli("list", "models")
    assert code == 0
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if "│" in line}
    assert "used by" in out
    assert "aware run" not in rows["baseline"] and "run" in rows["baseline"]
    assert "judge/rewriter" in rows["openai:MODEL"]
    assert "aware run" in rows["always-yes"] and "judge" not in rows["always-yes"]
