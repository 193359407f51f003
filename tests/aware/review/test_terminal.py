"""The terminal review, in process: keys from a string, output captured."""

from __future__ import annotations

import io
import os
import termios
import threading
from pathlib import Path

import pytest
from rich.console import Console

from tests.aware.review.conftest import incomplete_ids
from toolbench.aware import review_reasons
from toolbench.aware.annotate.keys import KeyInput
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.review.terminal import ReviewSummary, parse_reasons, run_review
from toolbench.aware.review.view import word_diff
from toolbench.aware.review_reasons import GENERIC_REASONS, reasons_for
from toolbench.aware.schema import read_instances


def review(
    ds: Path, keys: str, reviewer: str = "ann", **kwargs: object
) -> tuple[ReviewSummary, str]:
    out = io.StringIO()
    console = Console(file=out, width=100, color_system=None)
    summary = run_review(
        ds,
        reviewer=reviewer,
        stdin=io.StringIO(keys),
        console=console,
        **kwargs,  # type: ignore[arg-type]
    )
    return summary, out.getvalue()


def decisions(ds: Path) -> dict[str, tuple[str, tuple[str, ...], str]]:
    ids = [i.id for i in read_instances(ds)]
    with ReviewStore(default_db_path(ds), ids) as store:
        return {i: (d.status, d.reasons, d.note) for i, d in store.current_decisions().items()}


def shown(output: str) -> list[str]:
    """Instance ids in the order their headers were printed."""
    return [line.split()[1] for line in output.splitlines() if line.startswith("─") and "~" in line]


@pytest.fixture(autouse=True)
def _generic_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests choose reasons by number, so fix the list whatever review_reasons holds."""
    monkeypatch.setattr(review_reasons, "REVIEW_REASONS", {})


def test_accept_reject_skip_quit(ds: Path) -> None:
    order = incomplete_ids(read_instances(ds))
    assert len(order) == 5  # one of six is auto-rejected
    summary, output = review(ds, "a\nr\n1 2\nstill served\ns\nq\n")
    assert shown(output) == order[:4]  # q on the fourth
    assert decisions(ds) == {
        order[0]: ("accepted", (), ""),
        order[1]: ("rejected", ("not_incomplete", "unnatural"), "still served"),
    }
    assert (summary.accepted, summary.rejected, summary.skipped) == (1, 1, 1)
    assert (summary.remaining, summary.total) == (3, 5)
    assert "0/5 reviewed" in output and "2/5 reviewed" in output
    assert "remaining" in output and "every decision so far is saved" in output


def test_resume_continues_with_the_next_pending(ds: Path) -> None:
    order = incomplete_ids(read_instances(ds))
    review(ds, "a\na\nq\n")
    summary, output = review(ds, "a\nq\n")
    assert shown(output) == order[2:4]
    assert set(decisions(ds)) == set(order[:3])
    assert summary.accepted == 1 and summary.remaining == 2
    summary, output = review(ds, "a\na\n")  # finishes without needing q
    assert "every instance in the queue is reviewed" in output
    assert summary.remaining == 0 and set(decisions(ds)) == set(order)
    summary, output = review(ds, "")
    assert shown(output) == [] and summary.remaining == 0


def test_undo_shows_the_instance_again(ds: Path) -> None:
    o = incomplete_ids(read_instances(ds))
    # o0: accept; o1: accept; on o2: undo (o1 back), undo again (o0 back); reject o0;
    # then the other one handed back (o1): accept; then o2, which was on screen: quit.
    summary, output = review(ds, "a\na\nu\nu\nr\n1\n\na\nq\n")
    assert shown(output) == [o[0], o[1], o[2], o[1], o[0], o[1], o[2]]
    assert f"undone: your decision on {o[1]}" in output
    assert f"undone: your decision on {o[0]}" in output
    assert decisions(ds) == {
        o[0]: ("rejected", ("not_incomplete",), ""),
        o[1]: ("accepted", (), ""),
    }
    assert (summary.undone, summary.accepted, summary.rejected) == (2, 1, 1)
    assert summary.remaining == 3


def test_undo_with_nothing_to_undo(ds: Path) -> None:
    _, output = review(ds, "u\nq\n")
    assert "nothing to undo" in output


def test_reject_can_be_cancelled_and_bad_numbers_are_asked_again(ds: Path) -> None:
    order = incomplete_ids(read_instances(ds))
    _, output = review(ds, "r\n\nr\n9\n2\n\nz\nq\n")
    assert "rejection cancelled" in output
    assert "'9' is not a reason number between 1 and 3" in output
    assert "unknown key 'z'" in output
    assert decisions(ds) == {order[0]: ("rejected", ("unnatural",), "")}


def test_other_needs_a_note(ds: Path) -> None:
    order = incomplete_ids(read_instances(ds))
    _, output = review(ds, "r\nother\n\nthe API is fine\nq\n")
    assert "'other' needs a note" in output
    assert decisions(ds) == {order[0]: ("rejected", ("other",), "the API is fine")}


def test_end_of_input_mid_rejection_stores_nothing(ds: Path) -> None:
    summary, output = review(ds, "r\n")
    assert decisions(ds) == {} and summary.remaining == 5
    assert "every decision so far is saved" in output


def test_auto_rejected_shown_only_when_asked(ds: Path) -> None:
    instances = read_instances(ds)
    auto = [i.id for i in instances if i.verification.status == "rejected"]
    assert auto == ["c2~api_replacement"]
    _, output = review(ds, "s\n" * 6 + "q\n")
    assert auto[0] not in shown(output)
    summary, output = review(ds, "a\n" * 6, only_pending=False)
    assert auto[0] in shown(output)
    assert "in the file: rejected by auto" in output and "similar_api" in output
    assert summary.total == 6 and summary.remaining == 0
    assert "c0" not in decisions(ds)  # complete instances are never reviewed


def test_undo_of_an_instance_this_review_does_not_show(ds: Path) -> None:
    ids = [i.id for i in read_instances(ds)]
    with ReviewStore(default_db_path(ds), ids) as store:
        store.accept("c2~api_replacement", "ann")  # auto-rejected in the file
    _, output = review(ds, "u\nq\n")
    assert "undone: your decision on c2~api_replacement, which this review does not show" in output
    assert decisions(ds) == {}


def test_the_last_decision_can_still_be_undone(ds: Path) -> None:
    order = incomplete_ids(read_instances(ds))
    summary, output = review(ds, "a\n" * 5 + "u\nr\n2\n\n\n")
    assert "[u undo, any other key: finish] > u" in output
    assert shown(output) == [*order, order[-1]]
    assert decisions(ds)[order[-1]] == ("rejected", ("unnatural",), "")
    assert summary.remaining == 0 and summary.undone == 1


def test_view_shows_apis_provenance_and_removed_text(ds: Path) -> None:
    _, output = review(ds, "a\n")
    assert "GetAirQuality (replacement)" in output
    assert "Current weather for a city." in output and "More detail here" not in output
    assert "GetWeather → GetAirQuality" in output and "similarity 0.810" in output
    _, output = review(ds, "a\n")
    assert "What is the weather [-in Paris-] on day 0?" in output
    assert "removed text: «in Paris»" in output


def test_word_diff_markers() -> None:
    assert word_diff("book a room in Paris now", "book a room now").plain == (
        "book a room [-in Paris-] now"
    )
    assert word_diff("a b", "a c").plain == "a [-b-]{+c+}"


def test_parse_reasons() -> None:
    codes = ["x", "y", "z"]
    assert parse_reasons("3 1, 3", codes) == ["z", "x"]
    assert parse_reasons("y 1", codes) == ["y", "x"]
    assert parse_reasons("  ", codes) == []
    with pytest.raises(ValueError):
        parse_reasons("0", codes)


def test_reasons_fall_back_to_generic(monkeypatch: pytest.MonkeyPatch) -> None:
    assert reasons_for("api_replacement") == GENERIC_REASONS
    table = {"api_replacement": {"alt": "an alternative API serves it"}}
    monkeypatch.setattr(review_reasons, "REVIEW_REASONS", table)
    assert reasons_for("api_replacement") == {"alt": "an alternative API serves it"}
    assert reasons_for("tool_removal") == GENERIC_REASONS


def test_tty_keys_are_single_keystrokes_and_the_terminal_is_restored() -> None:
    master, slave = os.openpty()
    stream = os.fdopen(slave, "r", encoding="utf-8")
    try:
        before = termios.tcgetattr(slave)
        keys = KeyInput(stream, Console(file=io.StringIO()))
        assert keys.tty
        os.write(master, b"A")
        assert keys.key("> ") == "a"
        os.write(master, b"\x1b[A")  # an arrow key means nothing
        assert keys.key("> ") == ""
        # Ctrl-C quits. Sent once raw mode is on: before, the line discipline eats it.
        timer = threading.Timer(0.2, os.write, (master, b"\x03"))
        timer.start()
        assert keys.key("> ") == "q"
        timer.join()
        assert termios.tcgetattr(slave) == before
    finally:
        stream.close()
        os.close(master)
