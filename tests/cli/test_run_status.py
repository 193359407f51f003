"""Runs a new user cannot break: one process per run folder, and a run's status said wherever
its numbers are printed.

Real processes throughout: two ``toolbench run`` started together into one folder (many times
over, fresh and half-done folders), Ctrl-C and ``kill -9`` mid-run, a folder held by a live
process. The model is a real OpenAI-compatible server on 127.0.0.1 that answers slowly enough
for runs to overlap.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_resilience import scripted_answer, wait_for_records
from tests.conftest import CliResult, read_run
from tests.fakeserver import FakeOpenAIServer
from toolbench.runner import lifecycle
from toolbench.runner.lock import FolderLock

Cli = Callable[..., CliResult]
N = 40  # samples a run plans (--limit)


def _args(server: FakeOpenAIServer, out: Path, *extra: str) -> list[str]:
    return [
        "run", "home_search", "--model", "openai:fake", "--base-url", server.base_url,
        "--out", str(out), "--limit", str(N), "--concurrency", "2", *extra,
    ]  # fmt: skip


def _start(server: FakeOpenAIServer, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "toolbench.cli", *_args(server, out, *extra)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _interrupted_run(server: FakeOpenAIServer, out: Path, after: int) -> None:
    """A run stopped with Ctrl-C once ``after`` records are written."""
    proc = _start(server, out, "--no-cache")
    wait_for_records(out / "samples.jsonl", after)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130


def _one_record_per_key(out: Path) -> None:
    _, records = read_run(out)
    keys = [(r["task"], str(r["id"]), r["epoch"]) for r in records]
    assert len(keys) == len(set(keys)) == N, f"{len(keys)} records, {len(set(keys))} keys"


def test_two_runs_started_together_into_one_folder_never_duplicate(
    cli: Cli, tmp_path: Path
) -> None:
    """Four rounds of two real processes into one folder (fresh and half-done, cached and
    not): one runs, the other is refused with one line naming the holder (or, if the first was
    already done, finds nothing left to do); the log always ends with one record per sample."""
    with FakeOpenAIServer(delay_s=0.02, answer=scripted_answer) as server:
        half_done = tmp_path / "half-done"
        _interrupted_run(server, half_done, after=8)
        for round_ in range(4):
            out = tmp_path / f"round{round_}"
            if round_ % 2:
                shutil.copytree(half_done, out)
            extra = ("--no-cache",) if round_ < 2 else ()
            pair = [_start(server, out, *extra), _start(server, out, *extra)]
            results = [(proc.wait(timeout=240), proc.communicate()[1].decode()) for proc in pair]
            codes = sorted(code for code, _ in results)
            assert codes in ([0, 0], [0, 2]), results
            for code, err in results:
                if code == 2:
                    lines = err.strip().splitlines()
                    assert len(lines) == 1 and "run folder in use by process" in lines[0], err
                    assert str(out) in lines[0]
            _one_record_per_key(out)
            code, text, err = cli("report", str(out))
            assert code == 0, err
            assert "status: complete, 40 of 40 sample x epochs done" in text


def test_an_interrupted_run_says_so_everywhere_its_numbers_are_printed(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, whole = tmp_path / "partial", tmp_path / "whole"
    with FakeOpenAIServer(delay_s=0.05, answer=scripted_answer) as server:
        _interrupted_run(server, out, after=6)
        info, records = read_run(out)
        assert info["status"] == "interrupted"
        assert info["progress"] == {"done": len(records), "planned": N}
        done = len(records)
        assert cli(*_args(server, whole))[0] == 0

        code, text, _ = cli("report", str(out))
        assert code == 0
        assert f"INTERRUPTED: {done} of {N} sample x epochs done" in text
        resume = text.split("resume with: ", 1)[1].split("\n", 1)[0]
        assert resume.startswith("toolbench run home_search") and str(out) in resume

        status = json.loads(cli("report", str(out), "--json")[1])["status"][str(out)]
        assert status["state"] == "interrupted" and not status["finished"]
        assert (status["done"], status["planned"], status["resume"]) == (done, N, resume)

        exports = {flag: tmp_path / f"r.{flag}" for flag in ("csv", "markdown", "html")}
        flags = [f"--{flag}={path}" for flag, path in exports.items()]
        assert cli("report", str(out), str(whole), *flags)[0] == 0
        rows = list(csv.DictReader(io.StringIO(exports["csv"].read_text())))
        state = next(r for r in rows if r["table"] == "run status" and r["column"] == "status"
                     and r["row"].startswith("partial"))  # fmt: skip
        assert state["value"] == "interrupted"
        assert "| partial (openai:fake) | interrupted |" in exports["markdown"].read_text()
        html = exports["html"].read_text()
        assert f"INTERRUPTED: {done} of {N} sample x epochs done" in html
        assert "comparing runs that are not all finished" in html

        code, text, _ = cli("report", str(out), str(whole))
        assert "comparing runs that are not all finished: partial is interrupted" in text
        code, text, _ = cli("show", str(out), "--limit", "1")
        assert code == 0 and text.startswith(f"status: INTERRUPTED: {done} of {N}")

        # The printed command resumes the run to the end.
        assert cli(*shlex.split(resume)[1:])[0] == 0
    _one_record_per_key(out)
    code, text, _ = cli("report", str(out))
    assert "status: complete, 40 of 40 sample x epochs done (100%)" in text
    assert "resume with" not in text


def test_a_killed_run_is_reported_interrupted_and_a_live_one_in_progress(
    cli: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(delay_s=0.5, answer=scripted_answer) as server:
        proc = _start(server, out, "--no-cache")
        wait_for_records(out / "samples.jsonl", 5)
        code, text, _ = cli("report", str(out))  # read while the run writes
        assert code == 0 and f"status: IN PROGRESS (process {proc.pid}" in text
        refused = cli(*_args(server, out))
        assert refused[0] == 2 and f"in use by process {proc.pid}" in refused[2]
        assert len(refused[2].strip().splitlines()) == 1
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    info, records = read_run(out)
    assert info["status"] == "running"  # what the killed process last wrote
    code, text, _ = cli("report", str(out), "--json")
    status = json.loads(text)["status"][str(out)]
    assert status["state"] == "interrupted" and status["done"] == len(records)
    # A folder held by a live process (this one, through its own lock) reads as in progress.
    lock = FolderLock(out)
    lock.acquire()
    try:
        text = cli("report", str(out))[1]
        assert "IN PROGRESS (process" in text and "these numbers will change" in text
    finally:
        lock.release()


def test_without_a_terminal_progress_is_printed_as_plain_lines(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lifecycle, "PLAIN_PROGRESS_EVERY_S", 0.0)
    code, text, _ = cli("run", "home_search", "--model", "baseline", "--limit", "5",
                        "--out", str(tmp_path / "r"))  # fmt: skip
    assert code == 0
    assert "progress: 5 sample x epochs to do (0 of 5 done before)" in text
    assert "progress: 5/5 sample x epochs (100%)" in text
    assert "samples/s this session (solving only, loading excluded)" in text


ALL_TASKS = (
    "home_search,booking,open_weather,the_cat_api,google_sheets,virtual_home,web_shop,tabletop"
)


def test_wide_tables_read_at_100_columns(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The all-task summary and a report of several runs: no line over 100 columns, and every
    task and metric name printed whole."""
    monkeypatch.setenv("COLUMNS", "100")
    runs = [tmp_path / name for name in ("a", "b", "c")]
    code, text, err = cli("run", ALL_TASKS, "--model", "baseline", "--limit", "2",
                          "--out", str(runs[0]))  # fmt: skip
    assert code == 0, err
    for copy in runs[1:]:
        shutil.copytree(runs[0], copy)
    code, report, _ = cli("report", *map(str, runs))
    assert code == 0
    for printed in (text, report):
        lines = [line for line in printed.splitlines() if set(line) & set("│┃┏└")]
        assert max(map(len, lines)) <= 100, max(lines, key=len)
        for name in [*ALL_TASKS.split(","), "success_rate", "crash_rate", "success_rate_strict"]:
            assert any(f" {name} " in line for line in lines), name


def test_every_writer_of_a_run_folder_takes_the_same_lock(cli: Cli, tmp_path: Path) -> None:
    """Awareness runs and a person's web_shop episodes refuse a folder another process runs,
    exactly as ``toolbench run`` does (one implementation: ``runner.lifecycle.open_run``)."""
    dataset = tmp_path / "aware.jsonl"
    assert cli("aware", "build", "--source", "task:home_search", "--manipulation",
               "slot_removal", "--seed", "0", "--out", str(dataset))[0] == 0  # fmt: skip
    held = tmp_path / "held"
    lock = FolderLock(held)
    lock.acquire()
    try:
        attempts = {
            "aware": ("aware", "run", str(dataset), "--model", "oracle", "--limit", "4"),
            "web_shop": ("web_shop", "human", "--n", "1", "--port", "0"),
            "run": ("run", "home_search", "--model", "baseline", "--limit", "2"),
        }
        for kind, argv in attempts.items():
            code, _, err = cli(*argv, "--out", str(held))
            assert code == 2, (kind, err)
            assert err.strip() == (
                f"toolbench: error: {held}: run folder in use by process {os.getpid()}, "
                f"running since {_started(held)}; wait for it to finish (or stop it), "
                "or give another --out"
            ), kind
    finally:
        lock.release()
    assert sorted(p.name for p in held.iterdir()) == [".lock"]  # nothing was written
    code, _, err = cli("aware", "run", str(dataset), "--model", "oracle", "--limit", "4",
                       "--out", str(held))  # fmt: skip
    assert code == 0, err


def _started(folder: Path) -> str:
    return str(json.loads((folder / ".lock").read_text())["started"])


def test_run_json_progress_is_kept_current_during_a_run(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever reads run.json alone (a dashboard, a batch script) sees how far a live run got."""
    from toolbench.runner.store import RunStore

    monkeypatch.setattr(lifecycle, "PROGRESS_WRITE_EVERY_S", 0.0)
    written: list[tuple[str, dict[str, int]]] = []
    original = RunStore.write_info

    def spy(self: RunStore, info: dict[str, object]) -> None:
        original(self, info)
        on_disk = json.loads(self.run_file.read_text())
        written.append((on_disk["status"], on_disk["progress"]))

    monkeypatch.setattr(RunStore, "write_info", spy)
    code, _, err = cli("run", "home_search", "--model", "baseline", "--limit", "6",
                       "--concurrency", "1", "--out", str(tmp_path / "r"))  # fmt: skip
    assert code == 0, err
    running = [progress["done"] for status, progress in written if status == "running"]
    assert running == [0, 1, 2, 3, 4, 5, 6]
    assert written[-1] == ("complete", {"done": 6, "planned": 6})
