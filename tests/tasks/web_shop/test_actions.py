"""WebShop's action grammar: the regex's answers, its quirks, and linear time on hostile text."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.tasks.web_shop.actions import parse_action, split_action

WEBSHOP_PATTERN = re.compile(r"(.+)\[(.+)\]")


def _regex(action: str) -> tuple[str, str | None]:
    match = re.match(WEBSHOP_PATTERN, action)
    return (action, None) if match is None else (match.group(1), match.group(2))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab[] \n\r\u2028é"), max_size=14))
def test_same_split_as_the_regex(action: str) -> None:
    assert split_action(action) == _regex(action)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_same_split_as_the_regex_on_any_text(action: str) -> None:
    assert split_action(action) == _regex(action)


def test_quirks() -> None:
    assert parse_action("search[USB Drive]").arg == "usb drive"  # lower-cased
    assert parse_action("Action: search[x]").name == "Action: search"  # no-op later
    assert parse_action("click[a] then click[b]") == parse_action("click[a] then click[b]")
    assert split_action("click[a] then click[b]") == ("click[a] then click", "b")
    assert split_action("click[buy now] because it fits") == ("click", "buy now")
    assert split_action("search[x]]") == ("search", "x]")
    assert split_action("search[]") == ("search[]", None)  # the argument must be non-empty
    assert split_action("[x]") == ("[x]", None)  # so must the name
    assert split_action("think first\nsearch[x]") == ("think first\nsearch[x]", None)
    assert split_action("search[x]\nclick[y]") == ("search", "x")  # the first line only
    assert parse_action("Search[x]").name == "Search"  # names are kept as written


def test_hostile_lines_are_linear() -> None:
    for text in ("[" * 200_000, "a[" * 100_000 + "]", "x" * 1_000_000, "[]" * 100_000):
        started = time.perf_counter()
        split_action(text)
        assert time.perf_counter() - started < 0.5
