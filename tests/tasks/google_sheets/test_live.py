"""--live plumbing for google_sheets, against an emulator-backed fake of Google's service.

Real Google Sheets cannot be reached here, so ``$TOOLBENCH_SHEETS_CLIENT`` swaps in
``fake_gspread.client``. Everything else is what a live run does: the harness creates a scratch
spreadsheet and uploads the workbook, workers open it, copy the question sheet per program,
run the program with the real gspread_dataframe functions, read the sheet back, delete the
copy; the scratch spreadsheet is deleted when the run ends and nothing is memoized.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from tests.tasks.google_sheets.test_task import PREDICTIONS, _write_folder

pytest.importorskip("gspread_dataframe")


@pytest.fixture
def fake_google(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    drive = tmp_path / "drive"
    credentials = tmp_path / "service-account.json"
    credentials.write_text(json.dumps({"fake_drive": str(drive)}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(credentials))
    monkeypatch.setenv("TOOLBENCH_SHEETS_CLIENT", "tests.tasks.google_sheets.fake_gspread:client")
    return drive


def test_live_run_scores_like_offline_and_cleans_up(
    cli: Callable[..., CliResult], tmp_path: Path, fake_google: Path
) -> None:
    _write_folder(tmp_path / "data")
    cases = [p for p in PREDICTIONS if p[0] in ("rename", "total_fmt", "tax")]
    epochs: dict[str, int] = {}
    keys = []
    with (tmp_path / "replay.jsonl").open("w") as handle:
        for sid, prediction, _ in cases:
            epoch = epochs[sid] = epochs.get(sid, -1) + 1
            keys.append((sid, epoch))
            handle.write(json.dumps({"id": sid, "epoch": epoch, "prediction": prediction}) + "\n")
    code, _, err = cli(
        "run", "google_sheets", "--live", "--data-dir", str(tmp_path / "data"),
        "--model", f"replay:{tmp_path / 'replay.jsonl'}", "--out", str(tmp_path / "run"),
        "--epochs", str(max(epochs.values()) + 1), "--allow-missing",
    )  # fmt: skip
    assert code == 0, err
    records = {(r["id"], r["epoch"]): r for r in read_run(tmp_path / "run")[1]}
    for key, (sid, prediction, expected) in zip(keys, cases, strict=True):
        assert records[key]["status"] == "scored", records[key]
        assert records[key]["success"] is expected, (sid, prediction, records[key])
    assert list(fake_google.glob("*.json")) == []  # the scratch spreadsheet was deleted


def test_live_without_credentials_is_a_one_line_error(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    _write_folder(tmp_path / "data")
    code, _, err = cli(
        "run", "google_sheets", "--live", "--model", "oracle",
        "--data-dir", str(tmp_path / "data"), "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 2
    assert "GOOGLE_APPLICATION_CREDENTIALS" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()
