"""One run per run folder: an exclusive OS lock held for the whole life of a run.

Two ``toolbench run --out X`` started together would both "resume" X and append the same
samples twice. Every writer of a run folder (tool runs, awareness runs, a person's web_shop
episodes) takes this lock through ``runner.lifecycle.open_run`` before it reads anything.

The lock is ``flock`` on ``X/.lock``: the kernel drops it when the holding process ends, however
it ends (``kill -9`` included), so a lock is never stale. The file's text names the holder (pid,
host, start time) only so that the refusal can say who holds it; whether the folder is in use is
decided by the lock alone, never by that text. Sandbox workers are started with
``close_fds=True``, so no child outlives the run holding it.

Readers (``report``, ``show``) never take the lock for longer than a probe, and a run that finds
the lock taken tries again for ``ACQUIRE_PATIENCE_S`` before refusing, so a reader's probe can
never make a run refuse.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import fcntl
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from toolbench.errors import UserError

LOCK_FILE = ".lock"
ACQUIRE_PATIENCE_S = 1.0  # longer than any reader's probe; far shorter than any run
_RETRY_S = 0.02
_MAX_HOLDER_BYTES = 4096


@dataclass(frozen=True)
class Holder:
    """Who holds a folder's lock, as the holder wrote it (a hint for the message)."""

    pid: int | None
    host: str
    started: str

    def describe(self) -> str:
        who = f"process {self.pid}" if self.pid is not None else "another process"
        where = f" on {self.host}" if self.host and self.host != socket.gethostname() else ""
        since = f", running since {self.started}" if self.started else ""
        return f"{who}{where}{since}"


class FolderInUse(UserError):
    """A second writer for a folder another process is running."""

    def __init__(self, folder: Path, holder: Holder) -> None:
        super().__init__(
            f"{folder}: run folder in use by {holder.describe()}; wait for it to finish "
            "(or stop it), or give another --out"
        )
        self.folder = folder
        self.holder = holder


class FolderLock:
    """The exclusive lock of one run folder (created if missing). ``acquire`` raises
    ``FolderInUse`` or a ``UserError`` for a folder that cannot be created or written."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, patience_s: float = ACQUIRE_PATIENCE_S) -> None:
        if self._fd is not None:
            return
        fd = _open_lock_file(self.folder)
        deadline = time.monotonic() + patience_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise FolderInUse(self.folder, holder) from None
                time.sleep(_RETRY_S)
        self._fd = fd
        _write_holder(fd)

    def release(self) -> None:
        """Give the folder up (closing the file drops the lock). Idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder_of(folder: Path) -> Holder | None:
    """The process running ``folder`` now, or None when no process holds its lock. Probes with
    a shared lock released at once; creates nothing and writes nothing in the folder."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None  # no lock file (no run ever claimed this folder) or not a folder: none holds it
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd)
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _open_lock_file(folder: Path) -> int:
    """The folder's lock file, opened for writing; a folder that cannot be made or written is
    the user's to fix (one line naming it), not a traceback."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(
            folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644
        )
    except FileExistsError:
        raise UserError(f"--out {folder}: a file is in the way; give a folder") from None
    except NotADirectoryError:
        raise UserError(f"--out {folder}: a part of this path is a file; give a folder") from None
    except PermissionError:
        raise UserError(f"--out {folder}: not writable; give a folder you can write") from None
    except OSError as exc:
        reason = "a link where the lock file goes" if exc.errno == errno.ELOOP else exc.strerror
        raise UserError(f"--out {folder}: cannot be used as a run folder ({reason})") from None


def _write_holder(fd: int) -> None:
    text = json.dumps(
        {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }
    )
    with contextlib.suppress(OSError):  # only a hint for the message; the lock is what counts
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode() + b"\n", 0)


def _read_holder(fd: int) -> Holder:
    try:
        raw = json.loads(os.pread(fd, _MAX_HOLDER_BYTES, 0) or b"{}")
    except (OSError, ValueError, RecursionError):
        raw = {}
    raw = raw if isinstance(raw, dict) else {}
    pid = raw.get("pid")
    return Holder(
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        host=str(raw.get("host", ""))[:100],
        started=str(raw.get("started", ""))[:40],
    )
