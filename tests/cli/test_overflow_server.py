"""A served model with a small context window: its overflows are its failures, in the score.

A loopback OpenAI-compatible server refuses prompts that do not fit (prompt + max_tokens over
its window) with vLLM's exact HTTP 400 body, and answers the others. ``toolbench run`` must
end complete (exit 0), with each refused sample a ``model_error`` of ``error_kind``
``context_overflow`` (in the denominator, counted apart in run.json), sent once (never
retried), and a rerun must not try them again.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from tests.overflow_server import OverflowServer
from toolbench.types import DEFAULT_MAX_TOKENS

# home_search's completion prompts are ~395-425 words (the server's "tokens"): this window
# takes about half of them with the default max_tokens.
CONTEXT = 406 + DEFAULT_MAX_TOKENS
LIMIT = 30


@pytest.mark.parametrize("style", ["v18", "old"])
def test_overflows_are_model_errors_in_the_score_and_the_run_completes(
    cli: Callable[..., CliResult], tmp_path: Path, style: str
) -> None:
    out = tmp_path / "run"
    args = [
        "run", "home_search", "--model", "openai:x", "--out", str(out),
        "--limit", str(LIMIT), "--concurrency", "4",
    ]  # fmt: skip
    with OverflowServer(context_length=CONTEXT, style=style, model="x") as server:
        code, stdout, stderr = cli(*args, "--base-url", server.base_url)
        refused, answered = server.refused, server.answered
        assert code == 0, stdout[-2000:] + stderr[-2000:]
        # A rerun of the finished run asks nothing again: the overflows are done.
        assert cli(*args, "--base-url", server.base_url)[0] == 0
        assert (server.refused, server.answered) == (refused, answered)
    info, records = read_run(out)
    overflows = [r for r in records if r.get("error_kind") == "context_overflow"]
    assert 0 < len(overflows) < LIMIT
    assert len(overflows) == refused  # one request each: never retried
    assert answered == LIMIT - refused
    assert info["status"] == "complete" and len(records) == LIMIT
    counts = info["counts"]["home_search"]
    assert counts["infra_error"] == 0
    assert counts["scored"] + counts["model_error"] == LIMIT  # all in the denominator
    assert counts["model_error"] >= len(overflows)
    assert counts["context_overflow"] == len(overflows)
    for record in overflows:
        assert record["status"] == "model_error" and record["success"] is False
        message = record["message"]
        assert message.startswith("context overflow: prompt ") and "max_tokens 256" in message
        assert f"the context window of {CONTEXT} tokens" in message
    assert "context overflow" in stdout
