"""Every ``toolbench`` command the README and docs/ show is one the CLI accepts.

The commands are read from README.md and docs/**/*.md and parsed with the real parser
(``toolbench.cli.main.build_parser``); nothing is executed, nothing on disk is read or written.

Where a command is found
  * fenced code blocks whose language is empty or a shell (bash, sh, shell, console, zsh);
    other languages (python, toml, json ...) are skipped;
  * inline code spans anywhere else (prose, tables, headings); a span may run over a line break.

What a command is
  * In a code block, a ``\\`` at the end of a line joins the next one; ``#`` at the start of a
    line or after a space (outside quotes) starts a comment; the line is split into shell
    words (``shlex``) and cut at ``|``, ``||``, ``&&`` and ``;``.
  * A piece is a toolbench command when, after leading ``NAME=value`` environment
    assignments, its program is ``toolbench``, any path ending in ``/toolbench``
    (``.venv/bin/toolbench``) or ``python[3] -m toolbench.cli``. ``python -m toolbench`` is
    reported: the package has no ``__main__``. ``toolbench`` elsewhere in a line (inside an
    ``agent:"..."`` spec, after ``npx ... --cli``) is another program's argument, not checked.
  * An inline span is a command when it starts with that program and a space
    (``toolbench[ray]`` or a bare ``toolbench`` is the name, not a command, and
    ``toolbench serve: uvicorn.error: ...`` a message it prints). A ``|`` in an inline span
    separates alternatives (``toolbench list tasks | models``): the first is checked.
  * An inline span that starts with a flag (``--max-turns``) names a flag: it must be a flag
    of some toolbench subcommand, or be allowed in ``OTHER_PROGRAMS_FLAGS`` (the flags of
    benchmark scripts, pip, the reference agent ...), with the reason.

How it is checked
  * Synopsis brackets: ``[--port 8765]`` stands for its contents, and ``a|b`` inside brackets
    for ``a`` (so ``[--version v0|v1]`` is ``--version v0``).
  * Every command: each subcommand exists, each flag is written in full and exists for that
    subcommand (argparse would take an abbreviation; docs should not), a flag with choices
    has one of them, and the registry checks below pass.
  * A *complete* command (no placeholder, see below) is then parsed with argparse itself, so
    types, choices, counts and required arguments are checked. Inline code may leave out
    required arguments (prose names a command and the flags that matter: ``toolbench run
    web_shop --limit 50``); a code block may not.
  * Placeholders make a command a *fragment*, checked for subcommand and flag names (and the
    registries where a value is given) only: a word ``...``/``…`` (something elided), a word
    holding ``<...>`` (``runs/<run>``), or a word one of whose ``:``/``=``/``,``/``/``-parts is
    an upper-case name of two or more characters (``FILE``, ``TASK``, ``replay:FILE``,
    ``HEAD_IP:6379``, ``agent:"COMMAND ..."``). A placeholder value is never checked itself.
  * Paths are not checked for existence: the parser's path types are replaced by ``Path``.
  * Registries: task names (``run``'s task list, where ``all`` is every tool task; ``serve``,
    ``prompt``, ``data generate``, ``show --task``, ``aware build --source task:NAME``,
    ``--task-option TASK.NAME=...``) are in ``toolbench.tasks.registry``; model specs
    (``run --model``, ``--role ROLE=SPEC``, ``aware run --model``/``--judge``, ``aware build
    --model``) name a model of ``toolbench.models.registry``, with or without the argument as
    its entry says, able to answer that command's question (``models.spec.require``).
    Names a doc defines in its own example (the plugin of writing-a-task.md) are allowed in
    ``PLUGIN_NAMES``, with the reason.

A failure lists ``file:line: the command: the problem`` for every command at once.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from toolbench.agents import registry as subjects  # models and agents: what --model names
from toolbench.agents.registry import require_subject as require
from toolbench.cli.argtypes import PathArg
from toolbench.cli.main import all_parsers, build_parser
from toolbench.errors import UserError
from toolbench.models.spec import AWARENESS, FREE_TEXT, TOOL_TASKS
from toolbench.tasks import registry as tasks

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

SHELL_LANGUAGES = {"", "bash", "sh", "shell", "console", "zsh"}

#: Names the docs define in their own examples, not registered in this checkout.
PLUGIN_NAMES = {
    "tasks": {
        "mytask": "docs/writing-a-task.md builds this task as a plugin package",
        "lights": "docs/writing-a-task.md builds this task (with an agent world) as a plugin",
    },
    "models": {"mymodel": "docs/writing-a-task.md builds this model as a plugin package"},
}

#: Flags the docs name in inline code that belong to another program than toolbench.
OTHER_PROGRAMS_FLAGS = {
    "--cli": "docs/agents.md: the MCP Inspector's (npx @modelcontextprotocol/inspector --cli)",
    "--script": "docs/architecture.md: the reference agent's script player",
    "--small": "docs/awareness.md: benchmarks/aware_realshape.py's",
    "--min": "docs/awareness.md: '--min/max-similarity' is aware build's two flags, abridged",
    "--avg-chars": "docs/performance.md: benchmarks/aware_replacement.py's",
    "--server": "docs/performance.md: benchmarks/engine_speed.py's",
    "--no-deps": "docs/smollm2.md: pip's",
}

#: Problems that need a change in src/ to go away, not in the docs: (file, command prefix)
#: -> why. Each is an expected failure until the code is fixed; clear an entry then.
NEEDS_SRC: dict[tuple[str, str], str] = {}

#: Model flags whose --help does not name every built-in model the flag takes (the help is
#: src/toolbench/cli/main.py's and aware_parser.py's): (subcommand path, flag) -> why. Strict
#: xfails of test_model_flag_help_names_every_model_it_takes; clear an entry when fixed.
HELP_NEEDS_SRC: dict[tuple[str, str], str] = {}

#: (subcommand path, dest) -> what the value names, for the registry checks.
TASK_LISTS = {("run", "tasks")}
TASK_NAMES = {("serve", "task"), ("prompt", "task"), ("data", "generate", "task"), ("show", "task")}
MODEL_SPECS = {
    ("run", "model"): TOOL_TASKS,
    ("aware", "run", "model"): AWARENESS,
    ("aware", "run", "judge"): FREE_TEXT,
    ("aware", "build", "model"): FREE_TEXT,
}

_PLACEHOLDER_PART = re.compile(r"[A-Z][A-Z0-9_]+")
_ENV_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_OPTIONAL_GROUP = re.compile(r"\[(-[^\[\]]*)\]")
_ANGLE_PLACEHOLDER = re.compile(r"<[^<>]*>")
_INLINE_CODE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")


@dataclass
class Command:
    """One toolbench command found in a doc: where, its words after the program, how found."""

    path: str
    line: int
    words: list[str]
    inline: bool
    problems: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "toolbench " + shlex.join(self.words)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


# --------------------------------------------------------------------------- finding commands


def _strip_comment(line: str) -> str:
    """``line`` up to a ``#`` that starts a shell comment (line start or after a space, outside
    quotes)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                continue
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _expand_optional(text: str) -> str:
    """``[--port 8765]`` -> ``--port 8765``; ``[--version v0|v1]`` -> ``--version v0``;
    ``<a model's run>`` -> ``<...>`` (one word, whatever it holds)."""

    def first_alternative(match: re.Match[str]) -> str:
        return " ".join(word.split("|")[0] for word in match.group(1).split())

    return _OPTIONAL_GROUP.sub(first_alternative, _ANGLE_PLACEHOLDER.sub("<...>", text))


def _pieces(text: str) -> Iterator[list[str]]:
    """The shell words of ``text``, cut at ``|``, ``||``, ``&&`` and ``;``."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;")
    lexer.whitespace_split = True
    lexer.commenters = ""
    piece: list[str] = []
    for word in lexer:
        if word and set(word) <= set("|&;"):
            yield piece
            piece = []
        else:
            piece.append(word)
    yield piece


def _program_args(words: list[str]) -> tuple[list[str] | None, str | None]:
    """The arguments after the toolbench program in ``words`` (None: not toolbench), and a
    problem with how the program is written."""
    while words and _ENV_ASSIGNMENT.match(words[0]):
        words = words[1:]
    if not words:
        return None, None
    program = words[0]
    if program == "toolbench" or program.endswith("/toolbench"):
        return words[1:], None
    if re.fullmatch(r"(.*/)?python3?", program) and words[1:2] == ["-m"] and len(words) > 2:
        if words[2] == "toolbench.cli":
            return words[3:], None
        if words[2] == "toolbench":
            return words[3:], "python -m toolbench: there is no toolbench.__main__; write toolbench"
    return None, None


def _from_text(path: str, line: int, text: str, *, inline: bool) -> Iterator[Command]:
    try:
        pieces = list(_pieces(_expand_optional(text)))
    except ValueError as exc:  # unbalanced quotes
        if re.search(r"(^|[\s/])toolbench\s", text):
            bad = Command(path, line, [text], inline)
            bad.problems.append(f"cannot be split into shell words ({exc})")
            yield bad
        return
    for number, words in enumerate(pieces):
        if inline and number > 0:
            break  # `toolbench list tasks | models`: the alternatives of prose, not a pipe
        args, problem = _program_args(words)
        if args is None:
            continue
        if inline and (not args or args[0].endswith(":")):
            continue  # the name in backticks, or a message it prints ("toolbench serve: ...")
        command = Command(path, line, args, inline)
        if problem:
            command.problems.append(problem)
        yield command


def _code_block_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(first line number, logical line) of a code block's lines, continuations joined."""
    start, joined = 0, ""
    for number, raw in lines:
        text = _strip_comment(raw)
        if not joined:
            start = number
        if text.rstrip().endswith("\\"):
            joined += text.rstrip()[:-1] + " "
            continue
        yield start, joined + text
        joined = ""
    if joined:
        yield start, joined


def find_commands(file: Path) -> list[Command]:
    """Every toolbench command in the Markdown file ``file``."""
    rel = file.relative_to(ROOT).as_posix()
    found: list[Command] = []
    block: list[tuple[int, str]] | None = None
    fence, language = "", ""
    prose: list[tuple[int, str]] = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        opening = _FENCE.match(line)
        if block is None and opening:
            fence, language, block = opening.group(1), opening.group(2).lower(), []
            continue
        if block is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                if language in SHELL_LANGUAGES:
                    for start, text in _code_block_lines(block):
                        found.extend(_from_text(rel, start, text, inline=False))
                block = None
            else:
                block.append((number, line))
            continue
        prose.append((number, line))
    found.extend(_inline_commands(rel, prose))
    return sorted(found, key=lambda command: command.line)


def _inline_commands(rel: str, prose: list[tuple[int, str]]) -> Iterator[Command]:
    """Inline code spans of the prose lines, paragraph by paragraph (a span may wrap)."""
    paragraph: list[tuple[int, str]] = []
    for number, line in [*prose, (0, "")]:
        if line.strip():
            paragraph.append((number, line))
            continue
        if paragraph:
            text = "\n".join(text for _, text in paragraph)
            for match in _INLINE_CODE.finditer(text):
                span = " ".join(match.group(1).split())
                line_number = paragraph[text.count("\n", 0, match.start())][0]
                yield from _from_text(rel, line_number, span, inline=True)
        paragraph = []


# --------------------------------------------------------------------------- checking them


class _ParseError(Exception):
    pass


def _raise(message: str) -> None:
    raise _ParseError(message)


def docs_parser() -> argparse.ArgumentParser:
    """The CLI's parser, with errors raised (not exits) and paths not looked up."""
    parser = build_parser()
    for each in all_parsers(parser):
        each.error = _raise  # type: ignore[method-assign,assignment]
        for action in each._actions:
            if isinstance(action.type, PathArg):
                action.type = Path
    return parser


def is_placeholder(word: str) -> bool:
    if word in ("...", "…") or "..." in word or "…" in word:
        return True
    if re.search(r"<[^<>]*>", word):
        return True
    return any(_PLACEHOLDER_PART.fullmatch(part) for part in re.split(r"[:=,/\s-]", word))


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return None


def _scan(
    command: Command, parser: argparse.ArgumentParser
) -> tuple[tuple[str, ...], dict[str, list[str]]]:
    """Walk the words as the parser would: (subcommand path, raw values by dest); problems
    with subcommand and flag names, and with choices, go to ``command.problems``."""
    words = list(command.words)
    path: list[str] = []
    while (choices := _subparsers(parser)) is not None:
        if not words:
            if not command.inline:
                command.problems.append(f"a subcommand is missing after '{' '.join(path)}'")
            return tuple(path), {}
        word = words.pop(0)
        if is_placeholder(word):
            return tuple(path), {}  # `toolbench ...`, `toolbench COMMAND`
        if word.startswith("-"):
            if parser._option_string_actions.get(word) is None:
                command.problems.append(f"unknown flag {word} of 'toolbench {' '.join(path)}'")
            return tuple(path), {}  # --help, --version
        if word not in choices:
            where = " ".join(["toolbench", *path])
            command.problems.append(
                f"'{where}' has no subcommand '{word}' (choose from {', '.join(choices)})"
            )
            return tuple(path), {}
        path.append(word)
        parser = choices[word]
    values: dict[str, list[str]] = {}
    positionals = [a for a in parser._actions if not a.option_strings]
    name = "toolbench " + " ".join(path)
    while words:
        word = words.pop(0)
        if word.startswith("-") and len(word) > 1 and not re.fullmatch(r"-\d+(\.\d+)?", word):
            flag, equals, value = word.partition("=")
            action = parser._option_string_actions.get(flag)
            if action is None:
                command.problems.append(f"'{name}' has no flag {flag}")
                continue
            if action.nargs == 0:
                continue
            if equals:
                given = [value]
            elif action.nargs in ("+", "*"):
                given = []
                while words and not words[0].startswith("-"):
                    given.append(words.pop(0))
            elif words and not words[0].startswith("--"):
                given = [words.pop(0)]
            else:
                given = []
                if not is_placeholder(flag):
                    command.problems.append(f"{flag} needs a value")
            choices = action.choices
            for each in given:
                if choices is not None and not is_placeholder(each) and each not in choices:
                    command.problems.append(
                        f"{flag} {each}: not one of {', '.join(map(str, choices))}"
                    )
            values.setdefault(action.dest, []).extend(given)
        elif positionals:
            action = positionals[0]
            values.setdefault(action.dest, []).append(word)
            if action.nargs not in ("+", "*"):
                positionals.pop(0)
        elif not is_placeholder(word):
            command.problems.append(f"'{name}' takes no further argument '{word}'")
    return tuple(path), values


def _check_task(name: str) -> str | None:
    if is_placeholder(name) or name in PLUGIN_NAMES["tasks"]:
        return None
    if name in tasks.task_names():
        return None
    return f"no task '{name}' (tasks: {', '.join(tasks.task_names())})"


def _check_model(spec: str, use: str) -> str | None:
    prefix, colon, rest = spec.partition(":")
    if is_placeholder(prefix) or prefix in PLUGIN_NAMES["models"]:
        return None
    entry = subjects.lookup_any(prefix)
    if entry is None:
        return f"no model '{prefix}' (models: {', '.join(m.spec for m in subjects.listing())})"
    if entry.argument == "none" and colon:
        return f"model {spec}: {entry.name} takes no argument"
    if entry.argument == "required" and not rest:
        return f"model {spec}: needs an argument ({entry.spec})"
    try:
        require(spec, use)
    except UserError as exc:
        return str(exc)
    return None


def _check_registries(path: tuple[str, ...], values: dict[str, list[str]]) -> list[str]:
    found: list[str | None] = []
    for dest, given in values.items():
        key = (*path, dest)
        for value in given:
            if key in TASK_LISTS:
                names = [part for part in value.split(",") if part]
                found.extend(_check_task(n) for n in names if n != "all")
            elif key in TASK_NAMES:
                found.append(_check_task(value))
            elif key in MODEL_SPECS:
                found.append(_check_model(value, MODEL_SPECS[key]))
            elif key == ("run", "role"):
                found.append(_check_model(value.partition("=")[2], FREE_TEXT))
            elif key == ("run", "task_option"):
                found.append(_check_task(value.partition(".")[0]))
            elif key == ("aware", "build", "source") and value.startswith("task:"):
                found.append(_check_task(value.partition(":")[2]))
    return [problem for problem in found if problem]


def check(command: Command, parser: argparse.ArgumentParser) -> list[str]:
    """The problems of ``command`` (empty: it is fine)."""
    path, values = _scan(command, parser)
    command.problems.extend(_check_registries(path, values))
    if command.problems or any(is_placeholder(word) for word in command.words):
        return command.problems
    try:
        parser.parse_args(command.words)
    except _ParseError as exc:
        message = str(exc)
        if not (command.inline and message.startswith("the following arguments are required")):
            command.problems.append(message)
    except SystemExit as exc:  # --help / --version print and exit
        if exc.code not in (0, None):
            command.problems.append(f"exits {exc.code}")
    return command.problems


def all_commands() -> list[Command]:
    return [command for file in DOC_FILES for command in find_commands(file)]


# --------------------------------------------------------------------------- the tests


def _needs_src(command: Command) -> str | None:
    for (path, prefix), why in NEEDS_SRC.items():
        if command.path == path and command.text.startswith(prefix):
            return why
    return None


def test_every_documented_command_parses() -> None:
    parser = docs_parser()
    problems = []
    for command in all_commands():
        if check(command, parser) and _needs_src(command) is None:
            problems.append(f"{command.where}: {command.text}: " + "; ".join(command.problems))
    assert not problems, "commands in the docs the CLI refuses:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("path", "prefix"),
    [pytest.param(*key, marks=pytest.mark.xfail(reason=why, strict=True)) for key, why in
     NEEDS_SRC.items()] or [pytest.param("-", "-", marks=pytest.mark.skip(reason="none listed"))],
)  # fmt: skip
def test_commands_that_need_src_changes(path: str, prefix: str) -> None:
    """Each NEEDS_SRC entry still fails (strict xfail: when the code is fixed, this passes and
    fails the suite until the entry is cleared)."""
    parser = docs_parser()
    matching = [c for c in all_commands() if c.path == path and c.text.startswith(prefix)]
    assert matching, f"no command {prefix!r} in {path} any more; clear the entry"
    for command in matching:
        assert not check(command, parser), f"{command.where}: {command.problems}"


_MODEL_FLAGS = {
    ("run", "--model"): TOOL_TASKS,
    ("aware run", "--model"): AWARENESS,
    ("aware run", "--judge"): FREE_TEXT,
    ("aware build", "--model"): FREE_TEXT,
}


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        pytest.param(
            *key,
            marks=[pytest.mark.xfail(reason=HELP_NEEDS_SRC[key], strict=True)]
            if key in HELP_NEEDS_SRC
            else [],
        )
        for key in _MODEL_FLAGS
    ],
)
def test_model_flag_help_names_every_model_it_takes(command: str, flag: str) -> None:
    """The --help of a model flag is documentation too: it names every built-in model that
    can answer the command's question (``toolbench list models`` has the rest)."""
    parser = build_parser()
    for word in command.split():
        choices = _subparsers(parser)
        assert choices is not None
        parser = choices[word]
    help_text = parser._option_string_actions[flag].help or ""
    named = set(re.findall(r"[a-z][a-z0-9-]*", help_text))
    able = [
        m.name for m in subjects.builtin_subjects() if _MODEL_FLAGS[(command, flag)] in m.answers
    ]
    missing = [name for name in able if name not in named]
    assert not missing, f"toolbench {command} {flag}: the help does not name {missing}"


def test_every_flag_named_in_inline_code_exists() -> None:
    flags = {flag for each in all_parsers(build_parser()) for flag in each._option_string_actions}
    problems = []
    for file in DOC_FILES:
        rel = file.relative_to(ROOT).as_posix()
        for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
            for match in re.finditer(r"(?<!`)`(--[a-z][a-z0-9-]*)", line):
                flag = match.group(1)
                if flag not in flags and flag not in OTHER_PROGRAMS_FLAGS:
                    problems.append(f"{rel}:{number}: {flag}: no toolbench subcommand has it")
    assert not problems, "\n".join(problems)


def test_the_docs_show_commands_of_every_kind() -> None:
    """The finder sees code blocks, continuations, inline spans and .venv/bin/toolbench: a
    broken finder that checks nothing would otherwise pass."""
    commands = all_commands()
    texts = [c.text for c in commands]
    assert len(commands) > 80
    assert any(c.inline for c in commands) and any(not c.inline for c in commands)
    assert any(t.startswith("toolbench aware build --source task:home_search") for t in texts)
    assert any("--manipulation slot_removal,tool_removal" in t for t in texts)  # continued line
    assert any(c.path == "README.md" and c.line < 40 for c in commands)  # .venv/bin/toolbench
    subcommands = {c.words[0] for c in commands if c.words}
    assert {"run", "serve", "prompt", "report", "show", "data", "aware", "list"} <= subcommands


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("toolbench run home_search --model baseline", None),
        ("toolbench run all --model oracle --limit 5", None),
        ("toolbench run home_serch --model baseline", "no task 'home_serch'"),
        ("toolbench run home_search --model basline", "no model 'basline'"),
        ("toolbench run home_search --model oracle:x", "takes no argument"),
        ("toolbench run home_search --model replay", "needs an argument"),
        ("toolbench run home_search --model always-yes", "cannot answer tool tasks"),
        ("toolbench run home_search --model baseline --limt 5", "has no flag --limt"),
        ("toolbench run home_search --model baseline --conc 5", "has no flag --conc"),
        ("toolbench run home_search --model baseline --mode chats", "not one of"),
        ("toolbench run home_search --model baseline --limit 0", "must be at least 1"),
        ("toolbench run home_search", "required: --model"),
        ("toolbench runs home_search", "no subcommand 'runs'"),
        ("toolbench report runs/<run-a> --html FILE", None),
        ("toolbench serve TASK --mcp --transprt http", "has no flag --transprt"),
        ("toolbench run ... --model replay:FILE --out runs/x", None),
        ("toolbench aware run a.jsonl --model baseline", "cannot answer awareness"),
        ("toolbench aware build --source task:nope --out x.jsonl", "no task 'nope'"),
        ("toolbench serve web_shop --port 8000 [--host 127.0.0.1] [--version v0|v1]", None),
        ("toolbench run mytask --model mymodel:x --out runs/mine", None),
        ("python -m toolbench list tasks", "no toolbench.__main__"),
        ("python -m toolbench.cli list tasks", None),
        ("X=1 .venv/bin/toolbench list models # all of them", None),
    ],
)
def test_the_checker(text: str, problem: str | None) -> None:
    commands = list(_from_text("x.md", 1, _strip_comment(text), inline=False))
    assert len(commands) == 1
    problems = check(commands[0], docs_parser())
    if problem is None:
        assert problems == []
    else:
        assert any(problem in p for p in problems), problems


def test_inline_spans_may_leave_out_required_arguments_and_wrap(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(
        "Run `toolbench run web_shop --limit 50` or `toolbench web_shop\nhuman --n 50 --name a`;"
        " `toolbench[ray]` and `toolbench` are names.\n\n```python\ntoolbench run x\n```\n"
        "```bash\ntoolbench run nope \\\n  --model oracle  # a comment\n```\n",
        encoding="utf-8",
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        commands = find_commands(doc)
    finally:
        ROOT = saved
    assert [(c.line, c.text, c.inline) for c in commands] == [
        (1, "toolbench run web_shop --limit 50", True),
        (1, "toolbench web_shop human --n 50 --name a", True),
        (8, "toolbench run nope --model oracle", False),
    ]
    parser = docs_parser()
    assert [bool(check(c, parser)) for c in commands] == [False, False, True]


def describe(commands: list[Command]) -> Any:  # pragma: no cover - a debugging aid
    """``python -c 'from tests.test_docs_commands import *; describe(all_commands())'``."""
    parser = docs_parser()
    for command in commands:
        mark = "FAIL" if check(command, parser) else "ok  "
        print(mark, command.where, command.text, command.problems or "")


def test_readme_names_every_extra() -> None:
    """The README's "Extras:" paragraph says what each optional dependency set of
    pyproject.toml is for, and that ``all`` holds every one of them."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = set(project["optional-dependencies"]) - {"all", "dev"}
    (all_extra,) = project["optional-dependencies"]["all"]
    assert set(re.findall(r"\w+", all_extra.partition("[")[2])) == extras
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = readme[readme.index("\nExtras: ") :].split("\n\n")[0]
    named = set(re.findall(r"`(\w+)`", paragraph))
    assert not extras - named, f"README's Extras paragraph does not name {extras - named}"
    words = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
    assert f"`all` is all {words.get(len(extras), len(extras))}" in paragraph
