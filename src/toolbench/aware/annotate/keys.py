"""Keyboard input for the terminal annotation: single keys on a terminal, lines from a pipe.

Deciding hundreds of instances is one keystroke each, so on a TTY a key acts without Enter
(raw mode just for the read, restored in ``finally`` so a crash never leaves the terminal
broken; Ctrl-C and Ctrl-D read as quit). Piped input is read a line at a time, which is what
scripts and tests can produce: one key per line, and free text (reason numbers, a note) as
whole lines either way.
"""

from __future__ import annotations

import os
from typing import TextIO

from rich.console import Console

QUIT = "q"
_QUIT_BYTES = {"\x03", "\x04"}  # Ctrl-C, Ctrl-D in raw mode


class EndOfInput(Exception):
    """Input ended (EOF) while a line was expected: the session ends as if 'q' was pressed."""


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


class KeyInput:
    """Reads keys and lines from ``stream``, prompting on ``console``."""

    def __init__(self, stream: TextIO, console: Console) -> None:
        self.stream = stream
        self.console = console
        self.tty = _is_tty(stream)
        if self.tty:
            try:
                import termios  # noqa: F401  (POSIX only; elsewhere keys are read as lines)
                import tty  # noqa: F401
            except ImportError:
                self.tty = False

    def key(self, prompt: str) -> str:
        """One key, lower-cased; ``"q"`` at end of input; ``""`` for nothing usable."""
        self._say(prompt, end="")
        if self.tty:
            key = self._raw_key()
            self._say(key if key.isprintable() else "")
            return key
        line = self.stream.readline()
        text = line.strip().lower()
        self._say(text)  # the answer ends the prompt line, so a transcript reads naturally
        return text[:1] if line else QUIT

    def _raw_key(self) -> str:
        import termios  # POSIX only: here, where __init__ found them importable
        import tty  # deferred: POSIX only, as termios above

        fd = self.stream.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setraw(fd, termios.TCSANOW)  # keep keys typed ahead of the prompt
            data = os.read(fd, 32)  # an arrow key's escape sequence arrives in one read
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        text = data.decode("utf-8", errors="replace")
        if not text or text[0] in _QUIT_BYTES:
            return QUIT
        if len(text) > 1 and text[0] == "\x1b":
            return ""  # arrow/function keys mean nothing here
        return text[0].lower()

    def line(self, prompt: str) -> str:
        """One line of text without its newline; raises ``EndOfInput`` at end of input."""
        self._say(prompt, end="")
        line = self.stream.readline()
        text = line.rstrip("\r\n")
        if not self.tty:
            self._say(text)  # a terminal echoes typed text itself; a pipe does not
        if not line:
            raise EndOfInput
        return text

    def _say(self, text: str, end: str = "\n") -> None:
        # Prompts and answers are plain text: "[a]ccept" must not be read as rich markup.
        self.console.print(text, end=end, markup=False, highlight=False)
