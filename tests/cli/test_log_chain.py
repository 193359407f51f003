"""The run log's checksum chain through the CLI: a run verifies its own log, ``report`` refuses
an edited one (naming the line), resume continues the chain or refuses a tampered log, and
awareness runs are chained too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.test_resilience import scripted_answer
from tests.conftest import CliResult, read_run
from tests.fakeserver import FakeOpenAIServer
from toolbench.runner import chain
from toolbench.runner import store as store_module
from toolbench.runner.store import ATTEMPTS_FILE, SAMPLES_FILE

Cli = Callable[..., CliResult]


def oracle_run(cli: Cli, out: Path, limit: int) -> None:
    code, stdout, stderr = cli(
        "run", "home_search", "--model", "oracle", "--limit", str(limit), "--out", str(out)
    )
    assert code == 0, stdout + stderr


def edit_line(path: Path, number: int, old: str, new: str) -> None:
    lines = path.read_text().splitlines()
    assert old in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(old, new)
    path.write_text("\n".join(lines) + "\n")


def test_a_finished_run_verified_its_log(cli: Cli, tmp_path: Path) -> None:
    oracle_run(cli, tmp_path / "run", 6)
    info, records = read_run(tmp_path / "run")
    assert info["log_verified"] is True and "log_problem" not in info
    assert info[chain.ANCHOR_KEY]["records"] == 6
    assert info[chain.ANCHOR_KEY]["head"] == records[-1]["chain"]
    assert len(info[chain.ANCHOR_KEY]["mac"]) == 64  # sealed with the user's key
    code, out, _ = cli("report", str(tmp_path / "run"))
    assert code == 0
    assert "log verified (6 records); log chain verified with this machine's key" in out


def test_editing_a_line_after_the_run_makes_report_exit_2(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    oracle_run(cli, out, 5)
    edit_line(out / SAMPLES_FILE, 4, '"f1": 1.0', '"f1": 0.99')
    code, stdout, stderr = cli("report", str(out))
    assert code == 2 and stdout == ""
    assert stderr.strip() == (
        f"toolbench: error: {out / SAMPLES_FILE}:4: the log was modified after it was written "
        "(the record does not match its checksum); report it anyway with --allow-modified"
    )
    code, stdout, _ = cli("report", str(out), "--allow-modified")
    assert code == 0 and "WARNING" in stdout


def test_resume_continues_the_chain(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    oracle_run(cli, out, 4)
    oracle_run(cli, out, 9)  # same configuration, more samples: resumes the folder
    info, records = read_run(out)
    assert len(records) == 9 and info["timing"]["sessions"] == 2
    assert info["log_verified"] is True and info[chain.ANCHOR_KEY]["records"] == 9
    assert cli("report", str(out))[0] == 0


def test_resume_after_tampering_is_refused(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    oracle_run(cli, out, 4)
    edit_line(out / SAMPLES_FILE, 2, '"success": true', '"success": false')
    before = (out / SAMPLES_FILE).read_bytes()
    code, _, stderr = cli(
        "run", "home_search", "--model", "oracle", "--limit", "8", "--out", str(out)
    )
    assert code == 2 and stderr.count("\n") == 1
    assert f"{out / SAMPLES_FILE}:2: the log was modified after it was written" in stderr
    assert "start a new run" in stderr
    assert (out / SAMPLES_FILE).read_bytes() == before  # nothing appended to a tampered log


def test_resume_rechains_after_retrying_infra_errors(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "home_search", "--model", "openai:fake", "--out", str(out), "--limit", "6",
            "--max-retries", "0"]  # fmt: skip
    with FakeOpenAIServer(
        answer=scripted_answer, fail_always=True, fail_status=503, retry_after="0"
    ) as server:
        assert cli(*args, "--base-url", server.base_url)[0] == 3
        assert read_run(out)[0]["log_verified"] is True
        server.fail_always = False
        assert cli(*args, "--base-url", server.base_url)[0] == 0
    info, records = read_run(out)
    assert info["log_verified"] is True and len(records) == 6
    assert all(r["status"] == "scored" for r in records)
    assert (out / ATTEMPTS_FILE).read_text().count("\n") == 6  # moved aside, log re-chained
    assert cli("report", str(out))[0] == 0


def test_an_aware_run_is_chained_and_verified(cli: Cli, tmp_path: Path) -> None:
    dataset = tmp_path / "aware.jsonl"
    code, _, err = cli(
        "aware", "build", "--source", "task:home_search", "--manipulation", "slot_removal",
        "--seed", "0", "--out", str(dataset),
    )  # fmt: skip
    assert code == 0, err
    out = tmp_path / "aware-run"
    code, stdout, stderr = cli(
        "aware", "run", str(dataset), "--model", "always-yes", "--limit", "5", "--out", str(out)
    )
    assert code == 0, stdout + stderr
    info, records = read_run(out)
    assert info["kind"] == "aware" and info["log_verified"] is True
    assert all("chain" in record for record in records)
    assert cli("report", str(out))[0] == 0
    edit_line(out / SAMPLES_FILE, 1, '"status": "scored"', '"status": "model_error"')
    code, _, stderr = cli("report", str(out))
    assert code == 2 and "samples.jsonl:1: the log was modified" in stderr


def test_a_log_rewritten_during_the_run_is_flagged_at_the_end(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the red team did: something rewrote samples.jsonl while the run was going. The
    run compares the file with the head it kept in memory and says so."""
    real_append = store_module.RunStore.append

    def append_then_tamper(self: store_module.RunStore, record: dict[str, object]) -> None:
        real_append(self, record)
        path = self.samples_file
        lines = path.read_text().splitlines()
        if len(lines) == 3:
            first = json.loads(lines[0])
            first["success"] = not first["success"]
            lines[0] = json.dumps(first)
            path.write_text("\n".join(lines) + "\n")

    monkeypatch.setattr(store_module.RunStore, "append", append_then_tamper)
    out = tmp_path / "run"
    code, stdout, _ = cli(
        "run", "home_search", "--model", "oracle", "--limit", "5", "--out", str(out),
        "--concurrency", "1",
    )  # fmt: skip
    assert code == 0
    info, _ = read_run(out)
    assert info["log_verified"] is False
    assert "samples.jsonl:1: the log was modified after it was written" in info["log_problem"]
    warnings = [line for line in stdout.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "samples.jsonl:1" in warnings[0]
    assert cli("report", str(out))[0] == 2
