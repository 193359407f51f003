"""web_shop end to end through the CLI: oracle and baseline scores, hostile replies, resume,
replay by step, the cache, --history, original-layout folders and bad ids."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.fakeserver import FakeOpenAIServer
from tests.tasks.web_shop.exact import exact_purchase_reward
from toolbench.tasks.web_shop.shopper import ShopperMemory, next_action
from toolbench.tasks.web_shop.world import Store

VOLATILE = ("latency_s", "chain")  # timing and the log's random chain seed


def _stable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return [clean(record) for record in records]


def _page_of(body: dict[str, Any]) -> str:
    """The page a completion prompt shows (after the last 'Task: ')."""
    prompt = str(body.get("prompt", ""))
    return prompt[prompt.rindex("Task: ") + len("Task: ") : prompt.rindex("\nAction:\n")]


def shopper_reply(body: dict[str, Any]) -> str:
    """A memoryless model for the fake server: the shopper's move on the page shown (options
    it would click again are bought as they stand)."""
    return next_action(_page_of(body), ShopperMemory())


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(answer=shopper_reply) as srv:
        yield srv


def _fake(server: FakeOpenAIServer) -> tuple[str, ...]:
    return ("--model", "openai:fake", "--base-url", server.base_url, "--max-retries", "0")


@pytest.mark.parametrize("version", ["v0", "v1"])
def test_oracle_buys_the_goal_on_every_test_id(
    cli: Callable[..., CliResult], tmp_path: Path, version: str
) -> None:
    code, _, err = cli("run", "web_shop", "--model", "oracle", "--version", version,
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    metrics = info["metrics"]["web_shop"]
    assert len(records) == 250
    # Every purchase is exact; WebShop's reward for it is 1 except on goals 143, 152, 156, 231
    # (0.8, 0.75, 0.75, 0.75: its colour normaliser loses "grapefruit"/"sandalwood").
    store = Store.load()
    for record in records:
        expected = exact_purchase_reward(store.goal(int(record["id"])))
        assert record["metrics"]["reward"] == pytest.approx(expected), record["id"]
    assert metrics["reward"] == pytest.approx((246 + 0.8 + 3 * 0.75) / 250)
    assert metrics["success_rate"] == 1.0 and metrics["crash_rate"] == 0.0
    assert metrics["purchase_match_rate"] == pytest.approx(246 / 250)
    assert info["metric_names"]["web_shop"] == [
        "success_rate", "reward", "purchase_match_rate", "crash_rate", "mean_turns"
    ]  # fmt: skip
    first = records[0]
    steps = [c["step"] for c in first["calls"]]
    assert steps == [f"turn-{n}" for n in range(1, len(steps) + 1)]
    assert first["calls"][0]["text"].startswith("search[")
    assert first["trace"][-1]["page"] == "done" and first["trace"][-1]["reward"] == 1.0
    assert first["prediction"] == "click[Buy Now]"


def test_baseline_scores_are_real(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    code, _, err = cli("run", "web_shop", "--model", "baseline", "--limit", "60",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    metrics = info["metrics"]["web_shop"]
    assert metrics["success_rate"] == 1.0  # it always buys something
    assert 0.5 < metrics["reward"] < 1.0
    assert 0.3 < metrics["purchase_match_rate"] < 1.0
    imperfect = [r for r in records if r["metrics"]["reward"] < 1.0]
    assert imperfect and all(r["message"].startswith("bought ") for r in imperfect)


def test_hostile_replies_are_noops_that_cost_turns(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    hostile = [
        "search[]", "Action: search[usb]", "click[b0nothere1]", "x" * 100_000,
        "search[" + "[" * 20_000, "ثبت[usb]", "think first:\nsearch[usb]", '{"a": ' * 5_000,
        "click[search]", "click[" + "é" * 3_000 + "]",
    ]  # fmt: skip
    replay = tmp_path / "hostile.jsonl"
    lines = [
        {"task": "web_shop", "id": "0", "step": f"turn-{n}", "prediction": hostile[n % 10]}
        for n in range(1, 26)
    ]
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, _, err = cli("run", "web_shop", "--model", f"replay:{replay}", "--limit", "1",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    (record,) = records
    assert record["status"] == "scored" and record["success"] is False
    assert record["message"] == "no purchase in 25 turns"
    assert len(record["calls"]) == 25 and not any(t["valid"] for t in record["trace"])
    assert all(t["page"] == "search" for t in record["trace"])
    assert max(len(json.dumps(t, ensure_ascii=False)) for t in record["trace"]) < 1_000
    assert info["metrics"]["web_shop"]["reward"] == 0.0


def test_records_are_byte_identical_in_one_process_and_across_processes(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    args = ("run", "web_shop", "--model", "baseline", "--limit", "8", "--concurrency", "3")
    for name in ("a", "b"):
        assert cli(*args, "--out", str(tmp_path / name))[0] == 0
    env_args = [sys.executable, "-m", "toolbench.cli", *args, "--out", str(tmp_path / "c")]
    done = subprocess.run(env_args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    runs = [read_run(tmp_path / name)[1] for name in ("a", "b", "c")]
    first = json.dumps(_stable(runs[0]), sort_keys=True)
    assert all(json.dumps(_stable(r), sort_keys=True) == first for r in runs[1:])


def test_resume_replay_by_step_and_cache(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    def broken_on_one_item(body: dict[str, Any]) -> str:
        page = _page_of(body)
        if "Buy Now" in page and page.count("\n") == 0 and "[SEP] color" in page:
            raise RuntimeError("server fell over")  # a 500: infra error after retries
        return shopper_reply(body)

    out = tmp_path / "run"
    args = ("run", "web_shop", "--limit", "6", "--out", str(out), *_fake(server))
    server.answer = broken_on_one_item
    code, _, _ = cli(*args)
    _, first = read_run(out)
    broken = {r["id"] for r in first if r["status"] == "infra_error"}
    assert code == 3 and broken
    asked_before = server.calls
    server.answer = shopper_reply
    code, _, err = cli(*args)
    assert code == 0, err
    info, records = read_run(out)
    assert info["counts"]["web_shop"]["infra_error"] == 0
    # Only the broken episodes ran again; their turns before the failure came from the cache.
    kept = [r for r in first if r["id"] not in broken]
    assert _stable([r for r in records if r["id"] not in broken]) == _stable(kept)
    rerun = [r for r in records if r["id"] in broken]
    assert all(r["calls"][0]["cached"] for r in rerun)
    assert server.calls - asked_before == sum(
        1 for r in rerun for c in r["calls"] if not c["cached"]
    )

    before = server.calls
    code, _, err = cli("run", "web_shop", "--limit", "6", "--out", str(tmp_path / "warm"),
                       *_fake(server))  # fmt: skip
    assert code == 0, err
    warm_info, warm = read_run(tmp_path / "warm")
    assert server.calls == before  # every turn from the cache: zero model calls
    assert warm_info["model_calls"]["live"] == 0
    assert all(c["cached"] for r in warm for c in r["calls"])

    replay = tmp_path / "steps.jsonl"
    lines = [{"task": "web_shop", "id": r["id"], "step": c["step"], "prediction": c["text"]}
             for r in records for c in r["calls"]]  # fmt: skip
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, _, err = cli("run", "web_shop", "--limit", "6", "--model", f"replay:{replay}",
                       "--out", str(tmp_path / "replayed"))  # fmt: skip
    assert code == 0, err
    _, replayed = read_run(tmp_path / "replayed")
    keys = ("id", "status", "success", "metrics", "message", "prediction", "trace")
    assert [{k: r[k] for k in keys} for r in replayed] == [{k: r[k] for k in keys} for r in warm]


def test_history_shows_earlier_pages_and_is_fingerprinted(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    base = ("run", "web_shop", "--limit", "1", "--no-cache", *_fake(server))
    assert cli(*base, "--out", str(tmp_path / "plain"))[0] == 0
    plain_prompts = [r["prompt"] for r in server.requests]
    server.reset()
    assert cli(*base, "--history", "2", "--out", str(tmp_path / "history"))[0] == 0
    prompts = [r["prompt"] for r in server.requests]
    assert "Earlier pages" not in prompts[0] and "Earlier pages" in prompts[1]
    third = prompts[2]
    assert "[1] Action: search[" in third and "[2] Action: click[" in third
    assert "Current page: Instruction:" in third
    assert all("Earlier pages" not in p for p in plain_prompts)
    plain_info, _ = read_run(tmp_path / "plain")
    history_info, _ = read_run(tmp_path / "history")
    assert plain_info["fingerprint"] != history_info["fingerprint"]
    code, _, err = cli("run", "home_search", "--model", "oracle", "--history", "2")
    assert code == 2 and "--history 2" in err and "web_shop" in err


def test_an_original_layout_folder_with_only_ids(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    folder = tmp_path / "data" / "web_shop" / "v1"
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text('{"id": 10}\n{"id": 4000}\n')
    data_dir, out = str(tmp_path / "data"), str(tmp_path / "run")
    code, _, err = cli(
        "run", "web_shop", "--model", "oracle", "--version", "v1", "--data-dir", data_dir,
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert [r["id"] for r in records] == ["10", "4000"]
    assert info["metrics"]["web_shop"]["reward"] == 1.0


def test_the_oracle_scores_webshops_reward_on_normalised_options(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """An exact purchase of a goal asking for "grapefruit"/"sandalwood" scores what WebShop's
    get_reward gives it (worked out in test_reward.WEBSHOP_EXACT), not 1."""
    folder = tmp_path / "data" / "web_shop" / "v0"
    folder.mkdir(parents=True)
    ids = [143, 152, 156, 231, 0]
    (folder / "test.jsonl").write_text("".join(f'{{"id": {i}}}\n' for i in ids))
    out = tmp_path / "run"
    code, _, err = cli("run", "web_shop", "--model", "oracle", "--data-dir",
                       str(tmp_path / "data"), "--out", str(out))  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    rewards = {int(r["id"]): r["metrics"]["reward"] for r in records}
    assert rewards == pytest.approx({143: 0.8, 152: 0.75, 156: 0.75, 231: 0.75, 0: 1.0})
    assert all(r["prediction"] == "click[Buy Now]" for r in records)
    assert info["metrics"]["web_shop"]["purchase_match_rate"] == pytest.approx(1 / 5)


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('{"id": "10"}', "'id' is '10'"),
        ('{"id": true}', "'id' is True"),
        ('{"id": 99999999}', "is not a goal"),
        ("[10]", "'id' is None"),
        ("{oops", "invalid JSON"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_bad_ids_are_exit_2_naming_the_line(
    cli: Callable[..., CliResult], tmp_path: Path, line: str, fragment: str
) -> None:
    folder = tmp_path / "web_shop" / "v0"
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text('{"id": 1}\n' + line + "\n")
    code, _, err = cli("run", "web_shop", "--model", "oracle", "--data-dir", str(tmp_path))
    assert code == 2
    assert "test.jsonl:2" in err and fragment in err and len(err.strip().splitlines()) == 1


def test_chat_mode_and_an_unknown_version(
    server: FakeOpenAIServer, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    def chat_reply(body: dict[str, Any]) -> str:
        page = str(body["messages"][-1]["content"]).removeprefix("Task: ")
        return next_action(page, ShopperMemory())

    server.answer = chat_reply
    code, _, err = cli("run", "web_shop", "--mode", "chat", "--limit", "3",
                       "--out", str(tmp_path / "run"), *_fake(server))  # fmt: skip
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert info["counts"]["web_shop"]["scored"] == 3
    assert all(r["calls"][0]["text"].startswith("search[") for r in records)
    system, user = server.requests[0]["messages"]
    assert system["role"] == "system" and "\nAction:\nsearch[" in system["content"]
    assert user["content"].startswith("Task: WebShop [SEP] Instruction: [SEP] ")
    # A memoryless shopper on v0 pages clicks the same option again and again (the pages do
    # not show the selection): the original's loop, cut off at 25 turns.
    assert any(r["message"] == "no purchase in 25 turns" for r in records)
    code, _, err = cli("run", "web_shop", "--model", "oracle", "--version", "v7")
    assert code == 2 and "--version v0 or v1" in err
