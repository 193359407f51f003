"""The ToolBench data layout, read and written unchanged.

    <root>/<task>/<version>/functions/   one API doc per file (file name = function name)
    <root>/<task>/<version>/examples/    one demonstration per file (see examples.py)
    <root>/<task>/<version>/test.jsonl   {"prompt": query, "completion": [gold, ...], ...}

Reading is strict: a malformed line stops the load with a ``UserError`` naming ``file:line``,
because a silently skipped sample changes every denominator downstream.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolbench.errors import UserError, json_problem
from toolbench.types import Doc, Sample

# Files that retrieval tools of the original left inside functions/ and examples/.
_IGNORED_PREFIXES = ("document_store", "faiss_document_store", ".")


def read_docs(folder: Path) -> tuple[Doc, ...]:
    """All docs in a folder, sorted by file name so prompts never depend on directory order."""
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder; expected one file per API doc or example")
    docs = []
    for path in sorted(folder.iterdir(), key=lambda p: _natural_key(p.name)):
        if path.name.startswith(_IGNORED_PREFIXES) or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise UserError(f"{path}: not UTF-8 text ({exc.reason}); re-save it as UTF-8") from exc
        docs.append(Doc(name=path.name, text=text.strip()))
    return tuple(docs)


def _natural_key(name: str) -> tuple[Any, ...]:
    """'2_0.txt' before '10_0.txt', so numbered examples keep their intended order."""
    parts: list[Any] = []
    number = ""
    for char in name:
        if char.isdigit():
            number += char
            continue
        if number:
            parts.append((0, int(number)))
            number = ""
        parts.append((1, char))
    if number:
        parts.append((0, int(number)))
    return tuple(parts)


def read_test_jsonl(path: Path, task: str) -> list[Sample]:
    """Parse ``test.jsonl`` into samples; ids are the line's ``id`` or its 0-based line number."""
    if not path.is_file():
        raise UserError(f"{path}: file not found; a task folder needs a test.jsonl")
    samples: list[Sample] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            where = f"{path}:{index + 1}"
            if not line.strip():
                raise UserError(f"{where}: empty line; remove it (every line must be one sample)")
            sample = _parse_line(line, where, index, task)
            if sample.id in seen:
                raise UserError(f"{where}: duplicate sample id {sample.id!r}; ids must be unique")
            seen.add(sample.id)
            samples.append(sample)
    if not samples:
        raise UserError(f"{path}: no samples; the file is empty")
    return samples


def _parse_line(line: str, where: str, index: int, task: str) -> Sample:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UserError(f"{where}: invalid JSON ({json_problem(exc)})") from exc
    if not isinstance(record, dict):
        raise UserError(f"{where}: expected a JSON object with 'prompt' and 'completion'")
    query = record.get("prompt")
    if not isinstance(query, str) or not query.strip():
        raise UserError(f"{where}: missing or empty 'prompt' (the user's query)")
    labels = record.get("completion")
    if isinstance(labels, str):
        labels = [labels]
    if (
        not isinstance(labels, list)
        or not labels
        or not all(isinstance(label, str) and label.strip() for label in labels)
    ):
        raise UserError(f"{where}: 'completion' must be a non-empty list of gold programs")
    raw_id = record.get("id")
    sample_id = str(raw_id) if raw_id is not None else str(index)
    fields = {k: v for k, v in record.items() if k not in ("prompt", "completion", "id")}
    return Sample(
        id=sample_id,
        task=task,
        query=query.strip(),
        labels=tuple(labels),
        fields=fields,
        source=where,
    )


def digest_folder(paths: Iterable[Path]) -> str:
    """A short content hash of data files, recorded in runs so changed data is never mixed in."""
    hasher = hashlib.sha256()
    for path in sorted(paths):
        hasher.update(path.name.encode())
        hasher.update(b"\0")
        hasher.update(path.read_bytes())
        hasher.update(b"\0")
    return hasher.hexdigest()[:16]


def write_task_folder(
    folder: Path,
    records: Sequence[Mapping[str, Any]],
    functions: Mapping[str, str] | None = None,
    examples: Sequence[str] | None = None,
) -> None:
    r"""Write a task folder in the original layout (byte-stable: sorted keys, '\n' endings)."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "test.jsonl").open("w", encoding="utf-8", newline="\n") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    if functions is not None:
        functions_dir = folder / "functions"
        functions_dir.mkdir(exist_ok=True)
        for name, text in functions.items():
            (functions_dir / name).write_text(text.strip() + "\n", encoding="utf-8")
    if examples is not None:
        examples_dir = folder / "examples"
        examples_dir.mkdir(exist_ok=True)
        for number, text in enumerate(examples):
            (examples_dir / f"{number}.txt").write_text(text.strip() + "\n", encoding="utf-8")
