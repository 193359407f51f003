"""Records and metrics pinned across engine changes: every task, the built-in models, both
prompt modes and a replay file with right and wrong answers.

``pinned_records.json`` was written by the engine before tasks owned their solve loop (one
prompt, one generate, one score in the runner). A change to the engine must leave every
record's scored fields and every task's metrics exactly as they were. Fields that cannot be
pinned (latency, the chain, the per-call list added later) are left out of the comparison.

Regenerate only for a deliberate change of results: ``TOOLBENCH_PIN=write pytest
tests/runner/test_pinned_records.py``; the diff of the JSON file then shows what moved.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run

PIN_FILE = Path(__file__).with_name("pinned_records.json")
TASKS = "home_search,booking,open_weather,the_cat_api,google_sheets"
LIMIT = 12
# Record fields that say what was scored; latency, cache use and chain fields vary by run.
PINNED_FIELDS = (
    "task",
    "id",
    "epoch",
    "status",
    "success",
    "metrics",
    "message",
    "prediction",
    "prompt_hash",
    "prompt_tokens",
    "completion_tokens",
    "details",
)
RUNS = {
    "oracle-completion": ("--model", "oracle"),
    "oracle-chat": ("--model", "oracle", "--mode", "chat"),
    "baseline-completion": ("--model", "baseline"),
    "baseline-chat": ("--model", "baseline", "--mode", "chat"),
    "replay-completion": ("--model", "replay:{replay}"),
}


def _wrong(label: str) -> str:
    """A wrong answer in the task's own language: the gold with its last value changed."""
    for old, new in (('")', 'X")'), ("')", "X')"), ("0", "7"), ("1", "3")):
        if old in label:
            head, _, tail = label.rpartition(old)
            return head + new + tail
    return label + "\n"


def _replay_file(folder: Path, oracle_run: Path) -> Path:
    """Per sample, in turn: the gold, a wrong value, prose with no action, and nothing."""
    lines = []
    _, records = read_run(oracle_run)
    for index, record in enumerate(records):
        gold = record["prediction"]
        choice = index % 4
        if choice == 3:
            continue  # no prediction: the replay model says so, a model error
        prediction = (gold, _wrong(gold), "I would rather not answer that.")[choice]
        lines.append({"task": record["task"], "id": record["id"], "prediction": prediction})
    path = folder / "replay.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _digest(record: dict[str, Any], root: Path) -> str:
    kept = {name: record.get(name) for name in PINNED_FIELDS}
    # Messages may name the replay file, which lives in this test's temporary folder.
    text = json.dumps(kept, sort_keys=True, ensure_ascii=False).replace(str(root), "<root>")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _observed(folder: Path, root: Path) -> dict[str, Any]:
    info, records = read_run(folder)
    return {
        "metrics": info["metrics"],
        "counts": info["counts"],
        "records": {f"{r['task']}/{r['id']}/{r['epoch']}": _digest(r, root) for r in records},
    }


@pytest.fixture(scope="module")
def observed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from toolbench.cli import main

    root = tmp_path_factory.mktemp("pinned")
    os.environ["TOOLBENCH_CACHE_DIR"] = str(root / "cache")
    results: dict[str, Any] = {}
    for name, flags in RUNS.items():
        out = root / name
        if any("{replay}" in flag for flag in flags):
            replay = _replay_file(root, root / "oracle-completion")
            flags = tuple(flag.format(replay=replay) for flag in flags)
        code = main(
            ["run", TASKS, *flags, "--limit", str(LIMIT), "--out", str(out), "--allow-missing"]
        )
        assert code == 0, name
        results[name] = _observed(out, root)
    return results


def test_records_and_metrics_are_as_pinned(
    observed: dict[str, Any], cli: Callable[..., CliResult]
) -> None:
    if os.environ.get("TOOLBENCH_PIN") == "write":
        PIN_FILE.write_text(json.dumps(observed, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(PIN_FILE.read_text())
    assert sorted(observed) == sorted(pinned)
    for run in pinned:
        assert observed[run]["metrics"] == pinned[run]["metrics"], run
        assert observed[run]["counts"] == pinned[run]["counts"], run
        moved = [
            key
            for key, digest in pinned[run]["records"].items()
            if observed[run]["records"].get(key) != digest
        ]
        assert not moved, f"{run}: records changed: {moved[:10]}"
        assert set(observed[run]["records"]) == set(pinned[run]["records"]), run


def test_the_replay_file_mixes_right_and_wrong_answers(observed: dict[str, Any]) -> None:
    """The pin is only worth something if the replay run has successes, failures and crashes."""
    counts = observed["replay-completion"]["counts"]
    metrics = observed["replay-completion"]["metrics"]
    for task in TASKS.split(","):
        assert 0.0 < metrics[task]["success_rate"] < 1.0, task
        assert counts[task]["model_error"] > 0, task
