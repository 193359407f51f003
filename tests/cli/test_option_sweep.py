"""Every option of every command, given bad values, is exit 2 with a few lines and no traceback.

The options are read from ``build_parser()``, and the bad values from each option's type (see
``toolbench.cli.argtypes``: whole numbers get text, fractions and values past their bounds;
numbers nan and inf; paths empty strings, paths under a regular file, missing inputs, folders
for files and files for folders, unwritable places; choices an unknown word; free text an
empty or blank value, plus known-wrong words where the text is a name). A flag added later
is swept without being listed here; one whose type the sweep cannot make bad values for
fails the sweep until it gets one. Each case starts from a command line that is good, so
that the one bad value is what gets refused (``BASES``); a good command that would serve or
ask a person is stopped by ``_Accepted``, so an accepted bad value fails fast.

Run in-process through ``toolbench.cli.main.main`` for speed; a few cases run as real
processes (``test_a_few_cases_as_real_processes``).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolbench.cli import argtypes
from toolbench.cli.aware_parser import _ceiling
from toolbench.cli.main import all_parsers, build_parser, main

MAX_LINES = 3  # "at most a few lines" on stderr
PROGS = [parser.prog for parser in all_parsers(build_parser())]


class _Accepted(Exception):
    """Raised where a command would start serving or asking a person: it took the value."""


@dataclass(frozen=True)
class World:
    folder: Path
    afile: Path  # a regular file
    adir: Path  # an empty folder
    dataset: Path  # an awareness dataset (all accepted)
    run: Path  # a finished one-sample run folder

    @property
    def missing(self) -> Path:
        return self.folder / "does-not-exist"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    folder = tmp_path_factory.mktemp("sweep")
    afile, adir = folder / "afile", folder / "adir"
    afile.write_text("x\n")
    adir.mkdir()
    dataset, run = folder / "aware.jsonl", folder / "run"
    old = os.environ.get("TOOLBENCH_CACHE_DIR")
    os.environ["TOOLBENCH_CACHE_DIR"] = str(folder / "cache")
    try:
        assert (
            _call(
                [
                    "aware",
                    "build",
                    "--source",
                    "task:home_search",
                    "--manipulation",
                    "slot_removal",
                    "--out",
                    str(dataset),
                ]
            )[0]
            == 0
        )
        assert (
            _call(["run", "home_search", "--model", "baseline", "--limit", "1", "--out", str(run)])[
                0
            ]
            == 0
        )
        _one_decision(dataset)
    finally:
        if old is None:
            os.environ.pop("TOOLBENCH_CACHE_DIR", None)
        else:
            os.environ["TOOLBENCH_CACHE_DIR"] = old
    return World(folder, afile, adir, dataset, run)


def _one_decision(dataset: Path) -> None:
    """A review store beside the dataset, so that ``aware export`` has something to write."""
    from toolbench.aware.review.store import ReviewStore, default_db_path
    from toolbench.aware.schema import read_instances

    instances = read_instances(dataset)
    incomplete = next(i.id for i in instances if i.label == "incomplete")
    ids = [i.id for i in instances]
    with ReviewStore(default_db_path(dataset), ids, dataset=dataset) as store:
        store.accept(incomplete, "sweep")


def _bases(w: World) -> dict[str, tuple[dict[str, str], dict[str, str | None]]]:
    """A good command line per parser: (positional values by dest, options). Each is cheap:
    one sample, one family, or a command stopped by ``_Accepted`` before it serves."""
    data = str(w.dataset)
    return {
        "toolbench": ({}, {}),
        "toolbench run": (
            {"tasks": "home_search"},
            {"--model": "baseline", "--limit": "1", "--out": str(w.folder / "r")},
        ),
        "toolbench serve": ({"task": "open_weather"}, {"--port": "0"}),
        "toolbench prompt": ({"task": "home_search"}, {"--sample": "0"}),
        "toolbench report": ({"runs": str(w.run)}, {}),
        "toolbench show": ({"run": str(w.run)}, {}),
        "toolbench data": ({}, {}),
        "toolbench data generate": (
            {"task": "home_search"},
            {"--n": "1", "--out": str(w.folder / "gen")},
        ),
        "toolbench aware": ({}, {}),
        "toolbench aware build": (
            {},
            {
                "--source": "task:home_search",
                "--manipulation": "tool_removal",
                "--out": str(w.folder / "b.jsonl"),
            },
        ),
        "toolbench aware verify": ({"dataset": data}, {}),
        "toolbench aware export": ({"dataset": data}, {"--out": str(w.folder / "e.jsonl")}),
        "toolbench aware stats": ({"datasets": data}, {}),
        "toolbench aware run": (
            {"dataset": data},
            {"--model": "always-yes", "--limit": "1", "--out": str(w.folder / "ar")},
        ),
        "toolbench aware prompt": ({"dataset": data}, {}),
        "toolbench aware human": ({"dataset": data}, {"--report": None}),
        "toolbench web_shop": ({}, {}),
        "toolbench web_shop human": (
            {},
            {"--n": "1", "--port": "0", "--out": str(w.folder / "wh")},
        ),
        "toolbench list": ({"what": "tasks"}, {}),
    }


#: Text values that are wrong for what the text names (checked when the command runs).
NAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("toolbench run", "tasks"): ("nope", "home_search,nope"),
    ("toolbench run", "--model"): (
        "nope",
        "openia:x",
        "openai:",
        "replay:/no/such.jsonl",
        "always-yes",
        "random:x",
    ),
    ("toolbench run", "--version"): ("v99",),
    ("toolbench serve", "task"): ("nope", "google_sheets"),
    ("toolbench serve", "--host"): ("no such host!", "203.0.113.5"),
    ("toolbench serve", "--api-key"): ("two words",),
    ("toolbench prompt", "task"): ("nope",),
    ("toolbench prompt", "--sample"): ("999999",),
    ("toolbench prompt", "--version"): ("v99",),
    ("toolbench show", "--task"): ("nope",),
    ("toolbench show", "--id"): ("nope",),
    ("toolbench data generate", "task"): ("nope", "web_shop"),
    ("toolbench aware build", "--source"): ("nope:x", "task:nope", "apibank:/no/such"),
    ("toolbench aware build", "--manipulation"): ("nope",),
    ("toolbench aware build", "--model"): ("nope", "baseline", "always-no"),
    ("toolbench aware build", "--verify-model"): ("oracle", "openai:judge"),
    ("toolbench aware run", "--model"): ("baseline", "nope", "random:x"),
    ("toolbench aware run", "--mode"): ("nope", ","),
    ("toolbench aware run", "--shots"): ("3", "x", "-2"),
    ("toolbench aware run", "--judge"): ("baseline", "openai:judge"),
    ("toolbench aware prompt", "--id"): ("nope",),
    ("toolbench aware prompt", "--mode"): ("nope",),
    ("toolbench aware prompt", "--shots"): ("3",),
    ("toolbench web_shop human", "--name"): ("two words", "x" * 65),
    ("toolbench web_shop human", "--host"): ("no such host!", "203.0.113.5"),
}


def bad_values(prog: str, action: argparse.Action, w: World) -> tuple[str, ...]:
    """Values of the wrong type, out of range, unusable paths or empty, as fit the type."""
    kind = action.type
    if action.choices is not None:
        return ("nope", "")
    if isinstance(kind, argtypes.IntRange):
        high = () if kind.maximum is None else (str(kind.maximum + 1),)
        return ("x", "1.5", "", "1e3", str(kind.minimum - 1), *high)
    if isinstance(kind, argtypes.FloatRange):
        low = str(kind.low) if kind.low_open else str(kind.low - 1)
        high = () if kind.high is None else (str(kind.high + 1),)
        return ("x", "", "nan", "inf", "-inf", low, *high)
    if kind is _ceiling:
        return ("x", "", "nan", "2", "-1.5")
    if kind is argtypes.url:
        return ("", "localhost:8000", "ftp://host/v1", "http://")
    if kind is argtypes.role:
        return ("", "judge", "=oracle", "judge=", "2x=oracle")
    if kind is argtypes.stop_sequence:
        return ("",)
    if kind is argtypes.hf_device:
        return ("", "gpu", "cuda:", "cuda:x", "tpu:0")
    if kind is argtypes.model_arg:  # the last: a key the backend (oracle) does not take
        return ("", "batch_size", "=4", "nosuchkey=1")
    if kind is argtypes.task_option:
        return ("", "history=2", "web_shop=2", "web_shop.=2", ".history=2", "web_shop.2x=1")
    if kind is argtypes.text:
        return (
            "",
            "   ",
            *NAMES.get(
                (prog, action.option_strings[0] if action.option_strings else action.dest), ()
            ),
        )
    if isinstance(kind, argtypes.PathArg):
        common = ("", f"{w.afile}/below")
        by_kind = {
            "file": (str(w.missing), str(w.adir)),
            "folder": (str(w.missing), str(w.afile)),
            "path": (str(w.missing),),
            "new_file": (str(w.adir), "/proc/toolbench-sweep/out.jsonl"),
            "new_folder": (str(w.afile), "/proc/1", "/proc/toolbench-sweep/out"),
        }
        return (*common, *by_kind[kind.kind])
    name = action.option_strings or action.dest
    raise AssertionError(
        f"{prog} {name}: the sweep has no bad values for type {kind!r}; "
        "use a type from toolbench.cli.argtypes"
    )


@dataclass(frozen=True)
class Case:
    prog: str
    option: str
    value: str | None  # None: a switch given a value
    argv: tuple[str, ...]


def _argv(
    parser: argparse.ArgumentParser,
    base: tuple[dict[str, str], dict[str, str | None]],
    dest: str | None,
    flag: str | None,
    value: str,
) -> list[str]:
    """The base command line with one positional (by dest) or option (by flag) made bad."""
    positionals, options = base
    words = parser.prog.split()[1:]
    for action in parser._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            words.append(value if action.dest == dest else positionals[action.dest])
    for name, given in options.items():
        if name != flag:
            words.extend([name] if given is None else [name, given])
    if flag is not None:
        words.append(f"{flag}={value}")  # '=': a value such as '-1' is never read as a flag
    return words


def sweep(w: World) -> Iterator[Case]:
    bases = _bases(w)
    for parser in all_parsers(build_parser()):
        assert parser.prog in bases, f"{parser.prog}: add a good command line to _bases"
        base = bases[parser.prog]
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if isinstance(action, argparse._VersionAction) or action.nargs == 0:
                switch = action.option_strings[0]
                words = _argv(parser, base, None, None, "")
                yield Case(parser.prog, switch, None, (*words, f"{switch}=yes"))
                continue
            flag = action.option_strings[0] if action.option_strings else None
            for value in bad_values(parser.prog, action, w):
                words = _argv(parser, base, None if flag else action.dest, flag, value)
                yield Case(parser.prog, flag or action.dest, value, tuple(words))


def _call(argv: list[str], env: dict[str, str] | None = None) -> tuple[int | str, str]:
    """(exit code or 'accepted' / 'traceback', stderr) of one in-process command."""
    err = io.StringIO()
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(err):
            try:
                code: int | str = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except _Accepted:
                code = "accepted"
            except Exception:
                err.write(traceback.format_exc())
                code = "traceback"
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return code, err.getvalue()


@pytest.fixture(autouse=True)
def _nothing_serves_or_asks(monkeypatch: pytest.MonkeyPatch) -> None:
    def accepted(*_: object, **__: object) -> None:
        raise _Accepted

    import uvicorn

    from toolbench.aware.evaluate import human, human_web
    from toolbench.aware.review import terminal, web

    monkeypatch.setattr(uvicorn.Server, "run", accepted)  # after --host/--port are bound
    monkeypatch.setattr(uvicorn, "run", accepted)
    monkeypatch.setattr(terminal, "run_review", accepted)
    monkeypatch.setattr(web, "serve_review", accepted)
    monkeypatch.setattr(human_web, "serve_human", accepted)
    monkeypatch.setattr(human.HumanSession, "annotate", accepted)


def _verdict(code: int | str, err: str) -> str | None:
    """None if the case was refused as it should be, else what went wrong."""
    lines = err.strip().splitlines()
    if "Traceback" in err:
        return f"traceback: {lines[-1] if lines else ''}"
    if code != 2:
        return f"exit {code}"
    if not lines or len(lines) > MAX_LINES:
        return f"{len(lines)} lines on stderr: {err[:300]!r}"
    return None


def test_the_sweep_covers_every_option_of_every_command(world: World) -> None:
    cases = list(sweep(world))
    swept = {(case.prog, case.option) for case in cases}
    every = {
        (parser.prog, action.option_strings[0] if action.option_strings else action.dest)
        for parser in all_parsers(build_parser())
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
    }
    assert swept == every
    print(f"\noption sweep: {len(swept)} options, {len(cases)} bad command lines")
    assert len(swept) >= 120 and len(cases) >= 450


@pytest.mark.parametrize("prog", PROGS)
def test_every_base_command_line_is_good(prog: str, world: World) -> None:
    """The sweep's starting points must succeed (or reach a server or a person): otherwise
    a bad value could be 'refused' for some other reason."""
    parser = next(p for p in all_parsers(build_parser()) if p.prog == prog)
    if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        return  # a command family: nothing runs without a subcommand
    base = _bases(world)[prog]
    code, err = _call(_argv(parser, base, None, None, ""))
    assert code in (0, "accepted"), err


def _sweep_of(prog: str, world: World) -> list[str]:
    failures = []
    for case in sweep(world):
        if case.prog != prog:
            continue
        code, err = _call(list(case.argv))
        problem = _verdict(code, err)
        if problem is not None:
            failures.append(f"{case.prog} {case.option} {case.value!r}: {problem}")
    return failures


@pytest.mark.parametrize("prog", PROGS)
def test_every_bad_value_is_exit_2_in_a_few_lines(prog: str, world: World) -> None:
    failures = _sweep_of(prog, world)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        (["run", "home_search", "--model", "baseline"], {"TOOLBENCH_ISOLATION": "bogus"}),
        (["run", "home_search", "--model", "baseline"], {"TOOLBENCH_ISOLATION": "ful"}),
        (["run", "home_search", "--model", "baseline"], {"TOOLBENCH_CACHE_DIR": "{afile}"}),
        (["run", "home_search", "--model", "baseline"], {"TOOLBENCH_CACHE_DIR": "{afile}/x"}),
        (["run", "home_search", "--model", "baseline"], {"TOOLBENCH_CACHE_DIR": "/proc/1"}),
        (["prompt", "home_search", "--sample", "0"], {"TOOLBENCH_CACHE_DIR": "{afile}"}),
        (["aware", "run", "{dataset}", "--model", "always-no"], {"TOOLBENCH_CACHE_DIR": "/proc/1"}),
        (["run", "open_weather", "--model", "baseline", "--live"], {"OPEN_WEATHER_KEY": ""}),
        (
            ["run", "google_sheets", "--model", "baseline", "--live", "--limit", "1"],
            {"GOOGLE_APPLICATION_CREDENTIALS": "{afile}", "TOOLBENCH_SHEETS_CLIENT": "nope"},
        ),
        (
            ["run", "google_sheets", "--model", "baseline", "--live", "--limit", "1"],
            {"GOOGLE_APPLICATION_CREDENTIALS": "{afile}", "TOOLBENCH_SHEETS_CLIENT": "json:nope"},
        ),
    ],
    ids=lambda value: json.dumps(value) if isinstance(value, dict) else " ".join(value[:2]),
)
def test_unknown_environment_settings_are_exit_2(
    argv: list[str], env: dict[str, str], world: World, tmp_path: Path
) -> None:
    fill = {"afile": str(world.afile), "dataset": str(world.dataset)}
    argv = [word.format(**fill) for word in argv]
    if argv[0] in ("run", "aware"):
        argv += ["--out", str(tmp_path / "out")]
    code, err = _call(argv, {key: value.format(**fill) for key, value in env.items()})
    assert _verdict(code, err) is None, err
    assert any(name in err for name in env), err


def test_a_few_cases_as_real_processes(world: World, tmp_path: Path) -> None:
    """The installed entry point, not just main(): exit status, stderr, no traceback."""
    toolbench = [sys.executable, "-m", "toolbench.cli"]
    out = str(tmp_path / "out")
    cases: list[tuple[list[str], dict[str, str]]] = [
        (["run", "home_search", "--model", "baseline", "--sandbox-timeout", "0"], {}),
        (["run", "home_search", "--model", "baseline", "--timeout", "0", "--out", out], {}),
        (["run", "home_search", "--model", "baseline", "--cache-dir", str(world.afile)], {}),
        (["run", "home_search", "--model", "baseline", "--out", f"{world.afile}/x"], {}),
        (["run", "home_search", "--model", "baseline", "--out", "/proc/toolbench/x"], {}),
        (
            ["run", "home_search", "--model", "baseline", "--out", out],
            {"TOOLBENCH_ISOLATION": "bogus"},
        ),
        (["aware", "run", str(world.dataset), "--model", "baseline", "--out", out], {}),
    ]
    env = {k: v for k, v in os.environ.items() if k != "TOOLBENCH_ISOLATION"}
    for argv, extra in cases:
        done = subprocess.run(
            [*toolbench, *argv],
            capture_output=True,
            text=True,
            timeout=120,
            env={**env, **extra},
        )
        assert _verdict(done.returncode, done.stderr) is None, (argv, done.stderr)
    assert not Path(out).exists(), "a refused command left a run folder"
    shutil.rmtree(tmp_path, ignore_errors=True)
