"""``toolbench aware`` end to end through the CLI: build, verify, export, stats."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.aware.sources import FIXTURES
from tests.fakeserver import FakeOpenAIServer
from toolbench.aware.schema import Instance, read_instances

Cli = Callable[..., tuple[int, str, str]]
APIBANK = FIXTURES / "apibank" / "level-1-api.json"
WEATHER = "apibank-GetWeatherForecast-QueryAirQuality-level-1-1-0"
CURRENCY = "apibank-ConvertCurrency-QueryExchangeRate-level-1-2-0"


def _reply(turn: int, rewritten: str, removed: list[str]) -> str:
    answer = {"turn": turn, "rewritten": rewritten, "removed": removed}
    return (
        "Step by step: the city is what the call needs.\n```json\n" + json.dumps(answer) + "\n```"
    )


SCRIPT = {
    WEATHER: _reply(1, "Will it rain on May 14th?", ["in Lisbon"]),
    CURRENCY: _reply(1, "How many Japanese yen do I get for 250 euros?", ["250 euros"]),
}


def _by_id(path: Path) -> dict[str, Instance]:
    return {instance.id: instance for instance in read_instances(path)}


def test_utterance_removal_with_a_scripted_model(cli: Cli, tmp_path: Path) -> None:
    replay = tmp_path / "replies.jsonl"
    lines = [{"id": iid, "prediction": text} for iid, text in SCRIPT.items()]
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "ur.jsonl"
    code, stdout, _ = cli(
        "aware", "build", "--source", f"apibank:{APIBANK}", "--manipulation",
        "utterance_removal", "--model", f"replay:{replay}", "--out", str(out),
    )  # fmt: skip
    # Six dialogues have no scripted reply: reported as failures (exit 3), nothing invented.
    assert code == 3 and "6 model calls failed" in stdout
    data = _by_id(out)
    assert len(data) == 4
    good = data[f"{WEATHER}~utterance_removal"]
    assert good.dialogue[0].content == "Will it rain on May 14th?"
    assert good.twin_id == WEATHER and good.label == "incomplete"
    assert good.provenance.removed_text == ["in Lisbon"]
    assert good.verification.status == "pending"
    unchanged = data[f"{CURRENCY}~utterance_removal"]
    assert unchanged.verification.status == "rejected" and unchanged.verification.by == "auto"
    assert [r.split(":")[0] for r in unchanged.verification.reasons] == ["unchanged"]
    assert "1 rejected automatically" in stdout


def test_utterance_removal_against_a_loopback_server_then_from_cache(
    cli: Cli, tmp_path: Path
) -> None:
    def answer(body: dict[str, Any]) -> str:
        last = body["messages"][-1]["content"]
        if "rain in Lisbon" in last and "asthma" not in last:
            return _reply(1, "Will it rain on May 14th?", ["in Lisbon"])
        return "I would rather not."  # unparseable: rejected automatically, still recorded

    with FakeOpenAIServer(answer=answer) as server:
        args = [
            "aware", "build", "--source", f"apibank:{APIBANK}", "--manipulation",
            "utterance_removal", "--model", "openai:rewriter", "--base-url", server.base_url,
            "--api-key", "test", "--seed", "1",
        ]  # fmt: skip
        code, stdout, _ = cli(*args, "--out", str(tmp_path / "a.jsonl"))
        assert code == 0, stdout
        first_calls = server.calls
        assert first_calls == 8
        code, _, _ = cli(*args, "--out", str(tmp_path / "b.jsonl"))
        assert code == 0 and server.calls == first_calls  # every reply from the cache
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    data = _by_id(tmp_path / "a.jsonl")
    assert data[f"{WEATHER}~utterance_removal"].verification.status == "pending", data[
        f"{WEATHER}~utterance_removal"
    ].verification
    statuses = [i.verification.reasons for i in data.values() if i.label == "incomplete"]
    assert sum(1 for reasons in statuses if reasons and reasons[0].startswith("unparseable")) >= 1
    assert all(i.provenance.generator == "openai:rewriter" for i in data.values() if i.twin_id)


def test_bfcl_import_and_stats_for_a_mixed_dataset(cli: Cli, tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.jsonl"
    code, _, _ = cli(
        "aware", "build", "--source", f"bfcl:{FIXTURES / 'bfcl'}", "--source",
        "task:home_search", "--manipulation", "tool_removal", "--out", str(mixed),
    )  # fmt: skip
    assert code == 0
    data = read_instances(mixed)
    irrelevance = [i for i in data if "irrelevance" in i.provenance.generator]
    assert irrelevance and all(i.label == "incomplete" for i in irrelevance)
    code, stdout, _ = cli("aware", "stats", str(mixed))
    assert code == 0
    rows = [line for line in stdout.splitlines() if "task:home_search" in line]
    assert any("tool_removal" in row and " 100 " in row for row in rows)
    assert any(line.split("│")[1].strip() == "bfcl" for line in stdout.splitlines() if "│" in line)
    code, _, err = cli("aware", "stats", str(mixed), str(mixed))
    assert code == 2 and "also in" in err


def test_verify_then_export_through_the_cli(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = tmp_path / "sheets.jsonl"
    code, _, _ = cli(
        "aware", "build", "--source", "task:google_sheets", "--manipulation", "tool_removal",
        "--out", str(dataset),
    )  # fmt: skip
    assert code == 0
    before = dataset.read_text().splitlines()
    # Accept the first; reject the second (reason 1, empty note); undo that; reject it again
    # with "other" and a note; quit.
    keys = "a\nr\n1\n\nu\nr\nother\nworksheet.update can still do it\nq\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(keys))
    code, stdout, _ = cli("aware", "verify", str(dataset), "--reviewer", "kim")
    assert code == 0, stdout
    after = read_instances(dataset)
    assert len(after) == len(before)
    decided = [i for i in after if i.verification.by == "kim"]
    assert [i.verification.status for i in decided] == ["accepted", "rejected"]
    assert decided[1].verification.reasons == ["other"]
    assert decided[1].verification.note == "worksheet.update can still do it"
    pending = [i for i in after if i.label == "incomplete" and i.verification.status == "pending"]
    assert len(pending) == 68


@pytest.mark.parametrize(
    "source",
    [f"toolbench:{FIXTURES / 'stabletoolbench'}", f"apibank:{APIBANK}"],
    ids=["stabletoolbench", "apibank"],
)
def test_api_replacement_through_the_cli(cli: Cli, tmp_path: Path, source: str) -> None:
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        code, stdout, _ = cli(
            "aware", "build", "--source", source, "--manipulation", "api_replacement",
            "--seed", "5", "--out", str(out),
        )  # fmt: skip
        assert code == 0, stdout
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]  # same seed, same bytes (the second run from the vector cache)
    data = _by_id(tmp_path / "a.jsonl")
    twins = [i for i in data.values() if i.manipulation == "api_replacement"]
    assert twins
    for twin in twins:
        original = data[twin.twin_id or ""]
        before = {api.name for api in original.apis}
        after = {api.name for api in twin.apis}
        assert len(twin.provenance.replacements) == len(original.relevant_apis)
        for swap in twin.provenance.replacements:
            assert swap.original in original.relevant_apis
            assert swap.replacement not in before  # neither relevant nor already offered
            assert swap.replacement in after and swap.original not in after
        assert twin.dialogue == original.dialogue and len(twin.apis) == len(original.apis)


def test_an_empty_build_is_exit_2_with_the_skip_counts_once(cli: Cli, tmp_path: Path) -> None:
    """Every record skipped used to write an empty file with exit 0."""
    out = tmp_path / "empty.jsonl"
    code, stdout, stderr = cli(
        "aware", "build", "--source", f"apibank:{FIXTURES / 'apibank'}",
        "--manipulation", "tool_removal", "--out", str(out),
    )  # fmt: skip
    assert code == 2
    assert not out.exists()
    assert stdout.count("skipped 8 for tool_removal") == 1
    assert "nothing written" in stderr and "8 skipped" in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_encoding_progress_is_a_bar_on_a_terminal_and_lines_in_a_log() -> None:
    from rich.console import Console
    from rich.progress import Progress

    from toolbench.cli.aware import EncodingProgress

    log = io.StringIO()
    console = Console(file=log, force_terminal=False, width=120)
    report = EncodingProgress(console, Progress(console=console), every_s=0.0)
    for _ in range(3):
        report(10, 30)
    lines = log.getvalue().splitlines()
    assert len(lines) == 3 and lines[-1].startswith("encoding: 30/30 texts, ")
    assert "texts/s" in lines[0] and "s left" in lines[0]
    quiet = EncodingProgress(console, Progress(console=console), every_s=3600.0)
    quiet(10, 30)
    quiet(20, 30)  # only the final line, not one per chunk
    assert len(log.getvalue().splitlines()) == 4

    tty = Console(file=io.StringIO(), force_terminal=True, width=120)
    with Progress(console=tty) as bar:
        on_terminal = EncodingProgress(tty, bar)
        on_terminal(5, 10)
        assert bar.tasks[0].completed == 5 and bar.tasks[0].total == 10


def test_build_summary_counts_pre_verification_per_check(cli: Cli, tmp_path: Path) -> None:
    """The StableToolBench fixture offers forecast APIs of one tool side by side: the most
    similar candidate is often a sibling from the same tool, which the check turns down."""
    source = f"toolbench:{FIXTURES / 'stabletoolbench'}"
    out = tmp_path / "rep.jsonl"
    args = ("aware", "build", "--source", source, "--manipulation", "api_replacement")
    code, stdout, _ = cli(*args, "--out", str(out))
    assert code == 0, stdout
    assert "pre-verification same_tool: turned down" in stdout
    twins = [i for i in read_instances(out) if i.manipulation == "api_replacement"]
    recorded = [n for t in twins for n in t.provenance.notes["pre_verification"]]
    assert recorded and all(n["why"].startswith("same_tool:") for n in recorded)
    code, stdout, _ = cli(*args, "--out", str(tmp_path / "off.jsonl"), "--similarity-ceiling", "x")
    assert code == 2


def test_a_judged_servable_twin_is_rebuilt_from_the_next_candidate(
    cli: Cli, tmp_path: Path
) -> None:
    """--verify-model: the judge says the first twin of each instance can still be served, and
    not the second; every twin is rebuilt once, the turned-down API recorded and excluded."""
    seen: set[str] = set()

    def judge(body: dict[str, Any]) -> str:
        question = body["messages"][-1]["content"].split("APIs:")[0]
        if question in seen:
            return "VERDICT: no\nNone of the offered APIs does this."
        seen.add(question)
        return "VERDICT: yes\nAnother offered API does the same job."

    source = f"toolbench:{FIXTURES / 'stabletoolbench'}"
    out = tmp_path / "judged.jsonl"
    with FakeOpenAIServer(answer=judge) as server:
        code, stdout, _ = cli(
            "aware", "build", "--source", source, "--manipulation", "api_replacement",
            "--verify-model", "openai:judge", "--base-url", server.base_url, "--no-cache",
            "--out", str(out),
        )  # fmt: skip
    assert code == 0, stdout
    assert "pre-verification judge: turned down" in stdout
    twins = [i for i in read_instances(out) if i.manipulation == "api_replacement"]
    assert twins
    for twin in twins:
        assert twin.provenance.notes["judge"]["verdict"] == "does not serve"
        judged = [
            n for n in twin.provenance.notes["pre_verification"] if n["why"].startswith("judge")
        ]
        assert judged and all(n["candidate"] not in {a.name for a in twin.apis} for n in judged)
        assert twin.verification.status == "pending"
    code, _, stderr = cli(
        "aware", "build", "--source", source, "--manipulation", "tool_removal",
        "--verify-model", "openai:judge", "--out", str(tmp_path / "x.jsonl"),
    )  # fmt: skip
    assert code == 2 and "--verify-model" in stderr


def test_removal_kind_reaches_the_rewriter(cli: Cli, tmp_path: Path) -> None:
    """--removal-kind unclear_request: the twins record the kind they were made with."""
    seen: list[str] = []

    def rewriter(body: dict[str, Any]) -> str:
        seen.append(body["messages"][0]["content"])
        return _reply(1, "Can you do something about the thing for May 14th?", [])

    out = tmp_path / "unclear.jsonl"
    with FakeOpenAIServer(answer=rewriter) as server:
        code, stdout, _ = cli(
            "aware", "build", "--source", f"apibank:{APIBANK}", "--manipulation",
            "utterance_removal", "--model", "openai:rewriter", "--base-url", server.base_url,
            "--removal-kind", "unclear_request", "--no-cache", "--out", str(out),
        )  # fmt: skip
    assert code == 0, stdout
    twins = [i for i in read_instances(out) if i.manipulation == "utterance_removal"]
    assert twins and all(t.provenance.notes["removal_kind"] == "unclear_request" for t in twins)
    code, _, _ = cli("aware", "build", "--source", f"apibank:{APIBANK}", "--removal-kind", "x")
    assert code == 2
