"""make_model: spec strings to wrapped models, and helpful errors for wrong ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.agents.registry import builtin_subjects  # every built-in --model, agents too
from toolbench.errors import UserError
from toolbench.models.base import Model, ModelOptions
from toolbench.models.cache import CachedModel
from toolbench.models.openai_compat import OpenAIModel
from toolbench.models.reference.oracle import OracleModel
from toolbench.models.reference.replay import ReplayModel
from toolbench.models.retry import RetryingModel
from toolbench.models.spec import TOOL_TASKS, make_model, require

LOCAL = ModelOptions(base_url="http://127.0.0.1:9/v1")


def test_builtin_specs(tmp_path: Path) -> None:
    assert isinstance(make_model("oracle", LOCAL), OracleModel)
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"id": "1", "prediction": "x"}\n')
    replay = make_model(f"replay:{preds}", LOCAL)
    assert isinstance(replay, ReplayModel) and replay.name == "replay:preds.jsonl"


def test_baseline_is_built_lazily() -> None:
    model = make_model("baseline", LOCAL)
    assert isinstance(model, Model) and not model.cacheable


async def test_openai_is_wrapped_in_retry_then_cache(tmp_path: Path) -> None:
    bare = make_model("openai:gpt-x", ModelOptions(base_url=LOCAL.base_url, max_retries=2))
    assert isinstance(bare, RetryingModel) and bare.max_retries == 2
    assert isinstance(bare.inner, OpenAIModel) and bare.name == "openai:gpt-x"
    cached = make_model(
        "openai:gpt-x", ModelOptions(base_url=LOCAL.base_url, cache_path=tmp_path / "c.sqlite")
    )
    assert isinstance(cached, CachedModel) and isinstance(cached.inner, RetryingModel)
    assert cached.base_url == "http://127.0.0.1:9/v1"
    await bare.aclose()
    await cached.aclose()


def test_builtin_models_are_never_cached(tmp_path: Path) -> None:
    options = ModelOptions(cache_path=tmp_path / "c.sqlite")
    assert isinstance(make_model("oracle", options), OracleModel)
    assert not (tmp_path / "c.sqlite").exists()


def test_openai_without_key_or_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(UserError, match="set OPENAI_API_KEY or pass --api-key"):
        make_model("openai:gpt-4o-mini", ModelOptions())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("oracel", "unknown model 'oracel' (did you mean 'oracle'?)"),
        ("baselin", "unknown model 'baselin' (did you mean 'baseline'?)"),
        ("openia:gpt-4o", "unknown model 'openia:gpt-4o' (did you mean 'openai:gpt-4o'?)"),
        ("replya:p.jsonl", "unknown model 'replya:p.jsonl' (did you mean 'replay:p.jsonl'?)"),
        ("gpt-4o", "unknown model 'gpt-4o' (choose from: baseline, oracle, replay:FILE, "),
        ("openai", "model 'openai' needs an argument: openai:MODEL"),
        ("hf:", "model 'hf:' needs an argument: hf:FOLDER"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        make_model(spec, LOCAL)
    assert str(caught.value).startswith(message)


def test_replay_with_missing_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(UserError, match=f"replay file not found: {missing}"):
        make_model(f"replay:{missing}", LOCAL)


def test_known_models_cover_every_prefix_and_the_awareness_baselines() -> None:
    patterns = [entry.spec for entry in builtin_subjects()]
    assert patterns == [
        "baseline",
        "oracle",
        "replay:FILE",
        "openai:MODEL",
        "hf:FOLDER",
        "smollm2",
        "agent:COMMAND",
        "always-yes",
        "always-no",
        "random[:SEED]",
        "similarity",
    ]
    assert all(entry.what and "\n" not in entry.what for entry in builtin_subjects())


@pytest.mark.parametrize("spec", ["always-no", "random:3", "similarity"])
def test_an_awareness_baseline_in_a_task_run_says_where_it_belongs(spec: str) -> None:
    with pytest.raises(UserError, match=r"cannot answer tool tasks.*use one of baseline"):
        require(spec, TOOL_TASKS)
    model = make_model(spec, LOCAL)  # an ordinary registry model, for 'toolbench aware run'
    assert not model.cacheable
