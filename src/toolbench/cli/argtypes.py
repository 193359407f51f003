"""argparse value types for every ``toolbench`` flag: a bad value is refused while the
command line is read, as one line naming the flag and what it takes, before any work starts.

Each type is a callable that argparse calls with the text the user typed. They raise
``ArgumentTypeError`` with a short reason; the parser prefixes the flag's name. Path types
check only what can be told without side effects (empty, a missing input, a file where a folder
is wanted, a path under a regular file); whether a folder can really be written is found out by
``writable_folder`` when the command is about to use it.
"""

from __future__ import annotations

import argparse
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from toolbench.errors import UserError

SEED_MAX = 2**32 - 1  # numpy's and most servers' range; torch and random take it too


def int_at_least(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """Whole numbers in [minimum, maximum]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} must be at least {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text!r} must be at most {maximum}")
        return value

    parse.__name__ = f"int_at_least_{minimum}"
    return parse


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)
seed = int_at_least(0, SEED_MAX)


def port(text: str) -> int:
    """A TCP port; 0 asks the system for a free one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text}: a port is 0 to 65535 (0: any free port)")
    return value


def _number(text: str) -> float:
    """A finite float: nan compares false with every bound and inf is no number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def seconds(text: str) -> float:
    """A time limit: more than 0 seconds (there is no 'no limit' value to fall into by 0)."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be more than 0 seconds")
    return value


def float_between(low: float, high: float, what: str = "") -> Callable[[str], float]:
    """Finite numbers in [low, high]; ``what`` names the quantity in the message."""

    def parse(text: str) -> float:
        value = _number(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{text!r}: {what + ' is ' if what else 'must be '}between {low:g} and {high:g}"
            )
        return value

    parse.__name__ = "float_between"
    return parse


temperature = float_between(0.0, 2.0)
similarity = float_between(-1.0, 1.0, "a cosine similarity")


def text(value: str) -> str:
    """Any non-blank text: an empty value is never what a flag means (the default type of
    every flag that takes a value, see ``main._Parser``)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty value; give one")
    return value


def url(value: str) -> str:
    """An http(s) URL with a host, e.g. http://localhost:8000/v1."""
    from urllib.parse import urlsplit

    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an http(s) URL; e.g. http://localhost:8000/v1"
        )
    return value.strip()


PathKind = Literal["file", "folder", "path", "new_file", "new_folder"]


class PathArg:
    """A path the command reads (``file``, ``folder``, ``path``: either, all must exist) or
    writes (``new_file``, ``new_folder``: may exist as the same kind; whatever is missing must
    be creatable, so no part of it may be a regular file). ``kind`` is public so the option
    sweep test knows which unusable paths to try."""

    def __init__(self, kind: PathKind) -> None:
        self.kind = kind
        self.__name__ = f"path ({kind})"

    def __call__(self, value: str) -> Path:
        if not value.strip():
            raise argparse.ArgumentTypeError("an empty path; give a file or folder name")
        path = Path(value).expanduser()
        if "\0" in value:
            raise argparse.ArgumentTypeError(f"{value!r}: a path cannot hold a NUL character")
        if self.kind in ("file", "folder", "path"):
            self._check_input(value, path)
        else:
            self._check_output(value, path)
        return path

    def _check_input(self, value: str, path: Path) -> None:
        try:
            exists, is_dir = path.exists(), path.is_dir()
        except OSError as exc:  # e.g. a name too long
            raise argparse.ArgumentTypeError(f"{value}: cannot be read ({exc.strerror})") from None
        if not exists:
            blocker = _file_above(path)
            where = f" ({blocker} is a file)" if blocker is not None else ""
            what = {"file": "file", "folder": "folder"}.get(self.kind, "file or folder")
            raise argparse.ArgumentTypeError(f"{value}: no such {what}{where}")
        if self.kind == "file" and is_dir:
            raise argparse.ArgumentTypeError(f"{value}: is a folder; give a file")
        if self.kind == "folder" and not is_dir:
            raise argparse.ArgumentTypeError(f"{value}: is not a folder")

    def _check_output(self, value: str, path: Path) -> None:
        try:
            is_dir, exists = path.is_dir(), path.exists()
        except OSError as exc:
            raise argparse.ArgumentTypeError(f"{value}: unusable ({exc.strerror})") from None
        if self.kind == "new_file" and is_dir:
            raise argparse.ArgumentTypeError(f"{value}: is a folder; give a file name")
        if self.kind == "new_folder" and exists and not is_dir:
            raise argparse.ArgumentTypeError(f"{value}: is a file; give a folder")
        blocker = _file_above(path)
        if blocker is not None:
            raise argparse.ArgumentTypeError(
                f"{value}: cannot be created, {blocker} is a file; give a path in a folder"
            )


def _file_above(path: Path) -> Path | None:
    """The first existing ancestor of ``path`` if it is not a folder (so nothing below it can
    exist or be made), else None."""
    for parent in path.absolute().parents:
        try:
            if parent.exists():
                return None if parent.is_dir() else parent
        except OSError:
            return parent
    return None


def writable_folder(path: Path, source: str, fix: str = "give a folder you can write") -> Path:
    """``path`` created if needed and proved writable by writing a file in it, else a
    one-line ``UserError`` naming where it came from (``source``: a flag or variable)."""
    if path.exists() and not path.is_dir():
        raise UserError(f"{source} {path}: is a file; {fix}")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".toolbench-probe-"):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UserError(f"{source} {path}: cannot write there ({reason}); {fix}") from None
    return path
