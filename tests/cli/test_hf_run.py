"""A local Hugging Face model (a tiny random Llama built in the test) through a whole run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult, read_run
from tests.models.test_hf import build_tiny_model


def test_tiny_hf_model_runs_end_to_end(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    model = build_tiny_model(tmp_path / "tiny")
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
    # Same command again: answered from the cache, identical predictions.
    again = tmp_path / "again"
    assert cli(*args, "--out", str(again), "--concurrency", "4", "--top-k-api", "2")[0] == 0
    _, second = read_run(again)
    assert all(r["cached"] for r in second)
    key = lambda r: r["id"]  # noqa: E731
    assert [r["prediction"] for r in sorted(second, key=key)] == [
        r["prediction"] for r in sorted(records, key=key)
    ]
