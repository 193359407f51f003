"""A local Hugging Face model (a tiny random Llama built in the test) through a whole run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult, read_run
from tests.models.test_hf import build_tiny_model


def test_tiny_hf_model_runs_end_to_end(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    # Room for home_search's prompts (over 1,000 tokens in the tiny 320-token vocabulary).
    model = build_tiny_model(tmp_path / "tiny", context=4096)
    out = tmp_path / "run"
    args = ("run", "home_search", "--model", f"hf:{model}", "--limit", "4", "--max-tokens", "8")
    code, _, _ = cli(*args, "--out", str(out), "--concurrency", "4", "--top-k-api", "2")
    assert code == 0
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert len(records) == 4
    # Random weights write nonsense: every sample is a model error or a wrong answer, never an
    # infra error, and the outputs are recorded.
    assert info["counts"]["home_search"]["infra_error"] == 0
    assert info["metrics"]["home_search"]["success_rate"] == 0.0
    assert all(r["completion_tokens"] > 0 for r in records)
    calls = [call for r in records for call in r["calls"]]
    assert len(calls) == 4 and all(c["finish_reason"] in ("stop", "length") for c in calls)
    assert all(0 < c["completion_tokens"] <= 8 and c["latency_s"] > 0 for c in calls)
    # Same command again: answered from the cache, identical predictions.
    again = tmp_path / "again"
    assert cli(*args, "--out", str(again), "--concurrency", "4", "--top-k-api", "2")[0] == 0
    _, second = read_run(again)
    assert all(r["cached"] for r in second)
    key = lambda r: r["id"]  # noqa: E731
    assert [r["prediction"] for r in sorted(second, key=key)] == [
        r["prediction"] for r in sorted(records, key=key)
    ]


def test_prompts_longer_than_the_context_are_the_models_failures(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    # 512 tokens of context: home_search's prompts (API docs and demonstrations, in a 320-token
    # vocabulary) do not fit. Flagged before generating; the run completes and counts them.
    model = build_tiny_model(tmp_path / "tiny", context=512)
    out = tmp_path / "run"
    args = ("run", "home_search", "--model", f"hf:{model}", "--limit", "3", "--max-tokens", "8")
    code, _, err = cli(*args, "--out", str(out), "--top-k-api", "2", "--hf-device", "cpu")
    assert code == 0, err
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert [r["status"] for r in records] == ["model_error"] * 3
    assert all(r["error_kind"] == "context_overflow" for r in records)
    assert all("context of 512 tokens" in r["message"] for r in records)
    counts = info["counts"]["home_search"]
    assert counts["model_error"] == 3 and counts["infra_error"] == 0
    assert counts.get("context_overflow", 3) == 3


def test_a_gpu_that_is_not_there_is_a_user_error(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    import torch

    if torch.cuda.is_available():
        return
    model = build_tiny_model(tmp_path / "tiny")
    args = ("run", "home_search", "--model", f"hf:{model}", "--limit", "1")
    code, _, err = cli(*args, "--out", str(tmp_path / "run"), "--hf-device", "cuda:0")
    assert code == 2
    assert "--hf-device cuda:0: torch sees no CUDA GPU" in err
