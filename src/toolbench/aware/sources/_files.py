"""Reading external dataset files with one-line errors that name the file and the record.

Every loader takes a file or a folder of files. The helpers here resolve that to a sorted list
(so the output order never depends on the file system) and read JSON lists and JSON lines.
Errors are ``UserError``s worded ``path: record 3 (id=42): ...`` for JSON lists (records count
from 0, as ``jq '.[3]'`` does) and ``path:line 3: ...`` for JSON lines (lines count from 1, as
editors do), so a user can go straight to the bad record.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from toolbench.errors import UserError, json_problem

_KIND_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
}


def where_record(path: Path, index: int, record: Any = None, id_key: str = "id") -> str:
    """``path: record 3 (query_id=42)``: the location prefix for a record of a JSON list."""
    ident = record.get(id_key) if isinstance(record, dict) else None
    suffix = f" ({id_key}={ident})" if ident is not None else ""
    return f"{path}: record {index}{suffix}"


def where_line(path: Path, number: int, record: Any = None, id_key: str = "id") -> str:
    """``path:line 3 (id=irrelevance_2)``: the location prefix for a JSON-lines record."""
    ident = record.get(id_key) if isinstance(record, dict) else None
    suffix = f" ({id_key}={ident})" if ident is not None else ""
    return f"{path}:line {number}{suffix}"


def input_files(path: Path, accept: Callable[[Path], bool], what: str) -> list[Path]:
    """``path`` itself, or the accepted files directly inside the folder ``path``, sorted.

    Sorting by name is what makes a folder load deterministic across machines.
    """
    if path.is_file():
        return [path]
    if not path.exists():
        raise UserError(f"{path}: no such file or folder (point the loader at {what})")
    if not path.is_dir():
        raise UserError(f"{path}: not a regular file or folder (expected {what})")
    files = sorted((p for p in path.iterdir() if p.is_file() and accept(p)), key=lambda p: p.name)
    if not files:
        raise UserError(f"{path}: the folder holds no {what}")
    return files


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None


def read_json_list(path: Path, what: str) -> list[Any]:
    """A file holding one JSON list (API-Bank test data, StableToolBench queries)."""
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(
            f"{path}:line {exc.lineno}: not valid JSON ({json_problem(exc)}); expected {what}"
        ) from None
    if not isinstance(data, list):
        raise UserError(
            f"{path}: expected a JSON list of records ({what}), found a {type(data).__name__}"
        )
    return data


def iter_json_lines(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line of a JSON-lines file (BFCL's ``.json``)."""
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            hint = (
                " (the file looks like one JSON document; BFCL files hold one object per line)"
                if number == 1 and line.lstrip().startswith("[")
                else ""
            )
            raise UserError(
                f"{path}:line {number}: not valid JSON ({json_problem(exc)}); expected {what}{hint}"
            ) from None
        if not isinstance(record, dict):
            raise UserError(f"{path}:line {number}: expected a JSON object ({what})")
        yield number, record


def require(record: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``record[key]`` if present and of ``kind``, else a one-line error saying what to fix."""
    if key not in record:
        raise UserError(f"{where}: missing the '{key}' field")
    value = record[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # bool is an int to Python, never to a user writing an id or a count.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
        raise UserError(
            f"{where}: '{key}' must be {names}, found {type(value).__name__} {_short(value)}"
        )
    return value


def _short(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_unique_ids(ids: list[tuple[str, str]]) -> None:
    """Every (instance id, location) pair has a distinct id, or the first clash is an error.

    A clash would make two dataset lines indistinguishable (and the dataset reader rejects it),
    so it is reported where it arises, with both records named.
    """
    seen: dict[str, str] = {}
    for ident, where in ids:
        if ident in seen:
            raise UserError(
                f"{where}: gives instance id '{ident}' again (first from {seen[ident]}); "
                "record ids must be unique"
            )
        seen[ident] = where


@contextmanager
def record_errors(where: str) -> Iterator[None]:
    """Schema validation failures while building an instance, as one line naming the record.

    Loaders check what they read, so this is a safety net: whatever slips through still reaches
    the user as a ``UserError`` pointing at the record, not as a traceback.
    """
    try:
        yield
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise UserError(f"{where}: cannot make an instance ({field}: {error['msg']})") from None
