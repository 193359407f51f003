"""Run configuration and its fingerprint.

The fingerprint hashes everything that can change a sample's result (tasks and their data,
model, endpoint, prompt and generation settings, sandbox limits) and nothing that cannot
(epochs, limit, concurrency, output folder, cache use). A run folder only ever holds records
made under one fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

from toolbench.prompts.builder import Mode


class RunConfig(BaseModel):
    tasks: list[str]
    model: str
    version: str = "v0"
    data_dir: str | None = None
    base_url: str | None = None
    mode: Mode = Mode.COMPLETION
    retriever: str = "bm25"
    top_k_api: int | None = None  # None: the task's default
    top_k_example: int | None = None
    max_tokens: int | None = None
    temperature: float = 0.0
    seed: int | None = 0
    epochs: int = Field(default=1, ge=1)
    limit: int | None = None
    concurrency: int = Field(default=8, ge=1)
    sandbox_wall_s: float = 2.0
    sandbox_memory_mb: int = 768
    use_cache: bool = True
    live: bool = False  # HTTP tasks: the real APIs instead of the simulators
    max_turns: int = Field(default=10, ge=1)  # model calls a multi-turn solve loop may make
    history: int = Field(default=0, ge=0)  # episodes: earlier actions and pages shown
    # tabletop: get_corner_name says "bottom right corner", not the original's "botom ..."
    fix_corner_name: bool = False

    def fingerprint(self, data_digests: dict[str, str]) -> str:
        # Options added later enter only when set, so runs without them keep their fingerprints.
        excluded = {"epochs", "limit", "concurrency", "use_cache", "data_dir", "history"}
        if not self.fix_corner_name:
            excluded.add("fix_corner_name")
        relevant: dict[str, Any] = self.model_dump(mode="json", exclude=excluded)
        if self.history:
            relevant["history"] = self.history
        relevant["data"] = dict(sorted(data_digests.items()))
        canonical = json.dumps(relevant, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]
