"""``serve_log``: while serving, what the libraries log is one line per kind on stderr and
whole (tracebacks included) only in ``--log FILE``."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import warnings
from pathlib import Path

import pytest

from toolbench.cli.serve_log import incidents_logged, open_log
from toolbench.errors import UserError


def _raised(error: BaseException) -> BaseException:
    try:
        raise error
    except BaseException as caught:
        return caught


def test_each_kind_is_one_line_and_the_file_has_every_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "serve.log"
    with open_log(path, "test") as log, incidents_logged(log, path):
        for _ in range(3):
            logging.getLogger("uvicorn.error").error(
                "Exception in ASGI application", exc_info=_raised(ConnectionResetError("gone"))
            )
        logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
        logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
        logging.getLogger("asyncio").error("stopped", exc_info=_raised(asyncio.CancelledError()))
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert "Exception in ASGI application (ConnectionResetError: gone)" in lines[0]
    assert str(path) in lines[0] and "Invalid HTTP request received." in lines[1]
    written = path.read_text()
    assert written.count("Traceback") == 4  # three resets and the cancel: in the file only
    assert written.count("Invalid HTTP request") == 2


def test_without_a_file_the_details_are_dropped(capsys: pytest.CaptureFixture[str]) -> None:
    with incidents_logged(None, None):
        logging.getLogger("mcp").error("boom", exc_info=_raised(ValueError("x")))
        logging.getLogger("mcp").info("chatter")  # below warnings: not a word
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "not shown" in err


def test_threads_finalizers_and_warnings_are_incidents_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def fails() -> None:
        raise RuntimeError("in a thread")

    with incidents_logged(None, None):
        thread = threading.Thread(target=fails, name="reader")
        thread.start()
        thread.join()
        sys.unraisablehook(
            type(
                "U",
                (),
                {
                    "exc_type": OSError,
                    "exc_value": OSError("closed"),
                    "exc_traceback": None,
                    "err_msg": "Exception ignored in",
                    "object": "a finalizer",
                },
            )()
        )
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.warn("a resource was left open", UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("\n") == 3, err
    assert "thread reader ended" in err and "a finalizer" in err and "left open" in err


def test_everything_is_put_back_after(capsys: pytest.CaptureFixture[str]) -> None:
    root = logging.getLogger()
    before = (root.handlers[:], root.level, threading.excepthook, sys.unraisablehook)
    library = logging.getLogger("a_library_with_its_own_handler")
    own = logging.StreamHandler(sys.stderr)
    library.handlers, library.propagate = [own], False
    try:
        with incidents_logged(None, None):
            assert root.handlers != before[0]
            library.error("said once, by the incidents handler")
        assert (root.handlers, root.level, threading.excepthook, sys.unraisablehook) == before
        assert (library.handlers, library.propagate) == ([own], False)
    finally:
        library.handlers, library.propagate = [], True
    assert capsys.readouterr().err.count("said once") == 1


def test_a_log_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with (
        pytest.raises(UserError, match=r"--log .*: cannot write it"),
        open_log(blocker / "serve.log", "test"),
    ):
        pass


def test_the_log_is_appended_to_with_a_line_per_start(tmp_path: Path) -> None:
    path = tmp_path / "serve.log"
    for _ in range(2):
        with open_log(path, "toolbench serve x --mcp"):
            pass
    assert path.read_text().count("toolbench serve x --mcp (process") == 2
