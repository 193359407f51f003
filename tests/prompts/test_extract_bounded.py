"""Reply extraction is total and bounded on hostile replies.

The bound is checked structurally (parse attempts and characters handed to the parser, counted
through a replaced parser), not with a stopwatch, so the test means the same on any machine.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.prompts import extract
from toolbench.prompts.extract import extract_program

PROGRAM = 'API.set_location("Austin")\nAPI.search()'

# Every code point, lone surrogates and NUL included.
ANY_CHAR = st.characters(codec=None, categories=None)
FRAGMENTS = st.sampled_from(
    [
        "(", ")", "[", "]", "{", "}", "```", "```python", "=", "#", "\n", "\r\n", " ", "\t",
        "\x00", "\ud800", "\udfff", "\u2028", "\x0c", "API.search()", "x = 1", "if x:",
        "Here is the program:", "Done.", "lambda:", "not ", "-", '"', "'", "f'{", "\\",
        'API.set_location("Austin")', "for", "import os",
    ]
)  # fmt: skip
REPLIES = st.one_of(
    st.text(ANY_CHAR, max_size=300),
    st.lists(st.one_of(FRAGMENTS, st.text(ANY_CHAR, max_size=8)), max_size=80).map("".join),
)


class CountingParser:
    """Stands in for ``ast.parse``: counts attempts and characters, then parses for real."""

    def __init__(self) -> None:
        self.calls = 0
        self.chars = 0

    def __call__(self, source: str) -> object:
        self.calls += 1
        self.chars += len(source)
        return ast.parse(source)


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> CountingParser:
    counting = CountingParser()
    monkeypatch.setattr(extract, "parse", counting)
    return counting


def hostile(size: int) -> dict[str, str]:
    """Replies that made the old extractor slow or crash, scaled by ``size``."""
    return {
        "open parens on lines": "(\n" * size,
        "unclosed brackets": "[" * (20 * size),
        "deep nesting": "[" * size + "]" * size,
        "one long line": "x" * (100 * size),
        "NUL bytes": "API.search()\x00\n" * size,
        "lone surrogates": 'x = "\ud800"\n' * size,
        "repetition loop": "API.search()\n" * size + "I will now repeat.\n",
        "prose with code marks": "Note (1): x = y\n" + "f(\n" * size + "Result = done\n",
        "fence header of spaces": "```" + " " * (100 * size),
        "many fences on one line": "``` " * (10 * size) + "\nAPI.search()",
        "long chained call": "f" + "()" * (10 * size),
        "unary chain": "-" * (10 * size) + "1",
    }


@pytest.mark.parametrize("size", [10, 300, 3000])
def test_parse_work_is_capped_whatever_the_reply(counter: CountingParser, size: int) -> None:
    for name, reply in hostile(size).items():
        counter.calls = counter.chars = 0
        result = extract_program(reply)
        assert isinstance(result, str)
        assert result in reply, name
        assert counter.calls <= extract.MAX_PARSE_ATTEMPTS, (name, counter.calls)
        assert counter.chars <= extract.PARSE_BUDGET_CHARS, (name, counter.chars)


def test_parse_attempts_do_not_grow_with_the_number_of_lines(counter: CountingParser) -> None:
    """The old extractor parsed every window of lines: O(lines^2) attempts. Now 1,900 lines of
    unparseable code-looking text take no more attempts than 100 (the character budget can
    only make longer replies take fewer)."""
    counts = []
    for lines in (100, 1_900):
        counter.calls = 0
        extract_program("Here it is:\n" + "API.f(\n" * lines + "Thanks.")
        counts.append(counter.calls)
    assert counts[1] <= counts[0] <= extract.MAX_PARSE_ATTEMPTS


def test_a_normal_reply_takes_at_most_two_parses(counter: CountingParser) -> None:
    reply = f"Here is what I would run.\n{PROGRAM}\nThis searches homes in Austin."
    assert extract_program(reply) == PROGRAM
    assert counter.calls == 2  # the whole reply, then the lines the classifier calls code


@pytest.mark.parametrize(
    "error", [RecursionError("deep"), MemoryError(), ValueError("NUL"), SyntaxError("x")]
)
def test_any_parser_failure_means_does_not_parse(
    monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    def failing(source: str) -> object:
        raise error

    monkeypatch.setattr(extract, "parse", failing)
    reply = f"Intro.\n{PROGRAM}\nOutro."
    assert extract_program(reply) == reply


def test_prose_that_contains_code_marks_is_still_trimmed() -> None:
    reply = f"Here (in Python) is the answer:\n{PROGRAM}\nIt sets x = Austin first."
    assert extract_program(reply) == PROGRAM


def test_windows_line_endings_keep_the_text_as_written() -> None:
    reply = "Here it is:\r\n" + PROGRAM.replace("\n", "\r\n") + "\r\nDone."
    assert extract_program(reply) == PROGRAM.replace("\n", "\r\n")


def test_fence_header_is_a_short_language_tag() -> None:
    assert extract_program("```  python \n" + PROGRAM + "\n```") == PROGRAM
    # A header line of hundreds of spaces is not a fence header (the old regular expression
    # took quadratic time on it); the program is still found by trimming.
    assert extract_program("```" + " " * 500 + "\n" + PROGRAM) == PROGRAM
    assert extract_program("````python\n" + PROGRAM) == PROGRAM  # a fourth backtick is fine


def test_keyword_statements_are_code_lines() -> None:
    reply = "Sure!\nimport os\nAPI.search()\nBye."
    assert extract_program(reply) == "import os\nAPI.search()"


@settings(max_examples=300, deadline=None)
@given(REPLIES)
def test_extraction_is_total_a_substring_and_deterministic(reply: str) -> None:
    result = extract_program(reply)
    assert isinstance(result, str)
    assert result in reply
    assert result == result.strip()
    assert extract_program(reply) == result


def test_parser_warnings_from_model_text_are_not_printed(recwarn: pytest.WarningsRecorder) -> None:
    assert extract_program("Intro.\nx = 1x\nOutro.") == "Intro.\nx = 1x\nOutro."
    assert extract_program('Intro.\nx = "\\d"\nOutro.') == 'x = "\\d"'
    assert not [w for w in recwarn if issubclass(w.category, SyntaxWarning | DeprecationWarning)]


@settings(max_examples=200, deadline=None)
@given(REPLIES)
def test_a_remembered_reply_extracts_as_a_fresh_one(reply: str) -> None:
    """Replies are remembered (extract_program), which must change no answer: the first and the
    remembered extraction equal extraction without the memo."""
    fresh = extract._extract(reply.strip())
    assert extract_program(reply) == fresh
    assert extract_program(reply) == fresh


def test_the_memo_is_bounded_and_skips_long_replies() -> None:
    extract._remembered.cache_clear()
    for i in range(extract.REMEMBERED_REPLIES + 50):
        assert extract_program(f"API.search({i})") == f"API.search({i})"
    info = extract._remembered.cache_info()
    assert info.maxsize == extract.REMEMBERED_REPLIES == info.currsize
    long_reply = "x = 1\n" * (extract.MAX_REMEMBERED_CHARS // 6 + 1)
    assert extract_program(long_reply) == long_reply.strip()
    assert extract._remembered.cache_info().currsize == info.currsize  # not remembered


def test_a_replaced_parser_sees_a_reply_extracted_before(counter: CountingParser) -> None:
    """The memo is keyed by the parser in use too, so counting what the parser is asked (the
    tests above) is never fooled by an earlier extraction of the same reply."""
    reply = f"Before.\n{PROGRAM}\nAfter."
    extract._remembered(reply, ast.parse)  # remembered under the real parser's key
    counter.calls = 0
    assert extract_program(reply) == PROGRAM
    assert counter.calls == 2
