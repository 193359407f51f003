"""One run per run folder: the folder lock itself (held, refused, named holder, never stale
after ``kill -9``, unusable folders as one-line errors)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from toolbench.errors import UserError
from toolbench.runner.lock import LOCK_FILE, FolderInUse, FolderLock, holder_of

HOLD_SCRIPT = """
import sys, time
from pathlib import Path
from toolbench.runner.lock import FolderLock
lock = FolderLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
time.sleep(120)
"""


def test_a_second_lock_on_a_held_folder_is_refused_naming_the_holder(tmp_path: Path) -> None:
    first = FolderLock(tmp_path / "run")
    first.acquire()
    assert (tmp_path / "run" / LOCK_FILE).is_file()
    with pytest.raises(FolderInUse) as refused:
        FolderLock(tmp_path / "run").acquire(patience_s=0.05)
    message = str(refused.value)
    assert str(tmp_path / "run") in message and f"process {os.getpid()}" in message
    assert "another --out" in message and "\n" not in message
    holder = holder_of(tmp_path / "run")
    assert holder is not None and holder.pid == os.getpid()
    first.release()
    assert holder_of(tmp_path / "run") is None
    with FolderLock(tmp_path / "run") as again:  # free once released
        assert again.held


def test_probing_a_free_folder_creates_nothing(tmp_path: Path) -> None:
    assert holder_of(tmp_path) is None
    assert holder_of(tmp_path / "missing") is None
    assert list(tmp_path.iterdir()) == []


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    """kill -9 of the holding process: the kernel drops the lock; the next run takes it."""
    folder = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        holder = holder_of(folder)
        assert holder is not None and holder.pid == proc.pid
        with pytest.raises(FolderInUse, match=f"process {proc.pid}"):
            FolderLock(folder).acquire(patience_s=0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert holder_of(folder) is None
    start = time.monotonic()
    with FolderLock(folder):
        assert time.monotonic() - start < 0.5  # taken at once, no waiting out a stale lock


def test_a_probe_never_makes_a_run_refuse(tmp_path: Path) -> None:
    """Readers probe with a shared lock for an instant; a run that meets a probe waits it out
    (here a reader probes without pause while the folder is taken and given up 30 times)."""
    folder = tmp_path / "run"
    stop = threading.Event()

    def probe() -> None:
        while not stop.is_set():
            holder_of(folder)

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        for _ in range(30):
            lock = FolderLock(folder)
            lock.acquire()
            lock.release()
    finally:
        stop.set()
        prober.join()


def _under_a_file(root: Path) -> Path:
    (root / "file").write_text("x")
    return root / "file" / "run"


def _a_file(root: Path) -> Path:
    (root / "f2").write_text("x")
    return root / "f2"


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_under_a_file, "a part of this path is a file"),
        (_a_file, "a file is in the way"),
        (lambda root: Path("/proc/1/toolbench-run"), "--out /proc/1/toolbench-run"),
    ],
)
def test_a_folder_that_cannot_be_used_is_one_user_error(
    tmp_path: Path, make: Callable[[Path], Path], expected: str
) -> None:
    with pytest.raises(UserError) as refused:
        FolderLock(make(tmp_path)).acquire()
    assert expected in str(refused.value) and "\n" not in str(refused.value)


def test_new_run_folders_started_in_one_second_are_distinct(tmp_path: Path) -> None:
    from toolbench.runner.lifecycle import new_folder

    folders = [new_folder(tmp_path / "runs", "home_search-baseline-") for _ in range(5)]
    assert len(set(folders)) == 5 and all(f.is_dir() for f in folders)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="--runs-dir"):
        new_folder(tmp_path / "file", "p-")
