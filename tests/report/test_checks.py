"""``toolbench report``: the log check and the isolation line above each run's tables."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult
from toolbench.runner.store import RUN_FILE, SAMPLES_FILE, RunStore

FULL = {"level": "full", "missing": [], "summary": "namespaces, seccomp, rlimits"}
REDUCED = {
    "level": "reduced",
    "missing": ["user namespaces", "seccomp"],
    "summary": "no user namespaces on this host; rlimits only",
}


def make_run(folder: Path, isolation: dict[str, Any] | None = None, n: int = 4) -> Path:
    store = RunStore(folder)
    info: dict[str, Any] = {"fingerprint": "f", "status": "running", "config": {"model": "m"}}
    if isolation is not None:
        info["isolation"] = isolation
    store.write_info(info)
    for index in range(n):
        store.append(
            {"task": "home_search", "id": str(index), "epoch": 0, "status": "scored",
             "success": index % 2 == 0, "metrics": {"f1": 0.5}, "message": ""}
        )  # fmt: skip
    store.close()
    store.write_info({**info, "status": "complete"})
    return folder


def test_isolation_line_and_warning_when_not_full(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, out, _ = cli("report", str(make_run(tmp_path / "reduced", REDUCED)))
    assert code == 0
    assert "isolation: reduced - no user namespaces on this host; rlimits only" in out
    warning = "warning: programs ran with isolation level reduced (not full; missing: user"
    assert f"{warning} namespaces, seccomp)" in out
    assert "log verified (4 records)" in out

    code, out, _ = cli("report", str(make_run(tmp_path / "full", FULL)))
    assert code == 0 and "isolation: full - namespaces, seccomp, rlimits" in out
    assert "warning" not in out

    said = {**FULL, "summary": "full: namespaces, uid 65534, seccomp"}  # the level said once
    code, out, _ = cli("report", str(make_run(tmp_path / "said", said)))
    assert code == 0 and "isolation: full: namespaces, uid 65534, seccomp" in out


def test_no_isolation_line_when_run_json_has_none(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, out, _ = cli("report", str(make_run(tmp_path / "plain")))
    assert code == 0 and "isolation:" not in out


def test_json_carries_isolation_and_log_state(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    a, b = make_run(tmp_path / "a", REDUCED), make_run(tmp_path / "b")
    code, out, _ = cli("report", "--json", str(a), str(b))
    assert code == 0
    report = json.loads(out)
    assert report["isolation"] == {str(a): REDUCED}
    assert report["log"][str(a)] == {"state": "verified", "records": 4}
    assert report["runs"][str(a)]["home_search"]["success_rate"]["mean"] == pytest.approx(0.5)


def test_hostile_isolation_values_are_printed_as_plain_bounded_text(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    hostile = {"level": "[bold]none[/bold]", "missing": "not a list", "summary": "x" * 10_000}
    code, out, _ = cli("report", str(make_run(tmp_path / "h", hostile)))
    assert code == 0
    assert "isolation: [bold]none[/bold] - " in out  # markup shown, not interpreted
    assert "missing: not stated" in out and "x" * 301 not in out
    bad = make_run(tmp_path / "bad", {"level": "full"})
    info = json.loads((bad / RUN_FILE).read_text())
    info["isolation"] = ["not", "a", "mapping"]
    info["config"] = "not a mapping either"
    (bad / RUN_FILE).write_text(json.dumps(info))
    code, out, _ = cli("report", str(bad))
    assert code == 0 and "isolation: unknown" in out


def test_modified_log_is_refused_unless_allowed(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    folder = make_run(tmp_path / "run")
    lines = (folder / SAMPLES_FILE).read_text().splitlines()
    lines[1] = lines[1].replace('"success": false', '"success": true')
    (folder / SAMPLES_FILE).write_text("\n".join(lines) + "\n")

    code, out, err = cli("report", str(folder))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert f"{folder / SAMPLES_FILE}:2: the log was modified after it was written" in err
    assert "--allow-modified" in err

    code, out, _ = cli("report", "--allow-modified", str(folder))
    assert code == 0
    assert "WARNING:" in out and "samples.jsonl:2" in out and "cannot be trusted" in out
    code, out, _ = cli("report", "--json", "--allow-modified", str(folder))
    assert json.loads(out)["log"][str(folder)]["state"] == "modified"


def test_a_hand_made_log_without_log_chain_is_modified(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    folder = tmp_path / "hand"
    folder.mkdir()
    (folder / RUN_FILE).write_text(json.dumps({"status": "complete", "config": {"model": "m"}}))
    record = {"task": "home_search", "id": "0", "epoch": 0, "status": "scored", "success": True}
    (folder / SAMPLES_FILE).write_text(json.dumps(record) + "\n")
    code, out, err = cli("report", str(folder))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"{folder / SAMPLES_FILE}:1: the log was modified after it was written (run.json " in err
    assert "has no log_chain: the chain was removed); report it anyway with --allow-modified" in err
    code, out, _ = cli("report", "--allow-modified", str(folder))
    assert code == 0 and "WARNING:" in out and "the chain was removed" in out


def test_damaged_line_is_one_line_exit_2(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    folder = make_run(tmp_path / "run")
    with (folder / SAMPLES_FILE).open("a") as handle:
        handle.write("[" * 50_000 + "]" * 50_000 + "\n")
    code, _, err = cli("report", str(folder), "--allow-modified")
    assert code == 2 and err.count("\n") == 1
    assert f"{folder / SAMPLES_FILE}:5: record is nested too deeply" in err


RUN = ("run", "home_search", "--model", "baseline", "--limit", "4")


def test_a_log_stripped_of_every_chain_field_is_modified(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """Every record's chain field and run.json's log_chain, log_verified and progress deleted,
    metrics forged: report refuses the log and resume is exit 2, each with one line."""
    folder = tmp_path / "run"
    assert cli(*RUN, "--out", str(folder))[0] == 0
    info = json.loads((folder / RUN_FILE).read_text())
    stripped_info = {k: v for k, v in info.items()
                     if k not in ("log_chain", "log_verified", "progress")}  # fmt: skip
    (folder / RUN_FILE).write_text(json.dumps({**stripped_info, "status": "interrupted"}))
    stripped = []
    for line in (folder / SAMPLES_FILE).read_text().splitlines():
        record = json.loads(line)
        del record["chain"]
        record["success"] = True
        stripped.append(json.dumps(record))
    (folder / SAMPLES_FILE).write_text("\n".join(stripped) + "\n")
    before = (folder / SAMPLES_FILE).read_bytes()
    code, out, err = cli("report", str(folder))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "samples.jsonl:1: the log was modified" in err and "the chain was removed" in err
    code, out, err = cli(*RUN, "--out", str(folder))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{folder / SAMPLES_FILE}:1: the log was modified after it was written (run.json " in err
    assert "has no log_chain: the chain was removed); its results cannot be trusted" in err
    assert "start a new run (another --out)" in err
    assert (folder / SAMPLES_FILE).read_bytes() == before  # nothing appended to a modified log


def test_a_run_killed_before_its_first_record_resumes(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder as a kill -9 leaves it right after the run's first write of run.json (no
    record yet): the same command resumes it, on a chain that verifies."""
    folder = tmp_path / "run"
    first: list[str] = []
    real_write_info = RunStore.write_info

    def write_info(self: RunStore, info: dict[str, Any]) -> None:
        real_write_info(self, info)
        if not first:
            first.append((folder / RUN_FILE).read_text())

    monkeypatch.setattr(RunStore, "write_info", write_info)
    assert cli(*RUN, "--out", str(folder))[0] == 0
    monkeypatch.undo()
    (folder / SAMPLES_FILE).unlink()
    (folder / RUN_FILE).write_text(first[0])
    assert json.loads(first[0])["status"] == "running"
    assert json.loads(first[0])["log_chain"]["records"] == 0
    code, out, err = cli(*RUN, "--out", str(folder))
    assert code == 0, err
    code, out, _ = cli("report", str(folder))
    assert code == 0 and "log verified (4 records)" in out and "status: complete, 4 of 4" in out


def test_an_empty_log_beside_a_run_json_without_chain_fields_resumes_as_new(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A run.json made by hand (no log_chain, log_verified or progress) and no records: nothing
    was chained, so the run starts its log afresh."""
    folder = tmp_path / "run"
    assert cli(*RUN, "--out", str(folder))[0] == 0
    info = json.loads((folder / RUN_FILE).read_text())
    kept = {k: v for k, v in info.items() if k not in ("log_chain", "log_verified", "progress")}
    (folder / RUN_FILE).write_text(json.dumps({**kept, "status": "interrupted"}))
    (folder / SAMPLES_FILE).write_text("")
    code, out, err = cli(*RUN, "--out", str(folder))
    assert code == 0, err
    assert json.loads((folder / RUN_FILE).read_text())["log_chain"]["records"] == 4
    code, out, _ = cli("report", str(folder))
    assert code == 0 and "log verified (4 records)" in out and "status: complete, 4 of 4" in out
