"""Data files a world reads (a workbook), handed to sandbox workers by the parent.

Workers cannot see the harness's data folders (the OS isolation hides them: they sit beside the
gold answers), so a factory module that reads files says which ones with
``sandbox_files(*args, **kwargs) -> list[str]`` (its factory's arguments). Before a program runs,
the parent sends each listed file's bytes to the worker once; world code reads them with
``read_bytes``/``read_text``, which fall back to the disk outside a worker (in the parent, and in
tests that build worlds directly).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

FILES_HOOK = "sandbox_files"
MAX_FILE_BYTES = 32 * 1024 * 1024

_installed: dict[str, bytes] = {}  # path -> content, in a worker


def install(path: str, content: bytes) -> None:
    """Worker side: remember a file the parent sent."""
    _installed[path] = content


def read_bytes(path: str) -> bytes:
    """A data file's content: as the parent sent it, or from the disk where none was sent."""
    found = _installed.get(path)
    return found if found is not None else Path(path).read_bytes()


def read_text(path: str) -> str:
    return read_bytes(path).decode("utf-8")


class FileCache:
    """Parent side: file contents by path, re-read when the file's size or mtime changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, tuple[tuple[int, int], bytes, str]] = {}

    def get(self, path: str) -> tuple[bytes, str]:
        """(content, sha256) of the file; OSError if it cannot be read, ValueError if too big."""
        stat = os.stat(path)
        signature = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            cached = self._files.get(path)
        if cached is not None and cached[0] == signature:
            return cached[1], cached[2]
        if stat.st_size > MAX_FILE_BYTES:
            raise ValueError(f"{path}: a world's data file may be at most {MAX_FILE_BYTES} bytes")
        import hashlib  # here: worker templates import this module and never hash

        content = Path(path).read_bytes()
        digest = hashlib.sha256(content).hexdigest()
        with self._lock:
            self._files[path] = (signature, content, digest)
        return content, digest
