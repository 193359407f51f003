"""Table 1 statistics, checked against numbers worked out by hand."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from toolbench.aware.schema import ApiSpec, Instance, Provenance, Turn, Verification
from toolbench.aware.stats import StatsRow, render_table1, table1


def apis(*lengths: int) -> list[ApiSpec]:
    return [ApiSpec(name=f"api{n}", description="d" * length) for n, length in enumerate(lengths)]


def make(
    id: str,
    source: str,
    manipulation: str,
    users: list[str],
    api_lengths: list[int],
    status: str,
    *,
    multi_turn: bool = False,
) -> Instance:
    dialogue = [Turn(role="user", content=users[0])]
    if multi_turn:  # user, assistant, user, then a tool turn (not an utterance)
        dialogue += [
            Turn(role="assistant", content="Which dates?"),
            Turn(role="user", content=users[1]),
            Turn(role="tool", content='{"ok": true}', tool_name="api0"),
        ]
    complete = manipulation == "none"
    return Instance(
        id=id,
        source=source,
        dialogue=dialogue,
        apis=apis(*api_lengths),
        label="complete" if complete else "incomplete",
        manipulation=manipulation,  # type: ignore[arg-type]
        twin_id=None if complete else "x",
        provenance=Provenance(original_id=id),
        verification=Verification(status=status),  # type: ignore[arg-type]
    )


MIXED = [
    # toolbench first in the file: rows must still come out sorted.
    make(
        "D",
        "toolbench",
        "none",
        ["Find me five cheap flights to Rome please"],
        [10, 20, 30],
        "accepted",
    ),
    make(
        "E", "toolbench", "utterance_removal", ["Find me cheap flights"], [10, 20, 30], "accepted"
    ),
    make("F", "toolbench", "utterance_removal", ["Find flights please"], [5], "pending"),
    make(
        "C",
        "apibank",
        "utterance_removal",
        ["Book a room", "From May 1"],
        [4, 0],
        "rejected",
        multi_turn=True,
    ),
    make(
        "A",
        "apibank",
        "none",
        ["Book a room in Paris", "From May 1 to May 3"],
        [4, 0],
        "accepted",
        multi_turn=True,
    ),
    make(
        "B",
        "apibank",
        "api_replacement",
        ["Book a room in Paris", "From May 1 to May 3"],
        [2, 11],
        "pending",
        multi_turn=True,
    ),
]


def row(source: str, manipulation: str, n: int, turns: float, n_apis: float, words: float,
        entry: float | None, length: float | None, pending: int, accepted: int, rejected: int,
        complete: int, incomplete: int) -> StatsRow:  # fmt: skip
    return StatsRow(source, manipulation, n, turns, n_apis, words, entry, length, pending,
                    accepted, rejected, complete, incomplete)  # fmt: skip


# A whole API entry as rendered: '- apiN: <description>\n  parameters: {"type": "object",
# "properties": {}, "required": []}' is 75 characters plus the description, and an empty
# description is shown as '(no description)' (16), so 91.


def test_table1_by_hand() -> None:
    rows = table1(MIXED)
    expected = [
        # user words A: 5 and 6 words; API lengths 4 and 0 characters: entries 79 and 91
        row("apibank", "none", 1, 3.0, 2.0, 5.5, 85.0, 2.0, 0, 1, 0, 1, 0),
        row("apibank", "api_replacement", 1, 3.0, 2.0, 5.5, 81.5, 6.5, 1, 0, 0, 0, 1),
        row("apibank", "utterance_removal", 1, 3.0, 2.0, 3.0, 85.0, 2.0, 0, 0, 1, 0, 1),
        row("toolbench", "none", 1, 1.0, 3.0, 8.0, 95.0, 20.0, 0, 1, 0, 1, 0),
        # E and F: 1 turn each; 3 + 1 APIs; 4 and 3 words; (10+20+30+5)/4 characters
        row("toolbench", "utterance_removal", 2, 1.0, 2.0, 3.5, 91.25, 16.25, 1, 1, 0, 0, 2),
    ]
    assert rows[:-1] == expected
    total = rows[-1]
    assert (total.source, total.manipulation, total.instances) == ("all", "all", 6)
    assert total.avg_turns == pytest.approx(12 / 6)
    assert total.avg_apis == pytest.approx(13 / 6)
    assert total.avg_user_words == pytest.approx(43 / 9)  # 9 user turns, 43 words
    assert total.avg_api_description_chars == pytest.approx(146 / 13)  # 13 APIs offered
    assert total.avg_api_length == pytest.approx((170 + 163 + 170 + 285 + 365) / 13)
    assert (total.pending, total.accepted, total.rejected) == (2, 3, 1)
    assert (total.complete, total.incomplete) == (2, 4)


def test_order_does_not_depend_on_the_file_order() -> None:
    assert table1(MIXED) == table1(list(reversed(MIXED)))


def test_nothing_to_average_is_none_and_renders_as_a_dash() -> None:
    no_apis = make("G", "bfcl", "tool_removal", ["Call it"], [], "accepted")
    rows = table1([no_apis])
    assert rows[0].avg_api_description_chars is None and rows[0].avg_apis == 0.0
    assert table1([]) == [row("all", "all", 0, None, None, None, None, None, 0, 0, 0, 0, 0)]  # type: ignore[arg-type]
    out = io.StringIO()
    render_table1(table1(MIXED) + rows, Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert "avg API length" in text and "utterance_removal" in text and "16.25" in text
    assert "–" in text and text.index("toolbench") < text.index(" all ")


def test_words_are_punctuation_aware_tokens_and_the_legend_says_so() -> None:
    from toolbench.aware.stats import word_count

    assert word_count("Rome, please?") == 4
    assert word_count("What's the weather in São Paulo on 2023-05-14?") == 15  # What ' s ... 14 ?
    out = io.StringIO()
    render_table1(table1(MIXED), Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert "punctuation-aware tokens" in text and "whole API entry" in text
