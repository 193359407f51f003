"""--help of every command and subcommand: every option says what it is, and each default is
shown exactly once (never "(default: None)", never twice when the help text states it too)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterator

import pytest

from tests.conftest import CliResult
from toolbench.cli.main import all_parsers, build_parser


def _options() -> Iterator[tuple[argparse.ArgumentParser, argparse.Action]]:
    for parser in all_parsers(build_parser()):
        for action in parser._actions:
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                yield parser, action


def _name(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return f"{parser.prog} {'/'.join(action.option_strings) or action.dest}"


def _rendered(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help text of one option exactly as --help prints it (defaults filled in)."""
    return " ".join(parser._get_formatter()._expand_help(action).split())


def _has_default(action: argparse.Action) -> bool:
    default = action.default
    if default is None or default == argparse.SUPPRESS or action.nargs == 0:
        return False
    return not (isinstance(default, (list, tuple)) and not default)


def test_the_parser_tree_is_what_the_sweeps_walk() -> None:
    progs = {parser.prog for parser in all_parsers(build_parser())}
    assert {"toolbench run", "toolbench aware run", "toolbench aware build"} <= progs
    assert {"toolbench web_shop human", "toolbench data generate", "toolbench report"} <= progs
    assert len(progs) >= 19, sorted(progs)


def test_every_option_of_every_parser_has_help() -> None:
    missing = [
        _name(parser, action)
        for parser, action in _options()
        if action.help != argparse.SUPPRESS and not (action.help or "").strip()
    ]
    assert not missing, missing


def test_every_default_is_shown_once_and_none_is_never_shown() -> None:
    wrong = []
    for parser, action in _options():
        if action.help == argparse.SUPPRESS:
            continue
        text = _rendered(parser, action)
        said = len(re.findall(r"\bdefault\b", text, re.IGNORECASE))
        if "(default: None)" in text or "default: False" in text or said > 1:
            wrong.append(f"{_name(parser, action)}: {text}")
        elif _has_default(action) and (said != 1 or str(action.default) not in text):
            wrong.append(f"{_name(parser, action)} (default {action.default!r}): {text}")
    assert not wrong, "\n".join(wrong)


ARGVS = [parser.prog.split()[1:] for parser in all_parsers(build_parser())]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda argv: " ".join(argv) or "toolbench")
def test_help_as_printed(cli: Callable[..., CliResult], argv: list[str]) -> None:
    """The real --help output: exit 0, no "(default: None)", no option's default twice."""
    code, out, err = cli(*argv, "--help")
    assert code == 0 and not err
    assert "(default: None)" not in " ".join(out.split())
    # One chunk per option: its line in the listing and the indented help lines below it.
    for chunk in re.split(r"\n  (?=-)", out):
        assert len(re.findall(r"\bdefault\b", chunk, re.IGNORECASE)) <= 1, chunk


def test_run_help_keeps_the_defaults_a_new_user_looks_for(cli: Callable[..., CliResult]) -> None:
    code, out, _ = cli("run", "--help")
    flat = " ".join(out.split())
    assert code == 0
    for shown in (
        "seconds per model request (default: 60.0)",
        "seconds per program (default: 2.0)",
        "data version (default: v0)",
        "(default: $TOOLBENCH_CACHE_DIR, else ~/.cache/toolbench)",
    ):
        assert shown in flat, shown
    assert flat.count("(default: v0)") == 1
