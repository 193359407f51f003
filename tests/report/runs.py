"""Run folders for report tests: synthetic ones written through the real ``RunStore`` (chained
logs, as a run writes them), and replay files for runs made through the CLI."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolbench.runner.store import RunStore


def record(task: str, sample_id: str, success: bool, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "task": task,
        "id": sample_id,
        "epoch": 0,
        "status": "scored",
        "success": success,
        "metrics": {},
        "message": "",
        "prediction": "",
    }
    return {**base, **extra}


def make_run(
    folder: Path,
    records: Iterable[dict[str, Any]],
    model: str = "m",
    info: dict[str, Any] | None = None,
) -> Path:
    """A finished run folder holding these records (no ``metric_names`` unless ``info`` says)."""
    store = RunStore(folder)
    base: dict[str, Any] = {
        "fingerprint": "f",
        "status": "running",
        "config": {"model": model, "tasks": []},
        **(info or {}),
    }
    store.write_info(base)
    for r in records:
        store.append(r)
    store.close()
    store.write_info({**base, "status": "complete"})
    return folder


def replay_file(path: Path, predictions: dict[tuple[str, str], str]) -> Path:
    """A replay file ``{"task", "id", "prediction"}`` per line."""
    path.write_text(
        "".join(
            json.dumps({"task": task, "id": sample_id, "prediction": text}) + "\n"
            for (task, sample_id), text in predictions.items()
        )
    )
    return path
