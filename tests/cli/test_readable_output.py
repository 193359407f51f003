"""What a person reads in the terminal and the exports: a progress line on time while a slow
local model generates, with an estimate of the time left only once it can be measured; no row
of zero tokens for models that report none, and numeric export columns that hold numbers;
``show`` with a rounded latency (none when unknown) and a failed agent's last stderr lines."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.report.runs import make_run, record

Cli = Callable[..., CliResult]
PROGRESS = re.compile(r"^progress: (\d+)/(\d+) sample x epochs.*$", re.MULTILINE)


def _slow_generation(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Every ``generate`` call of an hf: model takes ``seconds`` longer (in its worker thread,
    as a CPU-bound model does), so a run lasts long enough for the progress timer."""
    from toolbench.models.hf import HFModel

    original = HFModel._generate_rows

    def slow(self: HFModel, *args: Any, **kwargs: Any) -> list[list[int]]:
        time.sleep(seconds)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HFModel, "_generate_rows", slow)


def test_a_slow_local_model_gets_timed_progress_lines_and_an_honest_eta(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One sample at a time, 0.8 s each, a line promised every 0.25 s: lines come while no
    sample has finished, the estimate waits for two samples, and tokens are counted."""
    from tests.models.test_hf import build_tiny_model

    model = build_tiny_model(tmp_path / "tiny", context=4096)
    _slow_generation(monkeypatch, 0.8)
    monkeypatch.setenv("TOOLBENCH_PROGRESS_EVERY_S", "0.25")
    code, out, err = cli("run", "home_search", "--model", f"hf:{model}", "--limit", "3",
                         "--max-tokens", "8", "--top-k-api", "2", "--concurrency", "1",
                         "--hf-device", "cpu", "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    lines = [m.group(0) for m in PROGRESS.finditer(out)]
    waiting = [line for line in lines if line.startswith("progress: 0/3")]
    assert len(waiting) >= 2, out  # the timer spoke before any sample finished
    assert all("none finished yet this session" in line for line in waiting)
    assert all("0.0 samples/s" not in line for line in lines)
    one_done = [line for line in lines if line.startswith("progress: 1/3")]
    assert one_done and all("ETA unknown" in line for line in one_done), one_done
    assert not any("left" in line for line in waiting + one_done)  # no guess from one sample
    two_done = [line for line in lines if line.startswith("progress: 2/3")]
    assert two_done and all(re.search(r"(about \d+ s|less than a second) left", x)
                            for x in two_done), two_done  # fmt: skip
    tokens = sum(r["completion_tokens"] for r in read_run(tmp_path / "run")[1])
    counted = [int(n) for n in re.findall(r", (\d+) tokens generated \(", out)]
    assert counted and 0 < max(counted) <= tokens, out
    assert "tokens: generated " in out  # the summary's token line: this model reports them


def test_models_that_report_no_tokens_get_no_token_line(cli: Cli, tmp_path: Path) -> None:
    """baseline and oracle report no tokens: no ``tokens: generated 0 prompt + 0 completion
    (0.0 generated tokens/s)`` after the run, in ``report``, or in the progress lines."""
    for model in ("baseline", "oracle"):
        out_dir = tmp_path / model
        code, out, err = cli("run", "home_search", "--model", model, "--limit", "3",
                             "--out", str(out_dir))  # fmt: skip
        assert code == 0, err
        assert "tokens:" not in out and "generated tokens/s" not in out, out
        code, out, err = cli("report", str(out_dir))
        assert code == 0, err
        assert "tokens:" not in out, out


def _markdown_tables(text: str) -> dict[str, tuple[list[str], list[list[str]]]]:
    """### title -> (columns, rows) of every pipe table in a Markdown export."""
    tables: dict[str, tuple[list[str], list[list[str]]]] = {}
    for block in text.split("### ")[1:]:
        title, *lines = block.splitlines()
        rows = [[c.strip() for c in line.strip().strip("|").split("|")]
                for line in lines if line.startswith("|")]  # fmt: skip
        tables[title] = (rows[0], rows[2:])
    return tables


def test_markdown_token_columns_hold_numbers_or_nothing(cli: Cli, tmp_path: Path) -> None:
    scripted = tmp_path / "scripted"
    assert cli("run", "home_search", "--model", "baseline", "--limit", "2",
               "--out", str(scripted))[0] == 0  # fmt: skip
    tokens = {"prompt": 1234, "completion": 56, "cached": {"prompt": 10, "completion": 2}}
    counted = make_run(
        tmp_path / "counted",
        [record("home_search", "0", True)],
        info={"tokens": tokens, "timing": {"generated_tokens_per_s": 45.64}},
    )
    page = tmp_path / "tables.md"
    code, _, err = cli("report", str(scripted), str(counted), "--markdown", str(page))
    assert code == 0, err
    columns, rows = _markdown_tables(page.read_text())["run status"]
    numeric = [c for c in columns if "tokens" in c or c in ("done", "planned")]
    assert "prompt tokens" in numeric and "generated tokens/s" in numeric, columns
    for row in rows:
        for column in numeric:
            cell = row[columns.index(column)]
            assert cell == "" or re.fullmatch(r"\d+(\.\d+)?", cell), (column, cell)
    by_run = {row[0].split(" ")[0]: dict(zip(columns, row, strict=True)) for row in rows}
    assert all(by_run["scripted"][c] == "" for c in numeric if "tokens" in c)
    assert by_run["counted"]["prompt tokens"] == "1234"
    assert by_run["counted"]["completion tokens"] == "56"
    assert by_run["counted"]["generated tokens/s"] == "45.6"
    assert by_run["counted"]["cached prompt tokens"] == "10"


def test_show_rounds_latency_and_leaves_out_what_is_unknown(cli: Cli, tmp_path: Path) -> None:
    run = make_run(
        tmp_path / "run",
        [
            record("home_search", "0", False, latency_s=207.8593, prompt_tokens=812,
                   completion_tokens=40),
            record("home_search", "1", False, latency_s=None),
            record("home_search", "2", False, latency_s=0.0451),
        ],
    )  # fmt: skip
    code, out, err = cli("show", str(run), "--no-prompt", "--limit", "0")
    assert code == 0, err
    assert "latency 207.9 s" in out and "207.8593" not in out
    assert "tokens 812 in / 40 out" in out
    assert "latency 45 ms" in out
    assert "None" not in out and "tokens 0 in / 0 out" not in out
    assert out.count("latency") == 2  # sample 1's latency is unknown: no line


NOISY_AGENT = """\
import sys
sys.stdin.read()
for n in range(1, 31):
    print(f"noisy agent line {n}", file=sys.stderr)
sys.exit(3)
"""


def test_show_prints_a_failed_agents_stderr_tail(cli: Cli, tmp_path: Path) -> None:
    """An agent that crashes after 30 lines on stderr: ``show`` prints its last 20, says how
    many it left out, and nothing of the first ten."""
    agent = tmp_path / "noisy.py"
    agent.write_text(NOISY_AGENT)
    run = tmp_path / "run"
    code, _, err = cli("run", "home_search", "--model", f"agent:{sys.executable} {agent}",
                       "--limit", "1", "--out", str(run))  # fmt: skip
    assert code == 0, err
    (failed,) = read_run(run)[1]
    assert "noisy agent line 30" in failed["details"]["agent"]["stderr_tail"]
    code, out, err = cli("show", str(run), "--no-prompt")
    assert code == 0, err
    assert "agent stderr (last 20 lines, 10 earlier left out)" in out
    shown = re.findall(r"^noisy agent line (\d+)$", out, re.MULTILINE)
    assert shown == [str(n) for n in range(11, 31)]
