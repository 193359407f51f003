"""argparse value types for every ``toolbench`` flag: a bad value is refused while the
command line is read, as one line naming the flag and what it takes, before any work starts.

Each type is a callable that argparse calls with the text the user typed; it raises
``ArgumentTypeError`` with a short reason, which the parser prefixes with the flag's name.
The types are small classes rather than closures so that their bounds and kinds can be read
back: the option sweep test (tests/cli/test_option_sweep.py) derives the bad values it tries
for each flag from them, so a new flag is swept without anyone listing it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from toolbench.errors import UserError
from toolbench.models.args import parse_pair

SEED_MAX = 2**32 - 1  # numpy's and most servers' range; torch and random take it too


class IntRange:
    """Whole numbers in [minimum, maximum] (no maximum: unbounded)."""

    def __init__(
        self, minimum: int, maximum: int | None = None, what: str = "whole number"
    ) -> None:
        self.minimum, self.maximum, self.what = minimum, maximum, what
        self.__name__ = what  # argparse names the type in some of its own messages

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {self.what}") from None
        if value < self.minimum or (self.maximum is not None and value > self.maximum):
            span = (
                f"at least {self.minimum}"
                if self.maximum is None
                else f"{self.minimum} to {self.maximum}"
            )
            raise argparse.ArgumentTypeError(f"{text!r}: must be {span}")
        return value


class FloatRange:
    """Finite numbers in [low, high] (``low_open``: above low, not equal to it). nan compares
    false with every bound and inf is no number of seconds, so both are refused."""

    def __init__(
        self, low: float, high: float | None = None, *, low_open: bool = False, unit: str = ""
    ) -> None:
        self.low, self.high, self.low_open, self.unit = low, high, low_open, unit
        self.__name__ = "number"

    def __call__(self, text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        too_low = value <= self.low if self.low_open else value < self.low
        if too_low or (self.high is not None and value > self.high):
            raise argparse.ArgumentTypeError(f"{text!r}: must be {self._span()}")
        return value

    def _span(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if self.high is None:
            return f"{'more than' if self.low_open else 'at least'} {self.low:g}{unit}"
        return f"between {self.low:g} and {self.high:g}{unit}"


positive_int = IntRange(1)
non_negative_int = IntRange(0)
seed = IntRange(0, SEED_MAX)
port = IntRange(0, 65535, "port number (0: any free port)")
seconds = FloatRange(0.0, low_open=True, unit="seconds")  # 0 is not 'no limit'
temperature = FloatRange(0.0, 2.0)
similarity = FloatRange(-1.0, 1.0, unit="(a cosine similarity)")


def text(value: str) -> str:
    """Any non-blank text: an empty value is never what a flag means (the type of every flag
    that takes free text, see ``main._values_are_never_empty``)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty value; give one")
    return value


_STOP_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def stop_sequence(value: str) -> str:
    r"""A stop sequence, with ``\n``, ``\t``, ``\r`` and ``\\`` read as the characters
    they name (a newline is the most common stop and the hardest to type); other backslashes
    stay as they are. Empty is refused: ``--no-stop`` is how to send none."""
    out: list[str] = []
    index = 0
    while index < len(value):
        char = value[index]
        following = value[index + 1 : index + 2]
        if char == "\\" and following in _STOP_ESCAPES:
            out.append(_STOP_ESCAPES[following])
            index += 2
            continue
        out.append(char)
        index += 1
    if not out:
        raise argparse.ArgumentTypeError("an empty stop sequence; use --no-stop to send none")
    return "".join(out)


def hf_device(value: str) -> str:
    """``auto``, ``cpu``, ``mps``, ``cuda`` or ``cuda:N``."""
    text_value = value.strip().lower()
    kind, colon, index = text_value.partition(":")
    if text_value in ("auto", "cpu", "mps", "cuda") or (
        kind == "cuda" and colon and index.isdigit()
    ):
        return text_value
    raise argparse.ArgumentTypeError("use auto, cpu, mps, cuda or cuda:N (e.g. cuda:1)")


def model_arg(value: str) -> tuple[str, str]:
    """``KEY=VALUE`` -> (key, value); the backend's schema reads the value (``models.args``)."""
    try:
        return parse_pair(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def task_option(value: str) -> tuple[str, str, Any]:
    """``TASK.NAME=VALUE`` -> (task, option, value); VALUE is read as JSON when it is JSON
    (``2``, ``true``, ``["a"]``) and kept as text otherwise (``yes`` stays ``"yes"``)."""
    target, equals, raw = value.partition("=")
    task, dot, name = target.strip().partition(".")
    if not (equals and dot and task and name.isidentifier()):
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected TASK.NAME=VALUE, e.g. web_shop.history=2"
        )
    try:
        parsed: Any = json.loads(raw)
    except ValueError:
        parsed = raw
    return task, name, parsed


def role(value: str) -> tuple[str, str]:
    """``ROLE=SPEC`` -> (role, model spec), e.g. ``judge=openai:gpt-4o-mini``."""
    name, equals, spec = value.partition("=")
    if not (equals and name.strip().isidentifier() and spec.strip()):
        raise argparse.ArgumentTypeError(f"{value!r}: expected ROLE=SPEC, e.g. judge=oracle")
    return name.strip(), spec.strip()


def url(value: str) -> str:
    """An http(s) URL with a host, e.g. http://localhost:8000/v1."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not an http(s) URL; e.g. http://localhost:8000/v1"
        )
    return value.strip()


PathKind = Literal["file", "folder", "path", "new_file", "new_folder"]


class PathArg:
    """A path the command reads (``file``, ``folder``, ``path``: either; each must exist) or
    writes (``new_file``, ``new_folder``: may exist as the same kind). A path to write is
    proved writable by creating and removing a scratch file in it or in its nearest existing
    folder, so a path under a file, a read-only or unwritable place, is refused here."""

    def __init__(self, kind: PathKind) -> None:
        self.kind = kind
        self.__name__ = f"path ({kind})"

    def __call__(self, value: str) -> Path:
        if not value.strip():
            raise argparse.ArgumentTypeError("an empty path; give a file or folder name")
        if "\0" in value:
            raise argparse.ArgumentTypeError(f"{value!r}: a path cannot hold a NUL character")
        path = Path(value).expanduser()
        try:
            if self.kind in ("file", "folder", "path"):
                self._check_input(value, path)
            else:
                self._check_output(value, path)
        except OSError as exc:  # a name too long, a loop of links...
            raise argparse.ArgumentTypeError(f"{value}: unusable ({exc.strerror})") from None
        return path

    def _check_input(self, value: str, path: Path) -> None:
        if not path.exists():
            blocker = _file_above(path)
            where = f" ({blocker} is a file)" if blocker is not None else ""
            what = {"file": "file", "folder": "folder"}.get(self.kind, "file or folder")
            raise argparse.ArgumentTypeError(f"{value}: no such {what}{where}")
        if self.kind == "file" and path.is_dir():
            raise argparse.ArgumentTypeError(f"{value}: is a folder; give a file")
        if self.kind == "folder" and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{value}: is not a folder")

    def _check_output(self, value: str, path: Path) -> None:
        if self.kind == "new_file" and path.is_dir():
            raise argparse.ArgumentTypeError(f"{value}: is a folder; give a file name")
        if self.kind == "new_folder" and path.exists() and not path.is_dir():
            raise argparse.ArgumentTypeError(f"{value}: is a file; give a folder")
        blocker = _file_above(path)
        if blocker is not None:
            raise argparse.ArgumentTypeError(
                f"{value}: cannot be created, {blocker} is a file; give a path in a folder"
            )
        problem = _cannot_write(path)
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{value}: cannot write there ({problem})")


def _file_above(path: Path) -> Path | None:
    """The first existing ancestor of ``path`` if it is not a folder (so nothing below it can
    exist or be made), else None."""
    for parent in path.absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def _cannot_write(path: Path) -> str | None:
    """Why nothing can be written at ``path`` (an existing file: opened for appending, which
    changes nothing; else a scratch file in the path or its nearest existing folder), or None.
    Root passes permission checks, so trying is the only answer that holds for everyone."""
    target = path.absolute()
    if target.is_file():
        try:
            with target.open("ab"):
                return None
        except OSError as exc:
            return exc.strerror or type(exc).__name__
    folder = next((p for p in (target, *target.parents) if p.is_dir()), Path(os.sep))
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".toolbench-probe-"):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


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
