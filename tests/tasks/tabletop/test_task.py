"""tabletop end to end through the CLI: the oracle's strict 1.000 with nested calls recorded,
the baseline's real scores, replay by step, byte-identical reruns (records and images), a
served model's second run all from the cache, and bad data refused with exit 2."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from toolbench.tasks.tabletop import TASK, experts
from toolbench.tasks.tabletop.session import split_prompt

V0 = Path(TASK.package_dir) / "data" / "v0"
CHAIN = re.compile(rb', "chain": "[0-9a-f]+"\}$')


def _lines_by_key(folder: Path) -> dict[tuple[str, int], bytes]:
    """Each record's bytes as written, without the log's chain field (a per-run anchor)."""
    out = {}
    for raw in (folder / "samples.jsonl").read_bytes().splitlines():
        record = json.loads(raw)
        out[(record["id"], record["epoch"])] = CHAIN.sub(b"}", raw)
    return out


def _images(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((folder / "images").rglob("*.png"))}


def test_oracle_scores_strict_one_with_every_nested_call_recorded(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "oracle"
    # 120 of the 300 (8 per template, the data interleaves them) keep the test fast; the
    # benchmark (benchmarks/tabletop_speed.py) runs all 300 and prints the strict rate.
    code, _, err = cli("run", "tabletop", "--model", "oracle", "--limit", "120", "--out", str(out))
    assert code == 0, err
    info, records = read_run(out)
    metrics = info["metrics"]["tabletop"]
    assert len(records) == 120
    assert {r["id"].rsplit("-", 1)[0] for r in records} == {f"SI_{i}" for i in range(8)} | {
        f"UI_{i}" for i in range(7)
    }
    assert metrics == {"success_rate": 1.0, "success_rate_strict": 1.0, "crash_rate": 0.0}
    steps = [call["step"] for record in records for call in record["calls"]]
    assert len(steps) > 240  # more than two model calls a sample: nested LMPs and fgen
    for prefix in ("tabletop_ui", "parse_obj_name", "parse_position", "fgen:"):
        assert any(step.startswith(prefix) for step in steps), prefix
    assert any(re.fullmatch(r"parse_obj_name#\d", step) for step in steps)
    # fgen recursion: a generated function whose body calls another undefined one
    assert "fgen:same_color" in steps
    sample = records[0]
    assert sample["prediction"] == sample["calls"][0]["text"]
    assert sample["trace"][0]["step"] == "tabletop_ui"
    for which in ("initial", "final"):
        png = out / sample["details"]["images"][which]
        assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_baseline_scores_between_zero_and_one_with_intervals(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    out = tmp_path / "baseline"
    code, _, err = cli("run", "tabletop", "--model", "baseline", "--limit", "90",
                       "--out", str(out))  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    metrics = info["metrics"]["tabletop"]
    assert 0.05 < metrics["success_rate"] < 0.99
    assert 0.0 < metrics["crash_rate"] < 0.5
    assert metrics["success_rate_strict"] <= metrics["success_rate"]
    crashed = [r for r in records if r["status"] == "model_error"]
    assert crashed and all(r["message"] for r in crashed)
    code, report, err = cli("report", str(out))
    assert code == 0, err
    assert "success_rate_strict" in report and "[" in report  # bootstrap intervals


def test_replay_by_step_reproduces_a_run(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    first = tmp_path / "first"
    code, _, err = cli("run", "tabletop", "--model", "baseline", "--limit", "24",
                       "--out", str(first))  # fmt: skip
    assert code == 0, err
    _, records = read_run(first)
    replay = tmp_path / "replay.jsonl"
    with replay.open("w") as handle:
        for record in records:
            for call in record["calls"]:
                line = {"task": "tabletop", "id": record["id"], "step": call["step"],
                        "prediction": call["text"]}  # fmt: skip
                handle.write(json.dumps(line) + "\n")
    second = tmp_path / "second"
    code, _, err = cli("run", "tabletop", "--model", f"replay:{replay}", "--limit", "24",
                       "--out", str(second))  # fmt: skip
    assert code == 0, err
    before = {r["id"]: r for r in records}
    after = {r["id"]: r for r in read_run(second)[1]}
    assert before.keys() == after.keys()
    for ident, record in before.items():
        again = after[ident]
        assert (again["status"], again["success"], again["metrics"], again["message"]) == (
            record["status"], record["success"], record["metrics"], record["message"],
        )  # fmt: skip
        assert [c["step"] for c in again["calls"]] == [c["step"] for c in record["calls"]]


def test_same_run_twice_gives_identical_records_and_images(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    folders = []
    for name in ("one", "two"):
        out = tmp_path / name
        code, _, err = cli("run", "tabletop", "--model", "baseline", "--limit", "20",
                           "--no-cache", "--out", str(out))  # fmt: skip
        assert code == 0, err
        folders.append(out)
    assert _lines_by_key(folders[0]) == _lines_by_key(folders[1])
    first, second = _images(folders[0]), _images(folders[1])
    assert len(first) >= 30 and first == second


def _good_model(body: dict[str, Any]) -> str:
    """A served model that writes what the expert writes, reading only the prompt."""
    from toolbench.tasks.tabletop import docs as prompts

    prompt = body.get("prompt") or body["messages"][-1]["content"]
    for lmp, base in sorted(prompts.BASE_PROMPTS.items(), key=lambda kv: -len(kv[1])):
        if base and prompt.startswith(base):
            step = "fgen:x" if lmp == "fgen" else lmp
            _, query, context = split_prompt(step, prompt, base)
            return str(experts.ideal_program(lmp, query, context, None))
    return ""


def test_served_model_second_run_is_all_cache_hits(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    from tests.fakeserver import FakeOpenAIServer

    with FakeOpenAIServer(answer=_good_model) as server:
        flags = ("--model", "openai:m", "--base-url", server.base_url, "--max-retries", "0",
                 "--limit", "12")  # fmt: skip
        code, _, err = cli("run", "tabletop", *flags, "--out", str(tmp_path / "cold"))
        assert code == 0, err
        calls = server.calls
        info, _ = read_run(tmp_path / "cold")
        assert calls > 12 and info["metrics"]["tabletop"]["success_rate_strict"] == 1.0
        code, _, err = cli("run", "tabletop", *flags, "--out", str(tmp_path / "warm"))
        assert code == 0, err
        assert server.calls == calls
        warm, _ = read_run(tmp_path / "warm")
        total = info["model_calls"]["live"] + info["model_calls"]["cached"]
        assert info["model_calls"]["live"] == calls
        assert warm["model_calls"] == {"live": 0, "cached": total}
        assert _lines_by_key(tmp_path / "cold").keys() == _lines_by_key(tmp_path / "warm").keys()


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("not json", ":1:"),
        ('{"tester_id": "SI_0"}', ":1:"),
    ],
)
def test_bad_data_dir_is_exit_2_naming_the_line(
    cli: Callable[..., CliResult], tmp_path: Path, line: str, why: str
) -> None:
    folder = tmp_path / "data" / "tabletop" / "v0"
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text(line + "\n")
    code, _, err = cli("run", "tabletop", "--model", "oracle", "--data-dir",
                       str(tmp_path / "data"), "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 2
    assert why in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_original_layout_data_dir_runs(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    folder = tmp_path / "data" / "tabletop" / "v0"
    folder.mkdir(parents=True)
    lines = (V0 / "test.jsonl").read_text().splitlines()[:5]
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n")
    code, _, err = cli("run", "tabletop", "--model", "oracle", "--data-dir",
                       str(tmp_path / "data"), "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert len(records) == 5 and info["metrics"]["tabletop"]["success_rate_strict"] == 1.0


def test_replayed_text_utf8_cannot_encode_is_a_model_error(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A nested LMP query with a lone surrogate (an escape in the code) and a reply holding
    one: each the model's error with a message saying so, not an internal error. (Neither
    reply holds a stop sequence of its LMP, which the recorder would cut it at.)"""
    replies = [
        {"id": "SI_0-0", "step": "tabletop_ui",
         "prediction": "x = parse_obj_name('\\ud800', 'objs = []')"},
        {"id": "SI_1-0", "step": "tabletop_ui", "prediction": "x = '\ud800'"},
    ]  # fmt: skip
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in replies))
    code, _, err = cli("run", "tabletop", "--model", f"replay:{replay}", "--limit", "2",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    _, records = read_run(tmp_path / "run")
    messages = {r["id"]: (r["status"], r["message"]) for r in records}
    for ident, where in (("SI_0-0", "parse_obj_name's query"), ("SI_1-0", "tabletop_ui's reply")):
        status, message = messages[ident]
        assert status == "model_error" and "internal error" not in message, message
        assert f"{where} holds text that cannot be encoded as UTF-8" in message, message


def test_data_with_a_lone_surrogate_is_exit_2(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    folder = tmp_path / "data" / "tabletop" / "v0"
    folder.mkdir(parents=True)
    record = json.loads((V0 / "test.jsonl").read_text().splitlines()[0])
    record["configs"]["instruction"] = "\ud800" + record["configs"]["instruction"]
    (folder / "test.jsonl").write_text(json.dumps(record) + "\n")  # the escape, ASCII on disk
    code, _, err = cli("run", "tabletop", "--model", "oracle", "--data-dir",
                       str(tmp_path / "data"), "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 2 and ":1: " in err and "lone surrogate" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "run").exists()


def test_prompt_command_shows_the_first_lmp_prompt(cli: Callable[..., CliResult]) -> None:
    from toolbench.tasks.tabletop import docs as prompts

    code, out, err = cli("prompt", "tabletop", "--sample", "SI_0-0")
    assert code == 0, err
    # max_tokens and the stop sequences follow the prompt, after a rule on a line of its own.
    *prompt_lines, rule, _, _, _ = out.split("\n")
    assert rule.strip("─- ") == "generation", rule
    shown = "\n".join(prompt_lines)
    assert out.endswith("\nmax_tokens: 256\nstop: '#', 'objects = [', '------', 'Task:'\n")
    record = json.loads((V0 / "test.jsonl").read_text().splitlines()[0])
    configs = record["configs"]
    objects = [*configs["block_list"], *configs["bowl_list"]]
    expected = (
        f"{prompts.BASE_PROMPTS['tabletop_ui']}\n\nobjects = {objects!r}\n"
        f"# {configs['instruction']}."
    )
    assert shown == expected


def test_one_worker_many_samples_in_nested_calls_at_once(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """Sixteen samples in flight on one sandbox worker: each sample's nested calls run in the
    worker its program holds, so none waits for another worker and the run finishes."""
    out = tmp_path / "one"
    code, _, err = cli("run", "tabletop", "--model", "oracle", "--limit", "16", "--concurrency",
                       "16", "--sandbox-workers", "1", "--out", str(out))  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    assert info["metrics"]["tabletop"]["success_rate_strict"] == 1.0
    assert sum(len(r["calls"]) for r in records) > 16


def test_fix_corner_name_flag(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    """The baseline sends blocks to ``get_corner_name(...)`` for "different corners" (UI_0):
    the original's "botom right corner" crashes it; with the flag the name resolves."""
    runs = {}
    for name, extra in (("as_written", ()), ("fixed", ("--fix-corner-name",))):
        out = tmp_path / name
        code, _, err = cli("run", "tabletop", "--model", "baseline", "--limit", "45",
                           *extra, "--out", str(out))  # fmt: skip
        assert code == 0, err
        runs[name] = {r["id"]: r for r in read_run(out)[1] if r["id"].startswith("UI_0")}
    misspelt = [r for r in runs["as_written"].values() if "botom" in r["message"]]
    assert misspelt
    for ident in (r["id"] for r in misspelt):
        assert "botom" not in runs["fixed"][ident]["message"]
    info, _ = read_run(tmp_path / "fixed")
    assert info["config"]["task_options"]["tabletop"]["fix_corner_name"] is True
    code, _, err = cli("run", "booking", "--model", "oracle", "--fix-corner-name",
                       "--out", str(tmp_path / "b"))  # fmt: skip
    assert code == 2 and "--fix-corner-name" in err
