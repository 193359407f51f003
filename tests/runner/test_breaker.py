"""The runner when the model's service goes away (``ServiceDown`` from the retry layer's
breaker), and the run's token totals split into generated and cached.

A ServiceDown item writes no record and stops the dispatching; items in flight end on their
own and are written; the session ends "incomplete" with one line saying what happened and how
many samples are left, and a rerun finishes the run with no duplicates.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any, cast

from rich.console import Console

from toolbench.core.solve import Generate, SampleState
from toolbench.core.task import Resources
from toolbench.kinds.single_turn import QueryPrompt, solve_single_turn
from toolbench.runner.engine import PreparedTask, SampleWork, SessionStats, run_work
from toolbench.runner.lifecycle import RunPlan, add_session, carried_totals, execute_plan
from toolbench.runner.store import RunStore, read_records
from toolbench.types import Generation, GenerationRequest, Outcome, Sample, ServiceDown, Status

DOWN = "the model server at http://127.0.0.1:9/v1 stopped answering (Connection refused since 10 s)"
SAMPLES = [Sample(id=str(i), task="fake", query=f"q{i}", labels=("x",)) for i in range(20)]


class Prompter:
    def request(self, sample: Sample, epoch: int = 0) -> GenerationRequest:
        return GenerationRequest(prompt=sample.query)


class Task(QueryPrompt):
    name = "fake"

    def extract_action(self, text: str) -> str:
        return text

    async def score(self, data: Any, sample: Sample, action: str, sandbox: Any) -> Outcome:
        return Outcome(status=Status.SCORED, success=True)

    async def solve(self, state: SampleState, generate: Generate, resources: Any) -> Outcome:
        return await solve_single_turn(self, state, generate, resources)


class DyingServer:
    """q2 finds the service gone (after q3 has started); q3 is in flight then and answers
    after the stop; every other prompt is answered."""

    name = "dying"
    cacheable = False

    def __init__(self, down: bool = True) -> None:
        self.down = down
        self.asked: list[str] = []
        self.q3_started = asyncio.Event()
        self.stopped = asyncio.Event()

    async def generate(self, request: GenerationRequest) -> Generation:
        prompt = str(request.prompt)
        self.asked.append(prompt)
        await asyncio.sleep(0)
        if self.down and prompt == "q2":
            await self.q3_started.wait()
            self.stopped.set()
            raise ServiceDown(DOWN)
        if self.down and prompt == "q3":
            self.q3_started.set()
            await self.stopped.wait()
        return Generation(text="API.search()", prompt_tokens=10, completion_tokens=2)

    async def aclose(self) -> None:
        return None


RESOURCES = Resources(data=cast(Any, None), sandbox=cast(Any, None), prompter=cast(Any, Prompter()))


def _work(model: DyingServer) -> SampleWork:
    return SampleWork([PreparedTask(cast(Any, Task()), RESOURCES, SAMPLES)], 1, cast(Any, model))


def test_service_down_stops_dispatching_and_writes_nothing_for_it(tmp_path: Path) -> None:
    model = DyingServer()
    store, stats = RunStore(tmp_path), SessionStats()

    async def main() -> None:
        await run_work(_work(model), store, 4, stats)

    asyncio.run(main())
    store.close()
    written = [r["id"] for r in read_records(tmp_path)]
    assert stats.stopped == DOWN
    assert "2" not in written and "3" in written  # the in-flight one finished and was written
    assert len(model.asked) < len(SAMPLES)  # no new item was taken after the stop
    assert sorted(written, key=int) == [p[1:] for p in model.asked if p != "q2"]
    assert stats.done == len(written) and stats.counts["scored"] == len(written)


def _plan(model: DyingServer) -> RunPlan:
    return RunPlan(
        prefix="fake-",
        fingerprint="f",
        selection={},
        info={"kind": "tasks"},
        work=_work(model),
        finish=lambda info, records: (info, sum(1 for _ in records)),
        concurrency=4,
    )


def test_the_session_ends_incomplete_with_one_line_and_a_rerun_finishes(tmp_path: Path) -> None:
    out, text = tmp_path / "run", io.StringIO()
    console = Console(file=text, width=300)
    result = execute_plan(_plan(DyingServer()), out, tmp_path, console)
    info = result.info
    left = len(SAMPLES) - info["progress"]["done"]
    assert info["status"] == "incomplete" and info["stopped"] == DOWN and left > 0
    assert f"{DOWN}; {left} samples left undone: rerun the same command to finish" in (
        text.getvalue()
    )

    again = execute_plan(_plan(DyingServer(down=False)), out, tmp_path, Console(file=io.StringIO()))
    assert again.info["status"] == "complete" and "stopped" not in again.info
    ids = [r["id"] for r in read_records(out)]
    assert sorted(ids, key=int) == [s.id for s in SAMPLES]  # each once
    assert again.info["timing"]["sessions"] == 2


def test_tokens_are_split_into_generated_and_cached() -> None:
    stats = SessionStats()
    stats.count({"status": "scored", "calls": [
        {"cached": False, "prompt_tokens": 100, "completion_tokens": 20},
        {"cached": True, "prompt_tokens": 7, "completion_tokens": 3},
    ]})  # fmt: skip
    stats.count({"status": "model_error", "calls": [{"cached": True, "prompt_tokens": 5}]})
    stats.elapsed_s = 4.0
    assert (stats.prompt_tokens, stats.completion_tokens) == (100, 20)
    assert (stats.cached_prompt_tokens, stats.cached_completion_tokens) == (12, 3)
    assert (stats.model_calls, stats.cached_calls) == (3, 2)

    info = carried_totals({})
    add_session(info, stats)
    assert info["tokens"] == {
        "prompt": 100, "completion": 20, "cached": {"prompt": 12, "completion": 3}
    }  # fmt: skip
    assert info["timing"]["generated_tokens_per_s"] == 5.0  # 20 generated tokens in 4 s
    assert info["model_calls"] == {"live": 1, "cached": 2}

    # A resumed run adds to the totals; one written before the split counts its cached as 0.
    resumed = carried_totals({"tokens": info["tokens"], "model_calls": info["model_calls"]})
    add_session(resumed, stats)
    assert resumed["tokens"] == {
        "prompt": 200, "completion": 40, "cached": {"prompt": 24, "completion": 6}
    }  # fmt: skip
    old = carried_totals({"tokens": {"prompt": 50, "completion": 5}})
    assert old["tokens"] == {
        "prompt": 50,
        "completion": 5,
        "cached": {"prompt": 0, "completion": 0},
    }
    idle = carried_totals({})
    add_session(idle, SessionStats())
    assert idle["timing"]["generated_tokens_per_s"] is None
