"""What a serving process logs, kept off the terminal: one line per kind of incident on
stderr, the whole record (traceback included) only in ``--log FILE``.

A server facing hostile clients meets trouble that is theirs, not its own: a body cut off, a
client gone mid-request, half a request and nothing more. The SDK, uvicorn, anyio and asyncio
each log such an incident with a traceback of their insides, once per request; on the
terminal of the person running the server that reads as a crash. So while serving, every
log record of the process (and every exception a thread or a finalizer would print, and
every warning) goes here: written whole to the log file when there is one, and said on
stderr in one line the first time its kind (logger, exception type or message) is seen.
A cancelled request is the server's own stop at work: in the file only.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from toolbench.errors import UserError

#: The most characters of a record's message its line on stderr shows.
MAX_LINE_CHARS = 300


@contextlib.contextmanager
def open_log(path: Path | None, title: str) -> Iterator[TextIO | None]:
    """``--log FILE`` opened for appending (a server started per session by its client keeps
    every session's log), with a line naming this start; a one-line ``UserError`` if it
    cannot be written. None without the flag."""
    if path is None:
        yield None
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        file = path.open("a", encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"--log {path}: cannot write it ({exc.strerror}); pick another file"
        ) from None
    with file:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        file.write(f"=== {stamp} {title} (process {os.getpid()}) started\n")
        file.flush()
        yield file


class _Incidents(logging.Handler):
    """Every record to the file; on stderr one line per kind, the first time it is seen."""

    def __init__(self, file: TextIO | None, path: Path | None) -> None:
        super().__init__(logging.WARNING)
        self.file, self.path = file, path
        self.seen: set[tuple[str, str]] = set()
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(Exception):  # logging must never be what breaks the server
            if self.file is not None:
                self.file.write(self.format(record) + "\n")
                self.file.flush()
            error = record.exc_info[1] if record.exc_info else None
            kind = (record.name, type(error).__name__ if error is not None else str(record.msg))
            if kind in self.seen or type(error).__name__ == "CancelledError":
                return
            self.seen.add(kind)
            print(self.line(record, error), file=sys.stderr, flush=True)

    def line(self, record: logging.LogRecord, error: BaseException | None) -> str:
        words = " ".join(record.getMessage().split())[:MAX_LINE_CHARS]
        if error is not None:
            said = " ".join(str(error).split())[:MAX_LINE_CHARS]
            words += f" ({type(error).__name__}{': ' + said if said else ''})"
        where = (
            f"; the details, and any more like it, are in {self.path}"
            if self.path is not None
            else "; more like it are not shown (--log FILE keeps them)"
        )
        return f"toolbench serve: {record.name}: {words}{where}"


@contextlib.contextmanager
def incidents_logged(file: TextIO | None, path: Path | None) -> Iterator[None]:
    """Inside the block the process's log records, threads' uncaught exceptions, finalizers'
    ignored exceptions and warnings all go to one ``_Incidents`` handler; put back after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    thread_hook, unraisable_hook = threading.excepthook, sys.unraisablehook
    own = _own_handlers_lifted()  # a library's own stderr handler (uvicorn's, say) too
    root.handlers = [_Incidents(file, path)]
    root.setLevel(logging.WARNING)
    logging.captureWarnings(True)
    threading.excepthook = _thread_died
    sys.unraisablehook = _unraisable
    try:
        yield
    finally:
        logging.captureWarnings(False)
        root.handlers = handlers
        root.setLevel(level)
        for logger, (its_handlers, propagate) in own.items():
            logger.handlers, logger.propagate = its_handlers, propagate
        threading.excepthook, sys.unraisablehook = thread_hook, unraisable_hook


def _own_handlers_lifted() -> dict[logging.Logger, tuple[list[logging.Handler], bool]]:
    """Every configured logger's own handlers taken off and its records sent up to the root,
    and what it had, to put back."""
    lifted = {}
    for logger in list(logging.root.manager.loggerDict.values()):
        if isinstance(logger, logging.Logger) and (logger.handlers or not logger.propagate):
            lifted[logger] = (logger.handlers[:], logger.propagate)
            logger.handlers, logger.propagate = [], True
    return lifted


def _thread_died(args: Any) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "?"
    logging.getLogger("threading").error(
        "thread %s ended by an exception",
        name,
        exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
    )


def _unraisable(unraisable: Any) -> None:
    logging.getLogger("unraisable").warning(
        "%s %r",
        unraisable.err_msg or "Exception ignored in",
        unraisable.object,
        exc_info=(unraisable.exc_type, unraisable.exc_value, unraisable.exc_traceback),
    )
