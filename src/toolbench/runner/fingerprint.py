"""The digest of a task's data as the runner loaded it.

A task reports a digest of its files (``TaskData.digest``), but the runner does not trust it
for the fingerprint: a task that returned a constant would let a resumed run mix records of
old and new samples. This digest is computed from what the solve loops will actually see:
every sample (id, query, labels, fields) and the prompt context (API docs, demonstrations).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from toolbench.core.task import TaskData


def content_digest(data: TaskData[Any]) -> str:
    """sha256 over the loaded samples and context, in load order."""
    hasher = hashlib.sha256()
    hasher.update(f"{data.task}\0{data.version}\0".encode())
    for sample in data.samples:
        hasher.update(_canonical(["sample", sample.id, sample.task, sample.query, sample.labels]))
        hasher.update(_canonical(dict(sample.fields)))
    for kind, docs in (("function", data.context.functions), ("example", data.context.examples)):
        for doc in docs:
            hasher.update(_canonical([kind, doc.name, doc.text]))
    return hasher.hexdigest()


def _canonical(value: Any) -> bytes:
    """One value as length-prefixed canonical JSON (so no two sequences hash alike)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr).encode()
    return len(text).to_bytes(8, "big") + text
