"""Acceptance: hostile model replies (not programs: the text around them) through a full
``toolbench run``. Each is a per-sample failure with a one-line message, the run finishes
(exit 0) with a verified log, and a normal sample after them scores normally."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult, read_run
from toolbench.core.bounded import MAX_RECORD_BYTES
from toolbench.data.layout import read_test_jsonl
from toolbench.tasks.registry import get_task

TASK = get_task("home_search")
SAMPLES = read_test_jsonl(TASK.package_dir / "data" / "v0" / "test.jsonl", "home_search")  # type: ignore[attr-defined]

HOSTILE_REPLIES = {
    "100k-char line": "API.set_location(" + "x" * 100_000,
    "6 KB of open parens": "(\n" * 3_000,
    "repetition loop": 'API.set_location("Austin") ' * 3_000,
    "prose repetition": "I think that " * 5_000,
    "unbalanced brackets": "API.set_location(" + "[" * 20_000,
    "900-deep nesting": "API.select_home_type(" + "[" * 900 + "]" * 900 + ")",
    "NUL bytes": 'API.set_location("Aus\x00tin")\nAPI.search()',
    "lone surrogate": 'API.set_location("\ud800")\nAPI.search(',
    "unclosed fence of spaces": "```" + " " * 50_000,
    "prose wrapped parens": "Sure!\n" + "f(\n" * 1_500 + "Hope this helps.",
}


def test_hostile_replies_are_per_sample_failures_and_the_run_goes_on(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    names = list(HOSTILE_REPLIES)
    benign = SAMPLES[len(names)]
    replay = tmp_path / "replay.jsonl"
    with replay.open("w", encoding="utf-8") as handle:
        for sample, name in zip(SAMPLES, names, strict=False):
            # ensure_ascii: the lone surrogate travels as an escape, as a server would send it
            handle.write(json.dumps({"id": sample.id, "prediction": HOSTILE_REPLIES[name]}) + "\n")
        handle.write(json.dumps({"id": benign.id, "prediction": benign.labels[0]}) + "\n")
    out = tmp_path / "run"
    code, stdout, stderr = cli(
        "run", "home_search", "--model", f"replay:{replay}", "--limit", str(len(names) + 1),
        "--out", str(out), "--sandbox-timeout", "2",
    )  # fmt: skip
    assert code == 0, stdout + stderr
    info, records = read_run(out)
    assert info["status"] == "complete" and info["log_verified"] is True
    by_id = {record["id"]: record for record in records}
    for sample, name in zip(SAMPLES, names, strict=False):
        record = by_id[sample.id]
        assert record["status"] in ("model_error", "scored"), name
        assert record["success"] is False, name
        if record["status"] == "model_error":
            assert record["message"] and "\n" not in record["message"], name
            assert len(record["message"]) <= 2_000, name
    assert by_id[benign.id]["status"] == "scored" and by_id[benign.id]["success"] is True
    crashed = sum(1 for r in records if r["status"] == "model_error")
    assert crashed >= len(names) - 1  # "repetition loop" may run and fail to search
    for line in (out / "samples.jsonl").read_text(encoding="ascii").splitlines():
        assert len(line) <= MAX_RECORD_BYTES
    assert len(by_id[SAMPLES[0].id]["prediction"]) == 20_000  # cut, with a marker saying so
    assert cli("report", str(out))[0] == 0
