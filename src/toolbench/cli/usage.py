"""The command line's argparse: a usage error is one line and exit code 2, a misspelt flag is
named (with the nearest real one) rather than what it hid, and --help shows defaults."""

from __future__ import annotations

import argparse
import sys
from typing import Any, NoReturn

from toolbench.errors import did_you_mean

EXIT_USAGE = 2


class HelpFormatter(argparse.HelpFormatter):
    """--help shows each flag's default once: appended as "(default: X)" unless the help text
    already says it (it mentions "default") or there is nothing worth showing (None, a
    switch's False, an empty list)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        help_text = action.help or ""
        if "default" in help_text.lower() or not action.option_strings:
            return help_text
        default = action.default
        if default is None or default == argparse.SUPPRESS or action.nargs == 0:
            return help_text
        if isinstance(default, (list, tuple)) and not default:
            return help_text
        return f"{help_text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (plus exit code 2), as for every other user
    error, and --help shows each flag's default."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._given = [str(arg) for arg in (sys.argv[1:] if args is None else args)]
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        prog = self.prog
        if message.startswith("the following arguments are required"):
            missing = [flag.strip() for flag in message.partition(":")[2].split(",")]
            message = self._unknown_flag(self, missing) or message  # a typo hid the flag
        elif message.startswith("unrecognized arguments") and (sub := self._chosen_command()):
            message, prog = self._unknown_flag(sub, []) or message, sub.prog
        self.exit(EXIT_USAGE, f"{prog}: error: {message} (see {prog} --help)\n")

    def _chosen_command(self) -> argparse.ArgumentParser | None:
        """The subcommand's parser, when the given arguments name one."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for token in getattr(self, "_given", []):
                    if token in action.choices:
                        return action.choices[token]
        return None

    def _unknown_flag(self, parser: argparse.ArgumentParser, missing: list[str]) -> str | None:
        """``unrecognized arguments: --modle (did you mean '--model'?)`` for the first given
        flag ``parser`` does not know (the missing required flags are the likeliest meaning),
        so a typo is named instead of what it hid."""
        flags = parser._option_string_actions
        known = [flag for flag in flags if flag.startswith("--")]
        for token in getattr(self, "_given", []):
            flag = token.split("=", 1)[0]
            if flag.startswith("--") and flag not in flags:
                hint = did_you_mean(flag, missing) if missing else ""
                if not hint.startswith(" (did you mean"):
                    hint = did_you_mean(flag, known)
                if not hint.startswith(" (did you mean"):
                    hint = ""
                return f"unrecognized arguments: {flag}{hint}"
        return None
