"""The run folder: ``run.json`` (what was run, and the results) + ``samples.jsonl`` (one line per
sample x epoch, appended and flushed as each finishes).

A run killed at any moment (Ctrl-C, kill -9, power loss) is resumable: a torn last line is cut
off, finished records are kept, and infra-error records are moved to ``attempts.jsonl`` so that
their samples are tried again while ``samples.jsonl`` keeps exactly one record per key.

Writing and reading are total. Every record is bounded before it is written (``bounded.py``:
depth, size, strict JSON), and every line read back is checked (size, strict JSON, nesting,
the fields readers rely on): a damaged or hostile line is a ``UserError`` naming file:line,
never a traceback. Records are chained (``chain.py``) so that a log changed after it was
written is detected on resume, at the end of the run and by ``toolbench report``; every
anchor written into run.json is sealed with this user's key, and a resume continues only a
log whose anchor verifies with it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, cast

from toolbench.config import changed_parts
from toolbench.core.bounded import MAX_RECORD_BYTES, record_line
from toolbench.errors import UserError, json_problem
from toolbench.runner.chain import (
    ANCHOR_KEY,
    CHAIN_FIELD,
    CHAIN_RESERVE,
    FORGED,
    MODIFIED,
    OTHER_KEY,
    UNKEYED,
    Anchor,
    ChainChecker,
    LogCheck,
    LogKey,
    chained,
    ensure_key,
    find_key,
    provenance,
    seal,
    unvouched,
    with_provenance,
)
from toolbench.runner.donekeys import DoneKeys
from toolbench.runner.ledger import remember, sealed_here
from toolbench.runner.lock import FolderLock

RUN_FILE = "run.json"
SAMPLES_FILE = "samples.jsonl"
ATTEMPTS_FILE = "attempts.jsonl"
# ``record_line`` keeps every line it writes (chain field included, newline not counted) within
# MAX_RECORD_BYTES, so a longer line was not written by a run.
MAX_READ_LINE_BYTES = MAX_RECORD_BYTES
STATUSES = ("scored", "model_error", "infra_error")

Key = tuple[str, str, int]  # (task, sample id, epoch)


class LogLine(NamedTuple):
    number: int  # 1-based line number in samples.jsonl
    record: dict[str, Any]  # as written, chain field included
    raw: bytes  # the line as written (what the chain covers)


class DamagedRecord(UserError):
    """A line of the log that toolbench did not write as it reads (cut, altered or foreign)."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.line = line
        self.reason = reason


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
        raise UserError(
            f"{path}: invalid JSON ({json_problem(exc)}); the run folder is damaged"
        ) from exc
    except (ValueError, RecursionError) as exc:
        raise UserError(
            f"{path}: unreadable ({type(exc).__name__}); the run folder is damaged"
        ) from None
    if not isinstance(info, dict):
        raise UserError(f"{path}: expected a JSON object")
    return info


def read_records(folder: Path) -> list[dict[str, Any]]:
    """All complete records of a run (without their chain field); a torn last line (from a
    kill) is ignored; a damaged line is a ``DamagedRecord`` naming file:line. Holds the whole
    log: for tests and small logs (readers of whole runs use ``LogScan``)."""
    return [_without_chain(line.record) for line in iter_log(folder / SAMPLES_FILE)]


class LogScan:
    """One pass over a log: its records (without their chain field) as they are read, the
    chain checked along the way, and ``check`` once the pass is over. Nothing is kept per
    record, so a reader of a million-record log holds one record at a time.

    A damaged line raises ``DamagedRecord`` from the iteration; ``check`` finishes a pass the
    reader did not finish (reading the rest of the log)."""

    def __init__(
        self,
        path: Path,
        anchor: Anchor | None,
        exact: bool,
        problem: LogCheck | None = None,
        sealed: str = "",
    ) -> None:
        self.path = path
        self._checker = ChainChecker(anchor, exact)
        self._problem = problem  # known before reading (a malformed anchor)
        self._sealed = sealed  # the anchor's ``provenance``, where run.json was read
        self._read = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._read:
            raise RuntimeError("a LogScan is read once")
        self._read = True
        for line in iter_log(self.path):
            self._checker.feed(line.number, line.raw)
            yield _without_chain(line.record)

    @property
    def check(self) -> LogCheck:
        """The chain's check, with the anchor's provenance (``chain.with_provenance``)."""
        if not self._read:
            for _ in self:
                pass
        return self._problem or with_provenance(self._checker.result(), self._sealed)


def iter_records(folder: Path) -> Iterator[dict[str, Any]]:
    """``read_records`` one record at a time (nothing held; the chain not checked)."""
    for line in iter_log(folder / SAMPLES_FILE):
        yield _without_chain(line.record)


def scan_log(folder: Path, info: dict[str, Any]) -> LogScan:
    """A finished or interrupted run's log, to read once, checked against the anchor in
    ``info`` (its run.json) and the anchor's MAC against this user's key if there is one
    (none is made). For ``report``."""
    anchor, problem = anchor_of(info)
    if problem:
        return LogScan(
            folder / SAMPLES_FILE, None, False, LogCheck(MODIFIED, line=1, reason=problem)
        )
    exact = info.get("status") != "running"
    if anchor is None:
        return LogScan(folder / SAMPLES_FILE, None, exact)
    key = find_key()
    sealed = provenance(anchor, info, key)
    if sealed in (UNKEYED, OTHER_KEY) and key is not None and sealed_here(folder, key.id):
        sealed = FORGED  # this machine sealed a log here: its MAC was taken away
    return LogScan(folder / SAMPLES_FILE, anchor, exact, sealed=sealed)


def load_log(folder: Path, info: dict[str, Any]) -> tuple[list[dict[str, Any]], LogCheck]:
    """``scan_log``'s records as a list, and its check (holds the whole log: small logs and
    tests only)."""
    scan = scan_log(folder, info)
    records = list(scan)
    return records, scan.check


def anchor_of(info: dict[str, Any]) -> tuple[Anchor | None, str | None]:
    """run.json's chain anchor (None where it has no log_chain: ``check_chain`` then finds any
    record modified), and what is wrong when its log_chain is malformed."""
    raw = info.get(ANCHOR_KEY)
    if raw is None:
        return None, None
    anchor = Anchor.from_json(raw)
    return (anchor, None) if anchor is not None else (None, f"{RUN_FILE} log_chain is malformed")


def read_log(path: Path) -> list[LogLine]:
    return list(iter_log(path))


def _without_chain(record: dict[str, Any]) -> dict[str, Any]:
    if CHAIN_FIELD not in record:
        return record
    return {k: v for k, v in record.items() if k != CHAIN_FIELD}


def iter_log(path: Path) -> Iterator[LogLine]:
    """The complete lines of a log, parsed, one at a time (a missing log has none). What
    follows the last newline is a torn write and is not read; a line over the size cap is a
    ``DamagedRecord`` (read past in chunks, never held)."""
    if not path.is_file():
        return
    limit = MAX_READ_LINE_BYTES + 2  # a line at the cap, its newline, and one byte over
    with path.open("rb") as handle:
        number = 0
        while True:
            line = handle.readline(limit)
            if not line:
                return
            number += 1
            if not line.endswith(b"\n"):
                if len(line) < limit:
                    return  # the torn tail of a killed write
                size = _skip_line(handle, len(line))
                if size is None:
                    return  # a torn tail over the cap: ignored like any torn tail
                raise DamagedRecord(path, number, f"record of {size} bytes is over the size cap")
            line = line[:-1]
            if line.strip():
                yield LogLine(number, parse_line(path, number, line), line.strip())


def _skip_line(handle: Any, size: int) -> int | None:
    """Read past the rest of an over-long line: its length without the newline, or None when
    the file ends first."""
    while True:
        chunk = handle.readline(1 << 20)
        if not chunk:
            return None
        if chunk.endswith(b"\n"):
            return size + len(chunk) - 1
        size += len(chunk)


def parse_line(path: Path, number: int, line: bytes) -> dict[str, Any]:
    """One log line as a record, or ``DamagedRecord``: never a RecursionError or a KeyError
    later in a reader."""
    if len(line) > MAX_READ_LINE_BYTES:
        raise DamagedRecord(path, number, f"record of {len(line)} bytes is over the size cap")
    try:
        # What json.loads(line, parse_constant=...) does, with the decoder built once (it
        # would build one, and its scanner, for every line of the log).
        record = _RECORD_DECODER.decode(line.decode(json.detect_encoding(line), "surrogatepass"))
    except RecursionError:
        raise DamagedRecord(path, number, "record is nested too deeply") from None
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, NaN/Infinity
        reason = json_problem(exc)
        raise DamagedRecord(path, number, f"damaged record ({reason})") from None
    problem = record_problem(record)
    if problem:
        raise DamagedRecord(path, number, f"damaged record ({problem})")
    return cast(dict[str, Any], record)  # record_problem refuses anything but an object


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


_RECORD_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def record_problem(record: Any) -> str | None:
    """What is wrong with a parsed record's shape, for the fields readers rely on (or None)."""
    if not isinstance(record, dict):
        return "a record is a JSON object"
    if not isinstance(record.get("task"), str):
        return "task must be a string"
    if not isinstance(record.get("id"), (str, int)) or isinstance(record.get("id"), bool):
        return "id must be a string or integer"
    epoch = record.get("epoch")
    if not isinstance(epoch, int) or isinstance(epoch, bool) or epoch < 0:
        return "epoch must be a whole number"
    if record.get("status") not in STATUSES:
        return f"status must be one of {', '.join(STATUSES)}"
    if record.get("success") not in (None, True, False):
        return "success must be true, false or null"
    metrics = record.get("metrics", {})
    if not isinstance(metrics, dict) or not all(
        value is None or isinstance(value, (int, float)) for value in metrics.values()
    ):
        return "metrics must map names to numbers"
    if not isinstance(record.get("message", ""), str):
        return "message must be a string"
    if not isinstance(record.get("details", {}), dict):
        return "details must be an object"
    return None


class RunStore:
    """Owns one run folder for the duration of a run, and the head of its log's chain.

    ``claim`` takes the folder's lock (``lock.py``) before anything is read; ``release`` gives it
    up after the last write of run.json: one process writes a run folder at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = FolderLock(folder)
        self._handle: Any = None
        self._anchor: Anchor | None = None  # the log's chain, once loaded (``_chain``)
        self._key: LogKey | None = None  # this user's key, once loaded (``_log_key``)

    @property
    def run_file(self) -> Path:
        return self.folder / RUN_FILE

    @property
    def samples_file(self) -> Path:
        return self.folder / SAMPLES_FILE

    def exists(self) -> bool:
        return self.run_file.is_file()

    def claim(self) -> None:
        """Lock the folder (creating it) for this process: ``FolderInUse`` if another holds it,
        a ``UserError`` if it cannot be created or written."""
        self._lock.acquire()

    def release(self) -> None:
        """Close the log and give the folder up; call after the last write. Idempotent."""
        self.close()
        self._lock.release()

    def check_fingerprint(self, fingerprint: str, parts: Mapping[str, Any] | None = None) -> None:
        """Refuse to resume a run made under another configuration, naming what changed
        (from the fingerprint parts both runs keep) when it can."""
        info = read_run_info(self.folder)
        if info.get("fingerprint") == fingerprint:
            return
        old_parts = info.get("fingerprint_parts")
        changes = changed_parts(old_parts, parts) if isinstance(old_parts, dict) and parts else []
        what = (
            "; ".join(changes)
            if changes
            else (f"fingerprint {info.get('fingerprint')} != {fingerprint}")
        )
        raise UserError(
            f"{self.folder}: this run folder holds a run with a different configuration "
            f"({what}); use another --out, or repeat the original command to resume it"
        )

    def prepare_resume(self) -> DoneKeys:
        """Cut a torn tail, check the chain, move infra errors aside for retry (re-chaining
        what is kept); return the keys already done (scored or model errors), compactly
        (``DoneKeys``: per sample, not per record). A modified log is refused.

        One pass reads the log (checking the chain and collecting done keys); a second one,
        only when there are infra errors, writes them aside and rewrites the rest."""
        path = self.samples_file
        if not path.is_file():
            return DoneKeys()
        with path.open("r+b") as handle:
            size = handle.seek(0, os.SEEK_END)
            end = _end_of_last_line(handle, size)
            if end != size:
                handle.truncate(end)
        done = DoneKeys()
        last_of: dict[Key, int] = {}  # keys written more than once: the line that counts
        infra = 0

        def collect(line: LogLine) -> None:
            nonlocal infra
            if line.record.get("status") == "infra_error":
                infra += 1
            elif not done.add(key := record_key(line.record)):
                last_of[key] = line.number  # last one wins if a key repeats

        self._anchor = self._load_anchor(collect)
        if infra:
            self._move_infra_errors(last_of)
        return done

    def _move_infra_errors(self, last_of: dict[Key, int]) -> None:
        """Append the log's infra errors to attempts.jsonl and rewrite the log without them
        (and with one record per key), streaming both."""
        with (self.folder / ATTEMPTS_FILE).open("a", encoding="utf-8") as attempts:
            for line in iter_log(self.samples_file):
                if line.record.get("status") == "infra_error":
                    attempts.write(record_line(_without_chain(line.record))[1] + "\n")

        def kept() -> Iterator[dict[str, Any]]:
            for line in iter_log(self.samples_file):
                record = line.record
                if record.get("status") == "infra_error":
                    continue
                wanted = last_of.get(record_key(record))
                if wanted is None or wanted == line.number:
                    yield _without_chain(record)

        self._rewrite(kept())

    def _load_anchor(self, collect: Callable[[LogLine], None] | None = None) -> Anchor:
        """The chain to continue: the anchor in run.json, after checking the log against it;
        a fresh one for an empty log whose run.json has none (a new run). A log with records
        and no anchor is refused as modified. ``collect`` sees each line of the same pass."""
        info = read_run_info(self.folder) if self.exists() else {}
        anchor, problem = anchor_of(info)
        if problem:
            raise UserError(f"{self.folder}: {problem}; the run folder was modified")
        checker = ChainChecker(anchor, exact=info.get("status") != "running")
        lines = 0
        for line in iter_log(self.samples_file):
            lines += 1
            checker.feed(line.number, line.raw)
            if collect is not None:
                collect(line)
        if anchor is None and not lines:
            return Anchor.fresh()
        check = checker.result()
        if anchor is None or check.state == MODIFIED:  # records without an anchor: modified
            raise UserError(
                f"{check.describe(self.samples_file)}; its results cannot be trusted or "
                "continued: start a new run (another --out)"
            )
        self._check_seal(anchor, info, holds_records=bool(lines or anchor.records))
        return Anchor(anchor.seed, check.head, check.records)

    def _check_seal(self, anchor: Anchor, info: dict[str, Any], holds_records: bool) -> None:
        """Refuse to continue a log this user's key does not vouch for (``chain.unvouched``:
        continuing would seal it with the key)."""
        why = unvouched(anchor, info, self._log_key(), holds_records)
        if why:
            raise UserError(
                f"{self.folder}: {why}; its results cannot be vouched for or continued here: "
                "start a new run (another --out)"
            )

    def _log_key(self) -> LogKey:
        if self._key is None:
            self._key = ensure_key()
        return self._key

    def _sealed(self, info: dict[str, Any], anchor: Anchor) -> dict[str, Any]:
        """``info`` with ``anchor`` sealed for it (its MAC binds the fingerprint and status)."""
        key = self._log_key()
        remember(self.folder, anchor.seed, key.id)
        return {**info, ANCHOR_KEY: seal(anchor, key, info).to_json()}

    def _rewrite(self, records: Iterable[dict[str, Any]]) -> None:
        """Replace the log with ``records``, re-chained from the seed, atomically. run.json
        names the new head as ``pending`` first, so a kill between the two writes leaves a log
        that still checks out against run.json. Streams: the new log is written to a temporary
        file as the records come, and becomes the log only once complete."""
        before = self._chain()
        self._anchor = Anchor(before.seed, before.seed, 0)
        kept = self.folder / f".{SAMPLES_FILE}.tmp"
        with kept.open("w", encoding="utf-8") as handle:
            for record in records:
                line, self._anchor = self._line(record)
                handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        after = self._chain()
        pending = (after.head, after.records)
        self._write_anchor(Anchor(before.seed, before.head, before.records, pending))
        os.replace(kept, self.samples_file)
        self._write_anchor(after)

    def _write_anchor(self, anchor: Anchor) -> None:
        if self.exists():
            write_json_atomic(self.run_file, self._sealed(read_run_info(self.folder), anchor))

    def _chain(self) -> Anchor:
        if self._anchor is None:
            self._anchor = self._load_anchor()
        return self._anchor

    def _line(self, record: dict[str, Any]) -> tuple[str, Anchor]:
        """The line for ``record`` (bounded, chained to the line before it) and the anchor
        once it is written; the caller moves the head only after the write succeeded."""
        anchor = self._chain()
        record = _without_chain(record)  # a chain field is the writer's, and always last
        line, value = chained(record_line(record, CHAIN_RESERVE)[1], anchor.head)
        return line, Anchor(anchor.seed, value, anchor.records + 1)

    def write_info(self, info: dict[str, Any]) -> None:
        """Write run.json; it always carries the log's current anchor (the chain's head),
        sealed with this user's key."""
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.run_file, self._sealed(info, self._chain()))

    def append(self, record: dict[str, Any]) -> None:
        """Append one record, bounded and chained, flushed at once (a kill keeps it)."""
        line, anchor = self._line(record)
        if self._handle is None:
            self._handle = self.samples_file.open("a", encoding="utf-8")
        self._handle.write(line + "\n")
        self._handle.flush()
        self._anchor = anchor

    def verify(self, lines: Iterable[LogLine] | None = None) -> LogCheck:
        """Check the log on disk (or ``lines``, read from it by ``iter_log``) against the chain
        this process wrote (exactly: no record added, removed or changed, even re-chained).
        Never raises."""
        try:
            checker = ChainChecker(self._chain(), exact=True)
            for line in iter_log(self.samples_file) if lines is None else lines:
                checker.feed(line.number, line.raw)
            return checker.result()
        except DamagedRecord as exc:
            return LogCheck(MODIFIED, line=exc.line, reason=exc.reason)
        except (UserError, OSError) as exc:
            return LogCheck(MODIFIED, line=1, reason=str(exc)[:300])

    def finished_log(self) -> LogScan:
        """The log to read once at the end of a run: its records (as ``read_records`` gives
        them, raising as it does) and, after the pass, ``check``: ``verify()``'s check of the
        same bytes (the end of a run reads its log once, and holds one record at a time)."""
        try:
            anchor: Anchor | None = self._chain()
        except (UserError, OSError) as exc:
            problem = LogCheck(MODIFIED, line=1, reason=str(exc)[:300])
            return LogScan(self.samples_file, None, True, problem)
        return LogScan(self.samples_file, anchor, exact=True)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _end_of_last_line(handle: BinaryIO, size: int) -> int:
    """The offset just past the file's last newline (0 if it has none), read backwards in
    blocks: cutting a torn tail never reads the whole log."""
    position = size
    while position > 0:
        start = max(0, position - (1 << 16))
        handle.seek(start)
        block = handle.read(position - start)
        found = block.rfind(b"\n")
        if found >= 0:
            return start + found + 1
        position = start
    return 0
