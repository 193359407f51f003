"""Acceptance: every hostile program in the corpus, fed as model output through a full run,
ends as a per-sample failure with no side effect, and the run completes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from tests.sandbox.hostile_programs import BOOKING, HOSTILE_PROGRAMS, SENTINEL

# Programs that need Loc/Date only make sense in booking; booking gets the whole corpus.
HOME_CORPUS = [(name, src) for name, src in HOSTILE_PROGRAMS if name not in BOOKING]


@pytest.mark.parametrize(
    ("task", "corpus"), [("home_search", HOME_CORPUS), ("booking", HOSTILE_PROGRAMS)]
)
def test_hostile_corpus_through_a_full_run(
    cli: Callable[..., CliResult], tmp_path: Path, task: str, corpus: list[tuple[str, str]]
) -> None:
    Path(SENTINEL).unlink(missing_ok=True)
    replay = tmp_path / "hostile.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"id": str(i), "prediction": src}) + "\n"
            for i, (_, src) in enumerate(corpus)
        )
    )
    environ = dict(os.environ)
    out = tmp_path / "run"
    code, _, _ = cli(
        "run", task, "--model", f"replay:{replay}", "--limit", str(len(corpus)),
        "--out", str(out), "--sandbox-timeout", "1",
    )  # fmt: skip
    assert code == 0
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert len(records) == len(corpus)
    names = dict(enumerate(name for name, _ in corpus))
    for record in records:
        name = names[int(record["id"])]
        assert record["status"] == "model_error", (name, record)
        assert not record["success"]
        assert record["message"] and "\n" not in record["message"], name
    assert info["metrics"][task]["crash_rate"] == 1.0
    assert not Path(SENTINEL).exists()
    assert dict(os.environ) == environ
    # The harness is intact: the same process can still run a clean evaluation.
    assert (
        cli("run", task, "--model", "oracle", "--limit", "5", "--out", str(tmp_path / "after"))[0]
        == 0
    )
    assert read_run(tmp_path / "after")[0]["metrics"][task]["success_rate"] == 1.0
