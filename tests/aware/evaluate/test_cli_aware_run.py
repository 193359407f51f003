"""``toolbench aware run`` and ``report`` end to end: built-in models and baselines on a mixed
dataset, every mode against a real OpenAI-compatible server on loopback, cache and resume."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.aware.sources import FIXTURES
from tests.fakeserver import FakeOpenAIServer
from toolbench.aware.evaluate.prompts import EXPLAIN_REQUEST, JUDGE_SYSTEM, TOOLS_SYSTEM
from toolbench.runner.store import read_records, read_run_info

Cli = Callable[..., tuple[int, str, str]]
MODES = "explicit,implicit,tools,feedback,explain"


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """home_search twins (slot and tool removal) + BFCL irrelevance and multi-turn pairs."""
    from toolbench.cli import main

    out = tmp_path_factory.mktemp("aware") / "mixed.jsonl"
    code = main(
        ["aware", "build", "--source", "task:home_search", "--source",
         f"bfcl:{FIXTURES / 'bfcl'}", "--manipulation", "slot_removal,tool_removal",
         "--seed", "0", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    return out


def _all_row(info: dict[str, Any], task: str) -> dict[str, float]:
    return info["metrics"][f"aware-{task}"]["all/all"]


def _run(cli: Cli, dataset: Path, out: Path, *flags: str) -> dict[str, Any]:
    code, stdout, stderr = cli("aware", "run", str(dataset), "--out", str(out), *flags)
    assert code == 0, stdout + stderr
    return read_run_info(out)


def test_oracle_and_trivial_baselines(cli: Cli, mixed: Path, tmp_path: Path) -> None:
    flags = ("--mode", "explicit,implicit,tools,feedback", "--shots", "0,4", "--include-pending")
    oracle = _run(cli, mixed, tmp_path / "oracle", "--model", "oracle", *flags)
    for task in ("explicit-0shot", "explicit-4shot", "implicit", "tools", "feedback"):
        row = _all_row(oracle, task)
        assert row["accuracy"] == 1.0 and row["f1"] == 1.0, task
    yes = _run(cli, mixed, tmp_path / "yes", "--model", "always-yes", *flags)
    no = _run(cli, mixed, tmp_path / "no", "--model", "always-no", *flags)
    rnd = _run(cli, mixed, tmp_path / "rnd", "--model", "random", *flags)
    for task in ("explicit-0shot", "implicit", "tools", "feedback"):
        assert _all_row(yes, task)["f1"] == 0.0 and _all_row(yes, task)["yes_ratio"] == 1.0
        assert _all_row(no, task)["recall"] == 1.0 and _all_row(no, task)["yes_ratio"] == 0.0
        assert 0.4 <= _all_row(rnd, task)["yes_ratio"] <= 0.6
    # random: about half right on a balanced view (per class), whatever the class mix
    records = [r for r in read_records(tmp_path / "rnd") if r["task"] == "aware-explicit-0shot"]
    for label in ("complete", "incomplete"):
        hits = [r["success"] for r in records if r["details"]["label"] == label]
        assert 0.35 <= sum(hits) / len(hits) <= 0.65
    # every row of the mixed dataset is there: both sources, each manipulation
    keys = set(oracle["metrics"]["aware-explicit-0shot"])
    assert {"task:home_search/slot_removal", "task:home_search/tool_removal"} <= keys
    assert any(k.startswith("bfcl/") for k in keys)


def test_similarity_baseline_fits_a_threshold(cli: Cli, mixed: Path, tmp_path: Path) -> None:
    info = _run(cli, mixed, tmp_path / "sim", "--model", "similarity", "--limit", "40")
    assert info["baseline"]["similarity_fit"] == "cross-fitted: 5 folds by original_id"
    thresholds = info["baseline"]["similarity_thresholds"]
    assert len(thresholds) == 5 and all(-1.0 <= t <= 1.01 for t in thresholds)
    assert info["baseline"]["encoder"].startswith("all-MiniLM-L6-v2@")
    row = _all_row(info, "explicit-0shot")
    assert 0.0 < row["yes_ratio"] < 1.0 or row["accuracy"] > 0.5


def _fake_answer(body: dict[str, Any]) -> str | dict[str, Any]:
    """A scripted model: says No to explicit questions, asks back in implicit mode, calls the
    first tool natively, explains, and the judge agrees."""
    messages = body["messages"]
    system, last = messages[0]["content"], messages[-1]["content"]
    if system == JUDGE_SYSTEM:
        return "Correct\nIt names the missing location."
    if last == EXPLAIN_REQUEST:
        return "The user never said where to search."
    if system == TOOLS_SYSTEM:
        name = body["tools"][0]["function"]["name"]
        return {"content": None, "tool_calls": [{"name": name, "arguments": {"x": 1}}]}
    if system.startswith("You are an AI assistant that can call APIs"):
        return "Which city should I search in?"
    return "No"


def test_every_mode_against_a_server_then_from_the_cache(
    cli: Cli, mixed: Path, tmp_path: Path
) -> None:
    flags = ["--mode", MODES, "--shots", "0,2", "--limit", "4", "--include-pending"]
    with FakeOpenAIServer(answer=_fake_answer) as server:
        model = ["--model", "openai:fake", "--base-url", server.base_url]
        judge = ["--judge", "openai:judge", "--concurrency", "4"]
        first = _run(cli, mixed, tmp_path / "a", *model, *judge, *flags)
        calls = server.calls
        assert calls > 0 and first["model_calls"]["live"] > 0
        assert any("tools" in r for r in server.requests)
        second = _run(cli, mixed, tmp_path / "b", *model, *judge, *flags)
        assert server.calls == calls, "the second run must be served from the cache"
    assert second["metrics"] == first["metrics"]
    assert second["model_calls"]["live"] == 0
    tasks = {r["task"] for r in read_records(tmp_path / "a")}
    assert tasks == {
        "aware-explicit-0shot", "aware-explicit-2shot", "aware-implicit", "aware-tools",
        "aware-feedback", "aware-explain",
    }  # fmt: skip
    # the scripted model says No everywhere: recall 1; implicit questions are abstentions
    assert _all_row(first, "explicit-0shot")["recall"] == 1.0
    assert _all_row(first, "implicit")["yes_ratio"] == 0.0
    assert _all_row(first, "tools")["yes_ratio"] == 1.0  # a native call is a call
    explain = first["metrics"]["aware-explain"]
    assert explain["explained"] == explain["incomplete_instances"] > 0
    assert explain["explanation_accuracy"]["mean"] == 1.0
    assert explain["judge_prompt_tokens"] > 0


def test_report_tables_and_paired_difference(cli: Cli, mixed: Path, tmp_path: Path) -> None:
    flags = ("--mode", "explicit,feedback", "--include-pending")
    _run(cli, mixed, tmp_path / "oracle", "--model", "oracle", *flags)
    _run(cli, mixed, tmp_path / "yes", "--model", "always-yes", *flags)
    code, stdout, _ = cli("report", str(tmp_path / "yes"))
    assert code == 0
    assert "explicit-0shot" in stdout and "slot_removal" in stdout and "task:home_search" in stdout
    assert "feedback: accuracy per scenario" in stdout and "[" in stdout
    code, stdout, _ = cli("report", str(tmp_path / "yes"), str(tmp_path / "oracle"))
    assert code == 0 and "paired difference" in stdout
    code, stdout, _ = cli("report", "--json", str(tmp_path / "yes"), str(tmp_path / "oracle"))
    data = json.loads(stdout)
    diff = {(d["task"], d["source"], d["manipulation"]): d for d in data["difference"]}
    acc = diff[("aware-explicit-0shot", "all", "all")]["accuracy"]
    assert acc["mean"] > 0 and acc["low"] > 0  # oracle beats always-yes, significantly


def test_resume_keeps_records_and_bad_input_exits_2(cli: Cli, mixed: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    _run(cli, mixed, out, "--model", "oracle", "--limit", "3")
    before = (out / "samples.jsonl").read_bytes()
    _run(cli, mixed, out, "--model", "oracle", "--limit", "3")
    assert (out / "samples.jsonl").read_bytes() == before  # nothing redone, nothing duplicated
    code, _, stderr = cli("aware", "run", str(mixed), "--model", "oracle", "--mode", "explicitt")
    assert code == 2 and "did you mean" in stderr
    code, _, stderr = cli("aware", "run", str(mixed), "--model", "oracle", "--shots", "3")
    assert code == 2 and "--shots" in stderr
    code, _, stderr = cli("aware", "run", str(mixed), "--model", "oracle", "--mode", "explain")
    assert code == 2 and "--judge" in stderr
    code, _, stderr = cli("aware", "run", str(tmp_path / "nope.jsonl"), "--model", "oracle")
    assert code == 2 and "nope.jsonl" in stderr


def test_prompt_shows_the_messages(cli: Cli, mixed: Path) -> None:
    code, stdout, _ = cli("aware", "prompt", str(mixed), "--mode", "explicit", "--shots", "2")
    assert code == 0 and "Answer Yes or No." in stdout and stdout.count("assistant") >= 2
    code, stdout, _ = cli("aware", "prompt", str(mixed), "--mode", "tools")
    assert code == 0 and '"type": "function"' in stdout


def test_explanations_judged_and_compared_with_hand_labels(
    cli: Cli, mixed: Path, tmp_path: Path
) -> None:
    from toolbench.aware.evaluate.items import evaluated
    from toolbench.aware.evaluate.run import limited_families
    from toolbench.aware.schema import read_instances

    chosen = limited_families(evaluated(read_instances(mixed), include_pending=True), 2)
    incomplete = [i.id for i in chosen if i.label == "incomplete"]
    assert len(incomplete) >= 2
    answers, verdicts, labels = [], [], []
    for n, iid in enumerate(incomplete):
        said_no = n != len(incomplete) - 1  # the last one is (wrongly) answered Yes
        answers.append({"id": iid, "prediction": "No" if said_no else "Yes"})
        answers.append({"id": f"{iid}#explain", "prediction": "The location is missing."})
        verdicts.append({"id": f"{iid}#judge", "prediction": "Correct" if n == 0 else "Incorrect"})
        labels.append({"id": iid, "correct": True})
    for name, lines in (("model", answers), ("judge", verdicts), ("labels", labels)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    info = _run(
        cli, mixed, tmp_path / "run", "--model", f"replay:{tmp_path / 'model.jsonl'}",
        "--judge", f"replay:{tmp_path / 'judge.jsonl'}", "--mode", "explain", "--limit", "2",
        "--include-pending", "--judge-labels", str(tmp_path / "labels.jsonl"),
    )  # fmt: skip
    explain = info["metrics"]["aware-explain"]
    explained = len(incomplete) - 1
    assert explain["incomplete_instances"] == len(incomplete)
    assert explain["explained"] == explained
    assert explain["explanation_accuracy"]["mean"] == pytest.approx(1 / explained)
    code, stdout, _ = cli("report", str(tmp_path / "run"))
    assert code == 0 and "judge vs hand labels" in stdout
    assert f"agreement {1 / explained:.3f}" in stdout


@pytest.mark.parametrize(
    ("prediction", "api"),
    [
        ("API-Request: [search(location='Austin'", None),  # malformed
        ("API-Request: [ApiName(key1='value1', key2='value2')]", None),  # the format line, copied
        ("API-Request: [SendEmail(to='bob@example.com')]", "SendEmail"),  # not offered
    ],
    ids=["malformed", "format-line-copy", "not-offered"],
)
def test_failed_implicit_call_is_wrong_not_abstention_nor_a_call(
    cli: Cli, mixed: Path, tmp_path: Path, prediction: str, api: str | None
) -> None:
    """SmolLM2-135M copied the prompt's format line in 10 of 24 replies, and complete instances
    scored correct for it: a reply whose only calls cannot run is wrong whatever the label."""
    from toolbench.aware.evaluate.items import evaluated
    from toolbench.aware.evaluate.run import limited_families
    from toolbench.aware.schema import read_instances

    chosen = limited_families(evaluated(read_instances(mixed), include_pending=True), 1)
    assert {i.label for i in chosen} == {"complete", "incomplete"}
    lines = [{"id": i.id, "prediction": prediction} for i in chosen]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    info = _run(
        cli, mixed, tmp_path / "run", "--model", f"replay:{tmp_path / 'm.jsonl'}",
        "--mode", "implicit", "--limit", "1", "--include-pending",
    )  # fmt: skip
    row = _all_row(info, "implicit")
    assert row["accuracy"] == 0.0 and row["recall"] == 0.0  # never counted as abstaining
    assert row["yes_ratio"] == 0.0  # nor as calling
    records = read_records(tmp_path / "run")
    assert {r["details"]["bucket"] for r in records} == {"unparseable"}
    assert {r["details"]["api"] for r in records} == {api}
    assert {r["details"]["offered"] for r in records} == {None if api is None else False}


def test_infra_errors_are_left_out_and_retried(cli: Cli, mixed: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    flags = ["aware", "run", str(mixed), "--out", str(out), "--limit", "2", "--max-retries", "0"]
    with FakeOpenAIServer(answer="No", fail_always=True) as server:
        model = ["--model", "openai:fake", "--base-url", server.base_url]
        code, stdout, _ = cli(*flags, *model)
        assert code == 3 and "infra errors" in stdout
        info = read_run_info(out)
        assert info["status"] == "incomplete" and "aware-explicit-0shot" not in info["metrics"]
        server.fail_always = False
        code, _, _ = cli(*flags, *model)
    assert code == 0
    records = read_records(out)
    assert {r["status"] for r in records} == {"scored"}
    assert len(records) == len({r["id"] for r in records})  # retried, never duplicated
    assert (out / "attempts.jsonl").is_file()


def test_a_freshly_built_dataset_without_include_pending_is_refused(
    cli: Cli, mixed: Path, tmp_path: Path
) -> None:
    """Right after ``aware build`` every incomplete twin is pending: scoring only the complete
    originals gave F1 0.000 over no incomplete instance, exit 0. Now exit 2 with one line."""
    from toolbench.aware.schema import Verification, read_instances, write_instances

    fresh = tmp_path / "fresh.jsonl"
    write_instances(
        fresh,
        [
            i.model_copy(update={"verification": Verification()}) if i.label == "incomplete" else i
            for i in read_instances(mixed)
        ],
    )
    out = tmp_path / "run"
    code, stdout, stderr = cli("aware", "run", str(fresh), "--model", "oracle", "--out", str(out))
    assert code == 2
    message = (stdout + stderr).strip()
    assert "incomplete instances are pending review" in message and "--include-pending" in message
    assert len(message.splitlines()) == 1
    assert not out.exists()  # bad input leaves nothing behind
    assert "all 214 incomplete instances" in message
    ok = cli(
        "aware", "run", str(fresh), "--model", "oracle", "--out", str(out), "--include-pending"
    )
    assert ok[0] == 0


def test_agreement_per_source_and_manipulation(cli: Cli, mixed: Path, tmp_path: Path) -> None:
    """Table 6's layout: explicit vs implicit and tools per (source, manipulation), with
    intervals. The oracle answers every mode right, so the modes agree everywhere."""
    flags = ("--mode", "explicit,implicit,tools", "--shots", "0", "--include-pending")
    _run(cli, mixed, tmp_path / "oracle", "--model", "oracle", *flags)
    code, stdout, _ = cli("report", str(tmp_path / "oracle"))
    assert code == 0 and "paper Table 6" in stdout and "vs implicit (n)" in stdout
    code, stdout, _ = cli("report", "--json", str(tmp_path / "oracle"))
    rows = json.loads(stdout)["runs"][str(tmp_path / "oracle")]["agreement_by_group"]
    keys = {(r["source"], r["manipulation"], r["versus"]) for r in rows}
    assert ("all", "all", "implicit") in keys and ("all", "all", "tools") in keys
    assert ("task:home_search", "slot_removal", "implicit") in keys
    for row in rows:
        assert row["mean"] == 1.0 and row["low"] <= row["mean"] <= row["high"] and row["n"] > 0
