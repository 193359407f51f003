"""End to end through the CLI on built-in models: the main job and the run-folder contract."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.runner import chain


def test_oracle_is_perfect_on_both_tasks(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, stdout, _ = cli("run", "home_search,booking", "--model", "oracle", "--out", str(out))
    assert code == 0
    info, records = read_run(out)
    assert info["status"] == "complete"
    for task, n in (("home_search", 100), ("booking", 120)):
        assert info["metrics"][task]["success_rate"] == 1.0
        assert info["metrics"][task]["crash_rate"] == 0.0
        assert info["metrics"][task]["f1"] == 1.0
        assert info["counts"][task] == {"scored": n, "model_error": 0, "infra_error": 0,
                                       "context_overflow": 0}  # fmt: skip
    assert len(records) == 220
    assert {"task", "id", "epoch", "prompt_hash", "prediction", "status", "metrics"} <= set(
        records[0]
    )
    assert "home_search" in stdout and "1.000" in stdout


def test_baseline_scores_between_zero_and_oracle(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    assert cli("run", "home_search,booking", "--model", "baseline", "--out", str(out))[0] == 0
    info, _ = read_run(out)
    for task in ("home_search", "booking"):
        assert 0.1 < info["metrics"][task]["success_rate"] < 0.95
        assert info["metrics"][task]["f1"] > info["metrics"][task]["success_rate"]


def _original_layout(root: Path) -> Path:
    """A data folder in the original ToolBench shape, written by us: no functions/ or examples/."""
    home = root / "home_search" / "v0"
    home.mkdir(parents=True)
    lines = [
        {
            "prompt": "Show me condos or townhouses to buy in Boise under $450000.",
            "completion": [
                'API.set_location("Boise")\nAPI.set_buy_or_rent("buy")\n'
                'API.select_home_type(["Condo", "Townhouse"])\n'
                "API.set_max_price(450000)\nAPI.search()"
            ],
        },
        {
            "prompt": "I want to rent an apartment in Tacoma with 2 bedrooms.",
            "completion": [
                'API.set_location("Tacoma")\nAPI.set_buy_or_rent("rent")\n'
                'API.select_home_type(["Apartment"])\nAPI.set_num_beds(2)\nAPI.search()',
                'API.set_location("Tacoma")\nAPI.set_buy_or_rent("rent")\n'
                'API.set_num_beds(2)\nAPI.select_home_type(["Apartment"])\nAPI.search()',
            ],
        },
    ]
    (home / "test.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    booking = root / "booking" / "v0"
    booking.mkdir(parents=True)
    program = (
        'API.select_booking_type("hotels")\nAPI.set_num_rooms(2)\n'
        'location = Loc("Reno")\nAPI.set_hotel_location(location)\n'
        "checkin_date = Date(3, 14, 2025)\nAPI.set_checkin_date(checkin_date)\n"
        "checkout_date = Date(3, 17, 2025)\nAPI.set_checkout_date(checkout_date)\nAPI.search()"
    )
    record = {"prompt": "Two hotel rooms in Reno, March 14 to 17 2025.", "completion": [program]}
    (booking / "test.jsonl").write_text(json.dumps(record) + "\n")
    return root


def test_oracle_on_original_layout_data_dir(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = _original_layout(tmp_path / "data")
    out = tmp_path / "run"
    code, _, _ = cli(
        "run",
        "home_search,booking",
        "--model",
        "oracle",
        "--data-dir",
        str(root),
        "--out",
        str(out),
    )
    assert code == 0
    info, records = read_run(out)
    assert info["metrics"]["home_search"]["success_rate"] == 1.0
    assert info["metrics"]["booking"]["success_rate"] == 1.0
    assert sorted(r["id"] for r in records if r["task"] == "home_search") == ["0", "1"]
    assert info["data"]["home_search"]["source"] == str(root / "home_search" / "v0")


def test_prompt_command_shows_original_shape(cli: Callable[..., CliResult]) -> None:
    code, out, _ = cli(
        "prompt", "home_search", "--sample", "7", "--top-k-api", "10", "--top-k-example", "3"
    )
    assert code == 0
    assert out.count("-------------") == 2
    prompt, _, settings = out.rpartition(" generation ")  # max_tokens and stops come last
    assert "\nTask: " in out and prompt.rstrip("─-").endswith("\nAction:\n")
    assert "stop: '------', 'Task:'" in settings
    assert out.count("API.") >= 10


def test_epochs_limit_and_list(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = (
        "run",
        "booking",
        "--model",
        "oracle",
        "--limit",
        "5",
        "--epochs",
        "3",
        "--out",
        str(out),
    )
    assert cli(*args)[0] == 0
    info, records = read_run(out)
    assert len(records) == 15
    assert {(r["id"], r["epoch"]) for r in records} == {
        (str(i), e) for i in range(5) for e in range(3)
    }
    assert info["metrics_spread"]["booking"]["success_rate"] == 0.0
    code, out_text, _ = cli("list", "tasks")
    assert code == 0 and "home_search" in out_text and "booking" in out_text
    code, out_text, _ = cli("list", "models")
    assert code == 0 and "oracle" in out_text and "openai:" in out_text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("run", "home_serch", "--model", "oracle"), "did you mean 'home_search'"),
        (("run", "booking", "--model", "oracel"), "did you mean 'oracle'"),
        (("run", "booking", "--model", "oracle", "--concurrency", "0"), "--concurrency"),
        (("run", "booking", "--model", "oracle", "--data-dir", "/nonexistent/x"), "/nonexistent/x"),
        (("run", "booking", "--model", "replay:/nonexistent.jsonl"), "/nonexistent.jsonl"),
        (("prompt", "booking", "--sample", "9999"), "--sample 9999"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    cli: Callable[..., CliResult], tmp_path: Path, args: tuple[str, ...], needle: str
) -> None:
    out = tmp_path / "never"
    extra = ("--out", str(out)) if args[0] == "run" else ()
    code, _, err = cli(*args, *extra)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_malformed_data_line_names_file_and_line(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    root = _original_layout(tmp_path / "data")
    path = root / "home_search" / "v0" / "test.jsonl"
    path.write_text(path.read_text() + '{"prompt": "x", "completion": "not a list"\n')
    out = tmp_path / "run"
    code, _, err = cli(
        "run", "home_search", "--model", "oracle", "--data-dir", str(root), "--out", str(out)
    )
    assert code == 2
    assert f"{path}:3" in err
    assert not out.exists()


def test_gold_that_crashes_is_a_data_error(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    root = _original_layout(tmp_path / "data")
    path = root / "home_search" / "v0" / "test.jsonl"
    bad = {"prompt": "x", "completion": ['API.set_buy_or_rent("buy")']}  # violates call order
    path.write_text(path.read_text() + json.dumps(bad) + "\n")
    code, _, err = cli(
        "run",
        "home_search",
        "--model",
        "oracle",
        "--data-dir",
        str(root),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2
    assert f"{path}:3" in err and "gold program 1" in err


def test_fingerprint_mismatch_refused(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert cli("run", "booking", "--model", "oracle", "--limit", "3", "--out", str(out))[0] == 0
    code, _, err = cli(
        "run", "booking", "--model", "oracle", "--limit", "3", "--top-k-api", "2", "--out", str(out)
    )
    assert code == 2 and "different configuration" in err
    _, records = read_run(out)
    assert len(records) == 3


def test_a_server_that_is_not_there_is_one_line_before_any_folder(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A refused connection is exit 2 naming --base-url at once, not minutes of retries
    ending in 'Request timed out'."""
    import socket
    import time

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "run"
    start = time.monotonic()
    code, _, err = cli(
        "run", "home_search", "--model", "openai:m", "--base-url",
        f"http://127.0.0.1:{port}/v1", "--limit", "2", "--out", str(out),
    )  # fmt: skip
    assert code == 2 and time.monotonic() - start < 30
    assert err.count("\n") == 1 and "--base-url" in err and "Connection refused" in err
    assert not out.exists()


def test_out_naming_a_file_is_one_line(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("not a run folder")
    code, _, err = cli("run", "booking", "--model", "oracle", "--limit", "1", "--out", str(target))
    assert code == 2 and "--out" in err and "is a file" in err and err.count("\n") == 1
    assert target.read_text() == "not a run folder"


def test_a_rerun_with_another_selection_starts_a_new_folder(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    base = ("run", "booking", "--model", "oracle", "--runs-dir", str(runs))
    assert cli(*base, "--limit", "2")[0] == 0
    # An unfinished run of 2 samples: the same command resumes it, another --limit does not.
    (folder,) = runs.iterdir()
    info = {**json.loads((folder / "run.json").read_text()), "status": "interrupted"}
    anchor = chain.Anchor.from_json(info[chain.ANCHOR_KEY])
    assert anchor is not None  # resealed as the harness would (the MAC covers the status)
    info[chain.ANCHOR_KEY] = chain.seal(anchor, chain.ensure_key(), info).to_json()
    (folder / "run.json").write_text(json.dumps(info))
    assert cli(*base, "--limit", "3")[0] == 0
    assert len(list(runs.iterdir())) == 2
    assert len((folder / "samples.jsonl").read_text().splitlines()) == 2
    assert cli(*base, "--limit", "2")[0] == 0
    assert len(list(runs.iterdir())) == 2
