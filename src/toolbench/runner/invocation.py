"""The command line that started this run, as run.json records it and as a resume line shows it.

``toolbench.cli.main`` names its arguments here: they are what the user typed, also when the CLI
is called in-process (tests, notebooks), where ``sys.argv`` is some other program's.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

SECRET_FLAGS = ("--api-key",)
HIDDEN = "***"

_arguments: list[str] | None = None


def set_arguments(arguments: Sequence[str]) -> None:
    """The arguments of the ``toolbench`` invocation running in this process."""
    global _arguments
    _arguments = [str(a) for a in arguments]


def recorded_command() -> list[str]:
    """``["toolbench", *arguments]`` with secrets replaced: run folders get shared."""
    arguments = _arguments if _arguments is not None else sys.argv[1:]
    return redact_command(["toolbench", *arguments])


def redact_command(argv: list[str]) -> list[str]:
    """``argv`` with the value of every secret flag replaced by ``***``."""
    redacted: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            redacted.append(HIDDEN)
            hide_next = False
        elif arg in SECRET_FLAGS:
            redacted.append(arg)
            hide_next = True
        elif arg.startswith(tuple(f"{flag}=" for flag in SECRET_FLAGS)):
            redacted.append(arg.split("=", 1)[0] + "=" + HIDDEN)
        else:
            redacted.append(arg)
    return redacted


def resume_command(command: object, folder: Path) -> str | None:
    """The shell line that continues the run in ``folder``: its recorded command, pointed at
    the folder with ``--out`` (None when run.json holds no usable command). A hidden secret is
    left as ``***`` for the user to give again."""
    if not isinstance(command, list) or len(command) < 2:
        return None
    if not all(isinstance(part, str) for part in command):
        return None
    arguments = [part[:500] for part in command[1:60]]
    if "--out" not in arguments and not any(a.startswith("--out=") for a in arguments):
        arguments += ["--out", str(folder)]
    return shlex.join(["toolbench", *arguments])
