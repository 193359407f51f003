"""One broken plugin distribution never takes the listing, the built-ins or other runs down
(issue 36, part 2).

Each case is a real installed distribution: a folder holding its module and a ``dist-info``
(METADATA, entry_points.txt) that a ``toolbench`` subprocess finds on ``PYTHONPATH``, as pip
would leave it. For every kind of breakage (an ImportError at import, an object that is no
task or model factory, a built-in's name, ``SystemExit`` or a ``KeyboardInterrupt`` raised
at import, an entry_points.txt that does not read) ``toolbench list tasks`` and ``toolbench
list models`` exit 0, list every built-in, and print one warning line naming the entry point
(or distribution) and the fix. ``toolbench run home_search --model oracle`` works beside them,
and asking for a broken one by name is exit 2 with its one-line reason.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolbench.models.registry import BUILTIN as BUILTIN_MODELS
from toolbench.plugins import PluginError, call_plugin
from toolbench.tasks.registry import BUILTIN as BUILTIN_TASKS


@dataclass(frozen=True)
class Broken:
    dist: str  # the distribution's name
    module: str  # its module's source
    entry_points: str  # its entry_points.txt
    says: str  # what its warning must say (besides the entry point and distribution)
    task: str  # the name it registers in each group
    model: str


def _both(name: str, module: str, task: str = "TASK", model: str = "make") -> str:
    tasks = f"[toolbench.tasks]\n{name} = {module}:{task}\n"
    return f"{tasks}\n[toolbench.models]\n{name} = {module}:{model}\n"


CASES = {
    "import_error": Broken(
        "broken-import",
        "raise ImportError('needs libfoo 9')\n",
        _both("brokenimport", "tb_broken_import"),
        "ImportError: needs libfoo 9",
        "brokenimport",
        "brokenimport",
    ),
    "wrong_type": Broken(
        "wrong-type",
        "TASK = 'not a task'\nMODEL = 42\n",
        _both("wrongtype", "tb_wrong_type", model="MODEL"),
        "is not a task|neither a model factory nor a KnownModel",
        "wrongtype",
        "wrongtype",
    ),
    "builtin_name": Broken(
        "builtin-name",
        "raise RuntimeError('never imported: the built-in keeps its name')\n",
        _both("home_search", "tb_builtin_name").replace(
            "[toolbench.models]\nhome_search", "[toolbench.models]\noracle"
        ),
        "a built-in (task|model) is called",
        "home_search",
        "oracle",
    ),
    "system_exit": Broken(
        "exits-at-import",
        "import sys\nsys.exit(3)\n",
        _both("exits", "tb_exits"),
        "SystemExit: 3",
        "exits",
        "exits",
    ),
    "keyboard_interrupt": Broken(
        "interrupts-at-import",
        "raise KeyboardInterrupt\n",
        _both("interrupts", "tb_interrupts"),
        "KeyboardInterrupt raised by the plugin itself",
        "interrupts",
        "interrupts",
    ),
}


def install(site: Path, case: Broken) -> None:
    """The distribution as pip leaves it on a path."""
    module = case.dist.replace("-", "_")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {case.dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(case.entry_points)
    for line in case.entry_points.splitlines():
        if "=" in line:
            name = line.partition("=")[2].strip().partition(":")[0]
            (site / f"{name}.py").write_text(textwrap.dedent(case.module))


def toolbench(site: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "TOOLBENCH_CACHE_DIR": str(tmp / "cache"),
        "COLUMNS": "300",
    }
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "toolbench.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def warnings_of(done: subprocess.CompletedProcess[str]) -> list[str]:
    lines = done.stderr.splitlines()
    assert all(line.startswith("toolbench: warning: ") for line in lines), done.stderr
    return lines


def first_column(stdout: str) -> set[str]:
    return {line.split("│")[1].strip() for line in stdout.splitlines() if line.count("│") > 2}


def check_warning(line: str, case: Broken, name: str) -> None:
    import re

    assert case.dist in line, line
    assert re.search(case.says, line), line
    assert "uninstall" in line, line  # the fix: the distribution to fix or remove
    assert f"entry point {name} = " in line, line


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_a_broken_distribution_is_one_warning_and_the_listing_goes_on(
    case: Broken, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    install(site, case)

    tasks = toolbench(site, tmp_path, "list", "tasks")
    assert tasks.returncode == 0, tasks.stdout + tasks.stderr
    assert set(BUILTIN_TASKS) <= first_column(tasks.stdout)
    (line,) = warnings_of(tasks)
    check_warning(line, case, case.task)

    models = toolbench(site, tmp_path, "list", "models")
    assert models.returncode == 0, models.stdout + models.stderr
    assert {entry.spec for entry in BUILTIN_MODELS} <= first_column(models.stdout)
    (line,) = warnings_of(models)
    check_warning(line, case, case.model)


@pytest.fixture(scope="module")
def every_broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("broken") / "site"
    for case in CASES.values():
        install(site, case)
    return site


def test_all_of_them_at_once_are_one_line_each(every_broken: Path, tmp_path: Path) -> None:
    for what in ("tasks", "models"):
        done = toolbench(every_broken, tmp_path, "list", what)
        assert done.returncode == 0, done.stderr
        assert len(warnings_of(done)) == len(CASES), done.stderr
        for case in CASES.values():
            assert sum(case.dist in line for line in warnings_of(done)) == 1, case.dist


def test_other_runs_are_unaffected(every_broken: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    run = ("run", "home_search", "--model", "oracle", "--limit", "2", "--sandbox-workers", "1")
    done = toolbench(every_broken, tmp_path, *run, "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning" not in done.stderr
    assert (out / "run.json").is_file()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("run", "brokenimport", "--model", "oracle"), "ImportError: needs libfoo 9"),
        (("run", "exits", "--model", "oracle"), "SystemExit: 3"),
        (("run", "wrongtype", "--model", "oracle"), "is not a task"),
        (("run", "home_search", "--model", "interrupts"), "KeyboardInterrupt raised by"),
        (("run", "home_search", "--model", "wrongtype:x"), "neither a model factory"),
    ],
)
def test_asking_for_a_broken_one_is_exit_2_with_its_reason(
    every_broken: Path, tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    done = toolbench(every_broken, tmp_path, *args, "--out", str(tmp_path / "run"))
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("toolbench: error: entry point ") and says in line, line
    assert not (tmp_path / "run").exists()


# -- a plugin's KeyboardInterrupt is its fault; the user's Ctrl-C still stops the command ----


def test_a_keyboard_interrupt_the_plugin_raises_is_a_plugin_error() -> None:
    def plugin() -> None:
        raise KeyboardInterrupt

    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(PluginError, match="KeyboardInterrupt raised by the plugin itself"):
        call_plugin(plugin)
    assert signal.getsignal(signal.SIGINT) is before


def test_a_real_ctrl_c_while_a_plugin_imports_still_interrupts() -> None:
    def slow_plugin() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # the handler runs between two bytecodes
            sum(range(1000))

    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        call_plugin(slow_plugin)
    assert signal.getsignal(signal.SIGINT) is before


def test_off_the_main_thread_every_keyboard_interrupt_is_taken_as_real() -> None:
    caught: list[BaseException] = []

    def plugin() -> None:
        raise KeyboardInterrupt

    def worker(function: Callable[[], None]) -> None:
        try:
            call_plugin(function)
        except BaseException as exc:  # what reached the caller
            caught.append(exc)

    thread = threading.Thread(target=worker, args=(plugin,))
    thread.start()
    thread.join()
    assert [type(exc) for exc in caught] == [KeyboardInterrupt]


def test_system_exit_and_other_base_exceptions_are_plugin_errors() -> None:
    def exits() -> None:
        sys.exit("bye")

    with pytest.raises(PluginError, match="SystemExit: bye"):
        call_plugin(exits)
    with pytest.raises(PluginError, match="GeneratorExit"):
        call_plugin(lambda: (_ for _ in ()).throw(GeneratorExit))
