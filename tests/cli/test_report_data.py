"""report (CIs, paired differences), data generate (byte-for-byte), dense retrieval."""

from __future__ import annotations

import filecmp
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from toolbench.tasks.registry import get_task


def _replay_file(path: Path, predictions: dict[str, str]) -> Path:
    path.write_text(
        "".join(json.dumps({"id": k, "prediction": v}) + "\n" for k, v in predictions.items())
    )
    return path


def test_report_gives_intervals_and_paired_difference(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    good, bad = tmp_path / "oracle", tmp_path / "replay"
    assert (
        cli("run", "home_search", "--model", "oracle", "--limit", "30", "--out", str(good))[0] == 0
    )
    # Half the answers are right; half set a criterion before the location (a crash).
    golds = {r["id"]: r["prediction"] for r in read_run(good)[1]}
    predictions = {k: (v if int(k) % 2 else "API.set_num_beds(2)") for k, v in golds.items()}
    replay = _replay_file(tmp_path / "preds.jsonl", predictions)
    assert (
        cli(
            "run", "home_search", "--model", f"replay:{replay}", "--limit", "30", "--out", str(bad)
        )[0]
        == 0
    )

    code, out, _ = cli("report", str(good), str(bad), "--json")
    assert code == 0
    report = json.loads(out)
    ours = report["runs"][str(bad)]["home_search"]
    assert ours["success_rate"]["mean"] == pytest.approx(0.5)
    assert ours["success_rate"]["low"] < 0.5 < ours["success_rate"]["high"]
    assert ours["crash_rate"]["mean"] == pytest.approx(0.5)
    diff = report["difference"]["home_search"]["success_rate"]
    assert diff["mean"] == pytest.approx(-0.5) and diff["high"] < 0 and diff["n"] == 30

    code, out, _ = cli("report", str(good), str(bad))
    assert code == 0 and "paired difference" in out and "95% CI" in out


def test_report_on_a_missing_folder_is_a_user_error(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    code, _, err = cli("report", str(tmp_path / "nope"))
    assert code == 2 and "nope: no such folder" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "task", ["home_search", "booking", "open_weather", "the_cat_api", "google_sheets"]
)
def test_data_generate_reproduces_committed_files(
    cli: Callable[..., CliResult], tmp_path: Path, task: str
) -> None:
    out = tmp_path / task
    assert (
        cli("data", "generate", task, "--split", "test", "--seed", "0", "--out", str(out))[0] == 0
    )
    committed = get_task(task).package_dir / "data" / "v0"  # type: ignore[operator]
    for rel in ["test.jsonl", *(f"functions/{p.name}" for p in (committed / "functions").iterdir()),
                *(f"examples/{p.name}" for p in (committed / "examples").iterdir())]:  # fmt: skip
        assert filecmp.cmp(out / rel, committed / rel, shallow=False), rel
    for extra in committed.glob("*.json"):  # e.g. google_sheets' workbook.json
        assert filecmp.cmp(out / extra.name, extra, shallow=False), extra.name
    assert sorted(p.name for p in (out / "functions").iterdir()) == sorted(
        p.name for p in (committed / "functions").iterdir()
    )


def test_train_split_gives_prompt_completion_pairs_disjoint_from_test(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "train"
    assert (
        cli(
            "data",
            "generate",
            "booking",
            "--split",
            "train",
            "--n",
            "50",
            "--seed",
            "3",
            "--out",
            str(out),
        )[0]
        == 0
    )
    lines = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert len(lines) == 50
    assert all(x["prompt"].endswith(f"Task: {x['query']}\nAction:\n") for x in lines)
    assert all(x["completion"].startswith("API.select_booking_type(") for x in lines)
    committed = get_task("booking").package_dir / "data" / "v0" / "test.jsonl"  # type: ignore[operator]
    test_queries = {json.loads(line)["prompt"] for line in committed.read_text().splitlines()}
    assert not test_queries & {x["query"] for x in lines}


def test_dense_retriever_run_and_embedding_cache(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "dense"
    args = (
        "run",
        "booking",
        "--model",
        "oracle",
        "--retriever",
        "dense",
        "--limit",
        "5",
        "--out",
        str(out),
    )
    assert cli(*args)[0] == 0
    info, _ = read_run(out)
    assert info["metrics"]["booking"]["success_rate"] == 1.0
    cache = Path(__import__("os").environ["TOOLBENCH_CACHE_DIR"]) / "embeddings"
    assert len(list(cache.glob("*.npy"))) == 2  # functions and examples, embedded once
    code, prompt, _ = cli(
        "prompt", "booking", "--sample", "3", "--retriever", "dense", "--top-k-api", "4"
    )
    assert code == 0 and prompt.count("\nAPI.") + prompt.startswith("API.") >= 1


def test_training_pairs_of_a_task_without_them_are_refused(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """tabletop's samples are programs that call the model themselves: no prompt/completion
    pairs to write, said in one line (it was a KeyError traceback)."""
    code, _, err = cli("data", "generate", "tabletop", "--split", "train", "--n", "3",
                       "--out", str(tmp_path / "t"))  # fmt: skip
    assert code == 2 and "--split train" in err and "use --split test" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "t").exists()
