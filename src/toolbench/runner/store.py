"""The run folder: ``run.json`` (what was run, and the results) + ``samples.jsonl`` (one line per
sample x epoch, appended and flushed as each finishes).

A run killed at any moment (Ctrl-C, kill -9, power loss) is resumable: a torn last line is cut
off, finished records are kept, and infra-error records are moved to ``attempts.jsonl`` so that
their samples are tried again while ``samples.jsonl`` keeps exactly one record per key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolbench.errors import UserError

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
ATTEMPTS_FILE = "attempts.jsonl"

Key = tuple[str, str, int]  # (task, sample id, epoch)


def record_key(record: dict[str, Any]) -> Key:
    return (str(record["task"]), str(record["id"]), int(record["epoch"]))


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_run_info(folder: Path) -> dict[str, Any]:
    path = folder / RUN_FILE
    if not path.is_file():
        raise UserError(f"{folder}: not a run folder (no {RUN_FILE})")
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: invalid JSON ({exc.msg}); the run folder is damaged") from exc
    if not isinstance(info, dict):
        raise UserError(f"{path}: expected a JSON object")
    return info


def read_records(folder: Path) -> list[dict[str, Any]]:
    """All complete records of a run; a torn last line (from a kill) is ignored."""
    path = folder / SAMPLES_FILE
    if not path.is_file():
        return []
    return list(_complete_records(path))


def _complete_records(path: Path) -> Iterator[dict[str, Any]]:
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1  # everything after the last newline is a torn write
    for number, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}:{number}: damaged record ({exc.msg})") from exc


class RunStore:
    """Owns one run folder for the duration of a run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._handle: Any = None

    @property
    def run_file(self) -> Path:
        return self.folder / RUN_FILE

    def exists(self) -> bool:
        return self.run_file.is_file()

    def check_fingerprint(self, fingerprint: str) -> None:
        info = read_run_info(self.folder)
        if info.get("fingerprint") != fingerprint:
            raise UserError(
                f"{self.folder}: this run folder holds a run with a different configuration "
                f"(fingerprint {info.get('fingerprint')} != {fingerprint}); "
                "use another --out, or repeat the original command to resume it"
            )

    def prepare_resume(self) -> dict[Key, dict[str, Any]]:
        """Cut a torn tail, move infra errors aside for retry; return the finished records."""
        path = self.folder / SAMPLES_FILE
        if not path.is_file():
            return {}
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end != len(data):
            with path.open("r+b") as handle:
                handle.truncate(end)
        done: dict[Key, dict[str, Any]] = {}
        retry: list[dict[str, Any]] = []
        for record in _complete_records(path):
            if record.get("status") == "infra_error":
                retry.append(record)
            else:
                done[record_key(record)] = record  # last one wins if a key repeats
        if retry:
            with (self.folder / ATTEMPTS_FILE).open("a", encoding="utf-8") as attempts:
                for record in retry:
                    attempts.write(json.dumps(record) + "\n")
            kept = self.folder / f".{SAMPLES_FILE}.tmp"
            with kept.open("w", encoding="utf-8") as handle:
                for record in done.values():
                    handle.write(json.dumps(record) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(kept, path)
        return done

    def write_info(self, info: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.run_file, info)

    def append(self, record: dict[str, Any]) -> None:
        if self._handle is None:
            self._handle = (self.folder / SAMPLES_FILE).open("a", encoding="utf-8")
        # ASCII-only JSON: a model's U+2028 or stray \r must not split a record for any reader.
        self._handle.write(json.dumps(record, default=str) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
