"""This machine's memory of the logs it sealed, so that removing a MAC is not a way out.

A key MAC (``chain.seal``) catches a log re-chained by anyone without the key. Such a forger
could instead delete the MAC, or name a key id of their own: the anchor then reads like a run
made before keys, or a folder copied from another machine, which ``report`` can only call
"not verified". So each sealing also notes, in the key folder (``package.key_dir``, which no
process under test can read or write), that this machine sealed a log at this folder with
this seed. A report that finds such a note and an anchor that is not sealed with this
machine's key knows the MAC was taken away: the log is modified.

A note is a small file named after a digest of the folder's real path, holding the seed and
the key id; it is rewritten only when they change. A folder moved or copied to another path
has no note, and reads as before ("intact, not verified").
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path

from toolbench.package import key_dir

LEDGER_DIR = "sealed-logs"
_written: dict[str, str] = {}  # note file -> its text, as this process last wrote it


def _note_path(folder: Path) -> Path:
    real = os.path.realpath(folder)
    name = hashlib.sha256(b"toolbench sealed log\n" + real.encode("utf-8", "replace"))
    return key_dir() / LEDGER_DIR / f"{name.hexdigest()[:32]}.json"


def remember(folder: Path, seed: str, key_id: str) -> None:
    """Note that this machine sealed ``folder``'s log from ``seed`` with key ``key_id``."""
    path = _note_path(folder)
    text = json.dumps({"seed": seed, "key_id": key_id}, sort_keys=True)
    if _written.get(str(path)) == text:
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
    os.replace(tmp, path)
    _written[str(path)] = text


def sealed_here(folder: Path, key_id: str) -> bool:
    """Whether this machine (key ``key_id``) sealed a log at ``folder``."""
    try:
        with _note_path(folder).open("rb") as handle:
            note = json.loads(handle.read(1000))
    except (OSError, ValueError):
        return False
    return isinstance(note, dict) and note.get("key_id") == key_id
