"""virtual_home on hostile replies: grounding is linear and exact, and no reply stalls a run.

A reply of ``Agent.WalkTo`` and 300,000 ``(`` once froze a whole run for minutes (a lazy regex
quadratic in the line, run on the event loop). Now the plan is refused over its cap, scoring
is linear and runs off the loop with a deadline, and the other samples of the run go on.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CliResult, read_run
from tests.worst_case import assert_linear
from toolbench.core import solve
from toolbench.tasks.virtual_home import TASK
from toolbench.tasks.virtual_home import task as vh_task
from toolbench.tasks.virtual_home.grounding import arguments_of
from toolbench.tasks.virtual_home.world import parse_call

V0 = Path(TASK.package_dir) / "data" / "v0"
_ORIGINAL_ARGUMENTS = re.compile(r"\((.*?)\)")
_ORIGINAL_CALL = re.compile(r"^Agent\.(\w+)\((.*?)\)")


def _golds(n: int) -> list[str]:
    lines = (V0 / "test.jsonl").read_text().splitlines()[:n]
    return [json.loads(line)["completion"][0] for line in lines]


def test_grounding_and_the_world_run_are_linear_on_worst_case_shapes() -> None:
    assert_linear("virtual_home grounding + LCS + world: score_sample")


@given(st.text(alphabet="()\nab, ", max_size=16))
def test_arguments_are_what_the_originals_lazy_search_found(line: str) -> None:
    match = _ORIGINAL_ARGUMENTS.search(line)
    assert arguments_of(line) == (match.group(1) if match else None)


@given(st.sampled_from(["", "Put", "W_1", "Walk To"]), st.text(alphabet="()\nab, ", max_size=12))
def test_a_world_line_parses_as_the_original_pattern_read_it(name: str, rest: str) -> None:
    line = f"Agent.{name}{rest}"
    match = _ORIGINAL_CALL.match(line)
    expected = None
    if match:
        args = [a.strip() for a in match.group(2).split(",")]
        expected = (match.group(1), [] if args == [""] else args)
    assert parse_call(line) == expected


def _replay(tmp_path: Path, hostile: dict[str, str], n: int = 6) -> Path:
    golds = _golds(n)
    rows = [{"id": str(i), "prediction": hostile.get(str(i), gold)} for i, gold in enumerate(golds)]
    path = tmp_path / "replay.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def test_the_300000_paren_reply_is_one_samples_failure_and_the_run_goes_on(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    flood = "Agent.WalkTo" + "(" * 300_000
    under_cap = "\n".join(["Agent.WalkTo" + "(" * 8_000] * 12)  # 96,107 characters
    path = _replay(tmp_path, {"2": flood, "4": under_cap})
    start = time.perf_counter()
    code, _, err = cli("run", "virtual_home", "--model", f"replay:{path}", "--limit", "6",
                       "--concurrency", "4", "--out", str(tmp_path / "run"))  # fmt: skip
    elapsed = time.perf_counter() - start
    assert code == 0, err
    assert elapsed < 60, f"the run took {elapsed:.1f} s"  # a hang guard: it once took minutes
    by_id = {r["id"]: r for r in read_run(tmp_path / "run")[1]}
    flooded = by_id["2"]
    assert flooded["status"] == "model_error" and not flooded["success"]
    assert "300,012 characters" in flooded["message"]
    assert f"at most {vh_task.MAX_PLAN_CHARS:,}" in flooded["message"]
    scored = by_id["4"]  # under the cap: read, every line non-executable, scored as such
    assert scored["status"] == "scored" and scored["metrics"]["executability_rate"] == 0.0
    for other in ("0", "1", "3", "5"):
        assert by_id[other]["status"] == "scored" and by_id[other]["success"], by_id[other]


def test_scoring_past_its_deadline_fails_that_sample_only(
    cli: Callable[..., CliResult], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply whose scoring outlasts the deadline is that sample's model error, said as such;
    the run does not wait for it, and the other samples score normally."""
    slow_plan = _golds(3)[1] + "\n" + "Agent.WalkTo(kitchen)\n" * 300  # > OFF_LOOP_MIN_CHARS
    real = vh_task.score_sample

    def slow_score(data: Any, sample: Any, action: str) -> Any:
        if len(action) > solve.OFF_LOOP_MIN_CHARS:
            time.sleep(30)  # stands for CPU-heavy scoring (it runs in its own thread)
        return real(data, sample, action)

    monkeypatch.setattr(vh_task, "score_sample", slow_score)
    monkeypatch.setattr(solve, "SCORING_DEADLINE_S", 0.5)
    path = _replay(tmp_path, {"1": slow_plan}, n=3)
    start = time.perf_counter()
    code, _, err = cli("run", "virtual_home", "--model", f"replay:{path}", "--limit", "3",
                       "--out", str(tmp_path / "run"))  # fmt: skip
    elapsed = time.perf_counter() - start
    assert code == 0, err
    by_id = {r["id"]: r for r in read_run(tmp_path / "run")[1]}
    late = by_id["1"]
    assert late["status"] == "model_error"
    assert "0.5 s deadline" in late["message"] and "DeadlineExceeded" in late["message"]
    assert by_id["0"]["success"] and by_id["2"]["success"]
    assert elapsed < 20, f"the run waited for the late scoring ({elapsed:.1f} s)"
