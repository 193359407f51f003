"""``toolbench prompt`` shows what ends the reply: max_tokens and the stop sequences as sent,
each repr-quoted so a line break or a space is visible."""

from __future__ import annotations

from collections.abc import Callable

from tests.conftest import CliResult


def settings_of(out: str) -> list[str]:
    """The lines after the ``generation`` rule (the last thing the command prints)."""
    _, rule, tail = out.rpartition(" generation ")
    assert rule, out[-300:]
    return tail.splitlines()[1:]


def test_completion_mode_shows_the_original_stops(cli: Callable[..., CliResult]) -> None:
    code, out, err = cli("prompt", "home_search", "--sample", "0")
    assert code == 0, err
    assert settings_of(out) == ["max_tokens: 256", "stop: '------', 'Task:'"]


def test_chat_mode_has_no_stops(cli: Callable[..., CliResult]) -> None:
    code, out, err = cli("prompt", "home_search", "--sample", "0", "--mode", "chat")
    assert code == 0, err
    assert settings_of(out) == ["max_tokens: 256", "stop: none"]


def test_a_run_stop_replaces_the_defaults_and_shows_escapes(cli: Callable[..., CliResult]) -> None:
    stops = ("--stop", "\\n", "--stop", "END")  # the CLI reads "\\n" as a line break
    code, out, err = cli("prompt", "home_search", "--sample", "0", *stops, "--max-tokens", "64")
    assert code == 0, err
    assert settings_of(out) == ["max_tokens: 64", "stop: '\\n', 'END'"]
    code, out, err = cli("prompt", "home_search", "--sample", "0", "--no-stop")
    assert code == 0, err
    assert settings_of(out)[1] == "stop: none"


def test_tabletop_shows_its_lmp_stops_and_the_harness_only_in_completion_mode(
    cli: Callable[..., CliResult],
) -> None:
    code, out, err = cli("prompt", "tabletop", "--sample", "SI_0-0")
    assert code == 0, err
    assert settings_of(out)[1] == "stop: '#', 'objects = [', '------', 'Task:'"
    code, out, err = cli("prompt", "tabletop", "--sample", "SI_0-0", "--mode", "chat")
    assert code == 0, err
    assert settings_of(out)[1] == "stop: '#', 'objects = ['"
    code, out, err = cli("prompt", "tabletop", "--sample", "SI_0-0", "--stop", "\\n\\n")
    assert code == 0, err
    assert settings_of(out)[1] == "stop: '#', 'objects = [', '\\n\\n'"


def test_stop_and_no_stop_together_are_refused(cli: Callable[..., CliResult]) -> None:
    code, out, err = cli("prompt", "home_search", "--sample", "0", "--stop", "x", "--no-stop")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "--stop" in err and "--no-stop" in err
