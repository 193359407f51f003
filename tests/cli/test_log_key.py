"""The log chain's key MAC, end to end through real ``toolbench`` processes.

What the red team did: after the harness exited, rewrite ``samples.jsonl`` to all successes,
recompute the plain chain from the seed in ``run.json`` and update the anchor. With only the
run folder in hand that still leaves the anchor's MAC, which needs the per-user key kept
outside the folder, so ``report`` refuses the log (exit 2) and a resume will not continue it.
A folder copied to a machine without the key is intact but not vouched for.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolbench.runner import chain
from toolbench.runner.store import RUN_FILE, SAMPLES_FILE

RUN = ("run", "home_search", "--model", "baseline", "--limit", "4")
KEYED = "log chain verified with this machine's key"
ELSEWHERE = (
    "log chain intact; the key it was made with is not on this machine (provenance not verified)"
)
FORGED = "run.json's log_chain does not verify with this machine's key"


def toolbench(*args: str, key_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``toolbench ARGS`` in a new process (the key dir: the tests' own unless given)."""
    env = dict(os.environ)
    if key_dir is not None:
        env["TOOLBENCH_KEY_DIR"] = str(key_dir)
    return subprocess.run(
        [sys.executable, "-m", "toolbench.cli", *args],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def made_run(folder: Path) -> Path:
    done = toolbench(*RUN, "--out", str(folder))
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


def forge_all_successes(folder: Path) -> dict[str, Any]:
    """What an attacker holding only the run folder can do: every failure made a success, the
    chain recomputed from the folder's own seed with the chain module's functions, and the
    anchor's head and count (and run.json's metrics) updated. Returns the forged anchor."""
    info = json.loads((folder / RUN_FILE).read_text())
    anchor = info[chain.ANCHOR_KEY]
    previous, lines, flipped = anchor["seed"], [], 0
    for raw in (folder / SAMPLES_FILE).read_bytes().splitlines():
        parts = chain.split_chain(raw)
        assert parts is not None
        record = json.loads(parts[0])
        if record["success"] is False:
            record["success"], flipped = True, flipped + 1
        line, previous = chain.chained(json.dumps(record), previous)
        lines.append(line)
    assert flipped  # the baseline fails some samples: there is something to forge
    (folder / SAMPLES_FILE).write_text("".join(line + "\n" for line in lines))
    anchor.update(head=previous, records=len(lines))
    for metrics in info.get("metrics", {}).values():
        if isinstance(metrics, dict) and "success_rate" in metrics:
            metrics["success_rate"] = 1.0
    (folder / RUN_FILE).write_text(json.dumps(info, indent=2))
    return anchor


def set_anchor(folder: Path, **changes: Any) -> None:
    info = json.loads((folder / RUN_FILE).read_text())
    anchor = info[chain.ANCHOR_KEY]
    for name, value in changes.items():
        if value is None:
            anchor.pop(name, None)
        else:
            anchor[name] = value
    (folder / RUN_FILE).write_text(json.dumps(info, indent=2))


def test_a_run_is_verified_with_this_machines_key(tmp_path: Path) -> None:
    folder = made_run(tmp_path / "run")
    anchor = json.loads((folder / RUN_FILE).read_text())[chain.ANCHOR_KEY]
    assert len(anchor["mac"]) == 64 and len(anchor["key_id"]) == 16
    report = toolbench("report", str(folder))
    assert report.returncode == 0, report.stderr
    assert f"log verified (4 records); {KEYED}" in report.stdout


def test_a_forged_log_rechained_from_the_folder_does_not_verify(tmp_path: Path) -> None:
    """The red team's forgery, done with everything in the run folder: report exits 2 (the
    code for a modified log) and a resume refuses to continue it."""
    folder = made_run(tmp_path / "run")
    forge_all_successes(folder)
    report = toolbench("report", str(folder))
    assert report.returncode == 2 and report.stdout == ""
    assert report.stderr.count("\n") == 1
    assert f"{folder / SAMPLES_FILE}:1: the log was modified after it was written" in report.stderr
    assert FORGED in report.stderr and "report it anyway with --allow-modified" in report.stderr
    shown = toolbench("report", "--json", "--allow-modified", str(folder))
    assert json.loads(shown.stdout)["log"][str(folder)]["state"] == "modified"
    before = (folder / SAMPLES_FILE).read_bytes()
    resumed = toolbench(*RUN, "--out", str(folder))
    assert resumed.returncode == 2 and FORGED in resumed.stderr
    assert "start a new run" in resumed.stderr
    assert (folder / SAMPLES_FILE).read_bytes() == before  # not continued, not re-keyed


@pytest.mark.parametrize(
    "strip", [{"mac": None, "key_id": None}, {"key_id": "0123456789abcdef"}], ids=["no-mac", "id"]
)
def test_a_forgery_that_drops_the_mac_or_names_another_key_is_caught_here(
    tmp_path: Path, strip: dict[str, Any]
) -> None:
    """The forger's other moves: remove the MAC (to look like a run made before keys) or name
    another key (to look copied from elsewhere). This machine noted that it sealed a log at
    that folder (``runner.ledger``, in the key folder), so report calls it modified (exit 2)
    and a resume refuses it; moved to another folder, where no note is, it is at least never
    called verified."""
    folder = made_run(tmp_path / "run")
    forge_all_successes(folder)
    set_anchor(folder, **strip)
    report = toolbench("report", str(folder))
    assert report.returncode == 2 and FORGED in report.stderr
    resumed = toolbench(*RUN, "--out", str(folder))
    assert resumed.returncode == 2 and "start a new run" in resumed.stderr
    moved = tmp_path / "moved"
    folder.rename(moved)
    report = toolbench("report", str(moved))
    assert report.returncode == 0, report.stderr
    assert KEYED not in report.stdout and "(provenance not verified)" in report.stdout


def test_a_folder_copied_to_a_machine_without_the_key_is_intact_not_verified(
    tmp_path: Path,
) -> None:
    folder = made_run(tmp_path / "run")
    elsewhere = tmp_path / "other-machine-keys"
    report = toolbench("report", str(folder), key_dir=elsewhere)
    assert report.returncode == 0, report.stderr
    assert f"log verified (4 records); {ELSEWHERE}" in report.stdout
    assert not elsewhere.exists()  # reading a report makes no key
    shown = json.loads(toolbench("report", "--json", str(folder), key_dir=elsewhere).stdout)
    assert shown["provenance"] == {str(folder): "other_key"}
    # the copy is still checked for consistency: an edit there is refused as before
    lines = (folder / SAMPLES_FILE).read_text().splitlines()
    flip = {'"success": false': '"success": true', '"success": true': '"success": false'}
    was = next(text for text in flip if text in lines[1])
    lines[1] = lines[1].replace(was, flip[was])
    (folder / SAMPLES_FILE).write_text("\n".join(lines) + "\n")
    edited = toolbench("report", str(folder), key_dir=elsewhere)
    assert edited.returncode == 2 and "samples.jsonl:2: the log was modified" in edited.stderr
