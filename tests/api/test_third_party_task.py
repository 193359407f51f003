"""A task and a model backend in their own installable package (``mytask_pkg``, shown whole in
``docs/writing-a-task.md``): at most 40 lines of code, registered through the ``toolbench.tasks``
and ``toolbench.models`` entry points, run through the real command line (a run, its resume,
the response cache, the report) and through ``toolbench.run`` with the objects themselves.

pip builds and installs the package into a folder of its own (``--target``) that the commands
find on ``PYTHONPATH``: the entry points are read from the ``dist-info`` pip wrote, as for any
installed distribution, and the shared virtual environment is left as it was. Without
setuptools to build with, the same ``dist-info`` is written by hand.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import read_run

PACKAGE = Path(__file__).with_name("mytask_pkg")
MAX_CODE_LINES = 40
# What pip writes from the pyproject's entry points (used when it cannot build here).
ENTRY_POINTS = """[toolbench.models]
mymodel = mytask_pkg:MyModel

[toolbench.tasks]
mytask = mytask_pkg:TASK
"""


def code_lines(folder: Path) -> int:
    """Lines of Python in the package that are neither blank nor comments."""
    count = 0
    for path in folder.rglob("*.py"):
        for line in path.read_text().splitlines():
            count += bool(line.strip()) and not line.strip().startswith("#")
    return count


def install(site: Path, work: Path) -> None:
    """``mytask_pkg`` installed into ``site`` as pip installs it."""
    source = work / "src"
    shutil.copytree(PACKAGE, source)  # pip builds in the source tree: keep the repo clean
    if importlib.util.find_spec("setuptools") is not None:
        command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                   "--no-index", "--quiet", "--target", str(site), str(source)]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return
    shutil.copytree(source / "mytask_pkg", site / "mytask_pkg")
    info = site / "mytask_pkg-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mytask-pkg\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("mytask")
    site = work / "site"
    install(site, work)
    return site


def toolbench(site: Path, cache: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(site), "TOOLBENCH_CACHE_DIR": str(cache)}
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run([sys.executable, "-m", "toolbench.cli", *args], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_package_is_at_most_40_lines_of_code() -> None:
    assert code_lines(PACKAGE) <= MAX_CODE_LINES


def test_run_resume_cache_and_report_through_the_command_line(site: Path, tmp_path: Path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "run"
    assert "mytask" in toolbench(site, cache, "list", "tasks")
    assert "mymodel" in toolbench(site, cache, "list", "models")
    run = ("run", "mytask", "--model", "mymodel:x", "--sandbox-workers", "1")
    toolbench(site, cache, *run, "--out", str(out))
    info, records = read_run(out)
    assert info["metrics"]["mytask"]["success_rate"] == 1.0
    assert info["metrics"]["mytask"]["even_rate"] == pytest.approx(2 / 3)
    assert sorted(r["id"] for r in records) == ["a", "b", "c"]
    assert not any(call["cached"] for r in records for call in r["calls"])
    log = (out / "samples.jsonl").read_bytes()

    again = toolbench(site, cache, *run, "--out", str(out))  # resumed: nothing left to run
    assert "this session: 0 samples" in again
    assert (out / "samples.jsonl").read_bytes() == log

    fresh = tmp_path / "fresh"
    toolbench(site, cache, *run, "--out", str(fresh))  # a new folder, the same cache
    _, cached = read_run(fresh)
    assert all(call["cached"] for r in cached for call in r["calls"]) and len(cached) == 3

    report = toolbench(site, cache, "report", str(out))
    assert "even_rate" in report and "mytask" in report


def test_toolbench_run_takes_the_task_and_model_objects(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolbench as api

    monkeypatch.syspath_prepend(str(site))
    from mytask_pkg import MyModel, MyTask

    result = api.run(task=MyTask(), model=MyModel("y", None), out=tmp_path / "api",
                     cache_dir=tmp_path / "cache")  # fmt: skip
    assert result.info["config"]["tasks"] == ["mytask"]
    assert result.info["config"]["model"] == "mymodel:y"
    assert result.info["metrics"]["mytask"]["even_rate"] == pytest.approx(2 / 3)
    assert result.info["metrics"]["mytask"]["success_rate"] == 1.0


def test_the_guide_shows_the_package_as_it_is() -> None:
    guide = (Path(__file__).parents[2] / "docs" / "writing-a-task.md").read_text()
    for path in ("pyproject.toml", "mytask_pkg/__init__.py"):
        assert (PACKAGE / path).read_text() in guide, path
