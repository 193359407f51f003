r"""Getting the program out of a model's reply. Parsing only: nothing here executes anything.

Completion-mode replies are taken as they are (stripped), as the original did. Chat models wrap
code in fences and prose, so for them we take the first fenced block, or else drop leading and
trailing prose lines until what remains parses as Python.

This runs on the event loop for every reply, and replies are written by the thing under test,
so the work is bounded whatever the text is. ``ast.parse`` on every window of lines would let a
reply of a few kilobytes of ``"(\n"`` stall the run, and a regular expression for the fence
header would be quadratic in runs of spaces. So:

- the fence is found by a linear scan (``str.find``), with a short header line (a reply of
  backticks costs one scan, not a scan to the next line break per backtick);
- at most ``MAX_PARSE_CHARS`` characters are ever handed to the parser at once, at most
  ``MAX_PARSE_ATTEMPTS`` times per reply, and at most ``PARSE_BUDGET_CHARS`` in total (the
  parser takes ~1 ms per 1,000 characters at worst, so a reply costs tens of milliseconds at
  most, and a normal one well under a millisecond);
- the parser's warnings (``SyntaxWarning`` for "1x") are silenced: model text must not print;
- prose lines are recognised by a cheap per-line classifier, not by parsing, so trimming
  them costs one pass over at most ``MAX_LINES`` lines;
- any failure of the parser (``SyntaxError``, ``ValueError`` for NUL bytes or lone surrogates,
  ``RecursionError`` and ``MemoryError`` for deep nesting) just means "does not parse".

Parsing is also the largest per-reply cost of a cheap task (50-100 us for a 200-character
program on a shared 2-core machine), and the answer depends only on the reply, so short
replies are remembered (``extract_program``).

The result is always a substring of the reply (stripped), so nothing is invented.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from collections.abc import Callable

FENCE = "```"
# A fence's language tag line ("```python") is short; a longer line is not a fence header.
MAX_HEADER_CHARS = 64
_HEADER = re.compile(r"[A-Za-z0-9_+-]*")
# Above this size a candidate is not parsed (a hostile reply must not make extraction slow).
MAX_PARSE_CHARS = 20_000
MAX_PARSE_ATTEMPTS = 40
PARSE_BUDGET_CHARS = 2 * MAX_PARSE_CHARS
# Replies with more lines than this are taken whole: no program that long is wrapped in prose.
MAX_LINES = 2_000
# Trimming tries the first and last few code-looking lines as window ends (prose that happens
# to contain "(" or "=" at either end of the reply).
EDGE_LINES = 6
# Statements that look like a sentence's first word but are code ("import os", "return x").
_KEYWORD = re.compile(
    r"(?:import|from|for|while|if|elif|else|with|def|class|return|try|except|finally|pass|"
    r"raise|assert|del|global|nonlocal|async|await|break|continue|lambda|yield|print)\b"
)
_CODE_CHARS = frozenset("()[]{}=#")

# Replies up to this size are remembered (see ``extract_program``): 512 of them hold at most
# a few megabytes, and a program wrapped in a reply is rarely longer.
MAX_REMEMBERED_CHARS = 4_000
REMEMBERED_REPLIES = 512


# The parser in use; tests replace it to count attempts.
Parser = Callable[[str], object]
parse: Parser = ast.parse


def extract_program(text: str) -> str:
    """The program in a reply: a fenced block if there is one, else the parseable core.

    The answer depends only on the reply (and the parser in use), so short replies are
    remembered: every epoch of a deterministic model, and every turn of an episode that
    repeats an action, would otherwise parse the same text again."""
    text = text.strip()
    if len(text) <= MAX_REMEMBERED_CHARS:
        return _remembered(text, parse)
    return _extract(text)


@functools.lru_cache(maxsize=REMEMBERED_REPLIES)
def _remembered(text: str, parser: Parser) -> str:
    """``_extract`` memoised; ``parser`` is part of the key so that a test's replaced parser
    sees every attempt (``lru_cache`` is thread-safe and keeps the newest replies)."""
    return _extract(text)


def _extract(text: str) -> str:
    fenced = _first_fenced_block(text)
    if fenced is not None:
        return fenced.strip()
    if len(text) > MAX_PARSE_CHARS:
        return text  # too long to be worth parsing; the sandbox refuses oversized programs
    attempts = _Attempts()
    if attempts.parses(text):
        return text
    core = _trimmed_core(text, attempts)
    return text if core is None else core


def _first_fenced_block(text: str) -> str | None:
    """The body of the first ```lang fence (to the closing fence or the end), in linear time:
    the line break ending a fence's header is found once for all the fences before it (a run
    of backticks is a fence at every position, and a scan per fence to the next line break
    would be quadratic), and fences too far before it to have a short header are skipped in
    one step."""
    start = text.find(FENCE)
    newline = -1
    while start != -1:
        after = start + len(FENCE)
        if newline < after:  # else ``newline`` is still the first line break after ``after``
            newline = text.find("\n", after)
            if newline == -1:
                return None  # no line ends after this point: no later fence has a header
        if newline - after > MAX_HEADER_CHARS:  # so has every fence starting before this one
            start = text.find(FENCE, newline - MAX_HEADER_CHARS - len(FENCE))
            continue
        if _HEADER.fullmatch(text[after:newline].strip(" \t")):
            end = text.find(FENCE, newline + 1)
            return text[newline + 1 : end if end != -1 else len(text)]
        start = text.find(FENCE, start + 1)
    return None


class _Attempts:
    """Counts parse attempts and characters parsed against the per-reply caps."""

    def __init__(self) -> None:
        self.count = 0
        self.chars = 0

    def parses(self, source: str) -> bool:
        if len(source) > MAX_PARSE_CHARS or self.exhausted(len(source)):
            return False
        self.count += 1
        self.chars += len(source)
        try:
            with warnings.catch_warnings():  # "invalid decimal literal" etc. would reach stderr
                warnings.simplefilter("ignore")
                parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return False
        return True

    def exhausted(self, size: int = 0) -> bool:
        return self.count >= MAX_PARSE_ATTEMPTS or self.chars + size > PARSE_BUDGET_CHARS


def _trimmed_core(text: str, attempts: _Attempts) -> str | None:
    """Drop prose lines from both ends: first the lines the classifier calls prose (one parse),
    then windows between the first and last few code-looking lines, earliest start and
    longest window first, as long as the caps allow."""
    starts = _line_starts(text)
    if len(starts) > MAX_LINES:
        return None
    bounds = [*starts, len(text) + 1]
    code = [i for i in range(len(starts)) if _is_code_line(text[bounds[i] : bounds[i + 1] - 1])]
    if not code:
        return None
    tried = {text}
    firsts, lasts = code[:EDGE_LINES], code[::-1][:EDGE_LINES]
    windows = [(code[0], code[-1])] + [(a, b) for a in firsts for b in lasts if a <= b]
    for first, last in windows:
        if attempts.exhausted():
            break
        candidate = text[bounds[first] : bounds[last + 1] - 1].strip()
        if candidate in tried or not _looks_like_code(candidate):
            continue
        tried.add(candidate)
        if attempts.parses(candidate):
            return candidate
    return None


def _line_starts(text: str) -> list[int]:
    r"""Offsets where each "\n"-separated line begins (Python's own idea of a line break)."""
    starts = [0]
    position = text.find("\n")
    while position != -1 and len(starts) <= MAX_LINES:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


def _is_code_line(line: str) -> bool:
    """Cheap guess: could this line belong to a program? Prose ("Here is the code:", "This
    searches homes.") has words and sentence punctuation but no brackets or assignments."""
    stripped = line.strip()
    if not stripped:
        return False
    if not _CODE_CHARS.isdisjoint(stripped) or _KEYWORD.match(stripped):
        return True
    sentence = " " in stripped or stripped[-1] in ".!?:;,"
    return not sentence


def _looks_like_code(source: str) -> bool:
    """Reject prose that happens to parse (e.g. a single word is a valid expression)."""
    return "(" in source or "=" in source
