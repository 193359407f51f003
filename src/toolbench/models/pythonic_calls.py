"""Keyword calls with Python-literal arguments (``get_weather(city='Paris', days=3)``), read
without ``eval``: the pythonic tool-call format of Llama 3.2/4 and Mistral small models.

``ast.literal_eval`` is not used on model text because the parser recurses on nesting (deep
brackets reach Python's recursion limit or worse); this reader takes the literals a call's
arguments need, nested at most MAX_DEPTH deep, and nothing else. It only reads forward, so one
attempt costs time linear in what it reads (``toolcalls`` bounds the attempts).
"""

from __future__ import annotations

import re
from typing import Any

#: Deepest nesting of lists/dicts accepted inside one call.
MAX_DEPTH = 32
#: Longest number literal read (int() refuses far longer ones anyway).
MAX_NUMBER = 400
#: A tool's name as a call writes it.
CALL_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,255}")
_KEYWORD = re.compile(r"[A-Za-z_]\w{0,255}")


class NotACall(Exception):
    """The text stopped being a well-formed call (control flow of the readers)."""


_ESCAPES = {
    "\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r",
    "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\n": "",
}  # fmt: skip
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}
_NUMBER = re.compile(r"[-+]?(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][-+]?\d+)?")
_CONSTANTS: dict[str, Any] = {
    "True": True, "False": False, "None": None,
    # JSON's spellings, which models mix into Python calls.
    "true": True, "false": False, "null": None,
}  # fmt: skip
#: Runs of characters that a string between each kind of quotes reads as they are.
_PLAIN = {
    "'": re.compile(r"[^'\\\n]+"),
    '"': re.compile(r'[^"\\\n]+'),
    "'''": re.compile(r"[^'\\]+"),
    '"""': re.compile(r'[^"\\]+'),
}


class PythonCallReader:
    """Keyword calls whose arguments are Python literals, by recursive descent.

    Reads strings (quotes, triple quotes, escapes), numbers, True/False/None, lists, tuples
    (as lists) and dicts with string keys, nested at most MAX_DEPTH deep. It never goes back:
    where it stops, the text stopped being a call.
    """

    def __init__(self, text: str, known: frozenset[str]) -> None:
        self.text = text
        self.known = known
        self.pos = 0

    def call_list(self, start: int) -> list[tuple[str, dict[str, Any]]]:
        """``[call, call, ...]`` opening at ``start``; ``pos`` ends after the ``]``."""
        self.pos = start + 1
        calls = []
        while True:
            self.space()
            calls.append(self.call(self.pos))
            self.space()
            if self.take(","):
                self.space()
                if self.take("]"):
                    return calls
            elif self.take("]"):
                return calls
            else:
                raise NotACall("expected ',' or ']'")

    def call(self, start: int) -> tuple[str, dict[str, Any]]:
        """``name(key=value, ...)`` with a known name; positional arguments are not calls."""
        match = CALL_NAME.match(self.text, start)
        if match is None or match.group() not in self.known:
            raise NotACall("not a known tool")
        self.pos = match.end()
        self.space()
        self.expect("(")
        arguments: dict[str, Any] = {}
        while True:
            self.space()
            if self.take(")"):
                return match.group(), arguments
            keyword = _KEYWORD.match(self.text, self.pos)
            if keyword is None or keyword.group() in arguments:
                raise NotACall("expected a keyword argument")
            self.pos = keyword.end()
            self.space()
            self.expect("=")
            self.space()
            arguments[keyword.group()] = self.value(1)
            self.space()
            if not self.take(",") and not self.take(")"):
                raise NotACall("expected ',' or ')'")
            if self.text[self.pos - 1] == ")":
                return match.group(), arguments

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise NotACall("nested too deep")
        char = self.text[self.pos : self.pos + 1]
        if char in ("'", '"'):
            return self.string()
        if char == "[":
            self.pos += 1
            return self.items("]", depth)
        if char == "(":
            self.pos += 1
            return self.parenthesised(depth)
        if char == "{":
            self.pos += 1
            return self.mapping(depth)
        if char and (char in "-+." or char.isdigit()):
            return self.number()
        word = _KEYWORD.match(self.text, self.pos)
        if word is None or word.group() not in _CONSTANTS:
            raise NotACall("not a literal")
        self.pos = word.end()
        return _CONSTANTS[word.group()]

    def items(self, close: str, depth: int) -> list[Any]:
        """Values up to ``close`` (a trailing comma allowed); ``pos`` is after the opener."""
        values: list[Any] = []
        while True:
            self.space()
            if self.take(close):
                return values
            values.append(self.value(depth + 1))
            self.space()
            if not self.take(","):
                self.expect(close)
                return values

    def parenthesised(self, depth: int) -> Any:
        """``()`` and ``(a, b)`` are tuples (lists in JSON), ``(a)`` is ``a``."""
        self.space()
        if self.take(")"):
            return []
        first = self.value(depth + 1)
        self.space()
        if self.take(")"):
            return first
        self.expect(",")
        return [first, *self.items(")", depth)]

    def mapping(self, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while True:
            self.space()
            if self.take("}"):
                return result
            key = self.value(depth + 1)
            if not isinstance(key, str):
                raise NotACall("a dict key that is not a string")
            self.space()
            self.expect(":")
            self.space()
            result[key] = self.value(depth + 1)
            self.space()
            if not self.take(","):
                self.expect("}")
                return result

    def string(self) -> str:
        text, quote = self.text, self.text[self.pos]
        delimiter = quote * 3 if text.startswith(quote * 3, self.pos) else quote
        self.pos += len(delimiter)
        pieces: list[str] = []
        while self.pos < len(text):
            if text.startswith(delimiter, self.pos):
                self.pos += len(delimiter)
                return "".join(pieces)
            char = text[self.pos]
            if char == "\\":
                pieces.append(self.escape())
            elif char == "\n" and len(delimiter) == 1:
                raise NotACall("newline in a string")
            else:  # a run of plain characters (or one quote of a triple-quoted string)
                run = _PLAIN[delimiter].match(text, self.pos + 1)
                end = run.end() if run else self.pos + 1
                pieces.append(text[self.pos : end])
                self.pos = end
        raise NotACall("unclosed string")

    def escape(self) -> str:
        """The escape at ``pos`` (a backslash), as Python reads it; ``pos`` moves past it."""
        code = self.text[self.pos + 1 : self.pos + 2]
        if not code:
            raise NotACall("unclosed string")
        if code in _ESCAPES:
            self.pos += 2
            return _ESCAPES[code]
        if code in _HEX_DIGITS:
            digits = self.text[self.pos + 2 : self.pos + 2 + _HEX_DIGITS[code]]
            if len(digits) != _HEX_DIGITS[code] or not all(
                c in "0123456789abcdefABCDEF" for c in digits
            ):
                raise NotACall("bad escape")
            point = int(digits, 16)
            if point > 0x10FFFF:
                raise NotACall("bad escape")
            self.pos += 2 + len(digits)
            return chr(point)
        if code in "01234567":
            end = self.pos + 1
            while end < self.pos + 4 and self.text[end : end + 1] in tuple("01234567"):
                end += 1
            point = int(self.text[self.pos + 1 : end], 8)
            self.pos = end
            return chr(point)
        self.pos += 2
        return "\\" + code  # Python keeps an unknown escape as written

    def number(self) -> int | float:
        match = _NUMBER.match(self.text, self.pos)
        if match is None or len(match.group()) > MAX_NUMBER:
            raise NotACall("not a number")
        token = match.group()
        try:
            floating = "." in token or "e" in token or "E" in token
            number: int | float = float(token) if floating else int(token)
        except ValueError:  # misplaced underscores
            raise NotACall("not a number") from None
        self.pos = match.end()
        return number

    def space(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        self.pos = pos

    def take(self, char: str) -> bool:
        if self.text.startswith(char, self.pos):
            self.pos += 1
            return True
        return False

    def expect(self, char: str) -> None:
        if not self.take(char):
            raise NotACall(f"expected {char!r}")
