"""Hostile curl replies end as that sample's outcome, through the real scoring path and the CLI.

Every line in ``HOSTILE_HTTP`` (hostile numbers, headers, bodies, methods, URLs and degenerate
replies) must reach its stated end state with a one-line message, the same way every time, and
leave the task able to score the next, benign sample correctly.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.sandbox.hostile_curl import CAT, HOSTILE_HTTP, IMAGE, OW, HostileRequest
from toolbench.core.task import TaskData
from toolbench.kinds.curl_task import CurlTask
from toolbench.kinds.http_exec import SimulatedExecutor
from toolbench.sandbox.curl import CurlError, HttpRequest
from toolbench.sandbox.memo import ProgramRunner
from toolbench.tasks.registry import get_task
from toolbench.types import Outcome, Sample, Status, TaskContext

GOLD = {
    "open_weather": f"curl -X GET '{OW}/data/2.5/forecast?q=London&appid={{API_KEY}}&cnt=2'",
    "the_cat_api": f'curl -X POST \'{CAT}/votes\' -d \'{{"image_id":"{IMAGE}","value":1}}\'',
}
STATE = {"favourites": [{"id": 4001, "image_id": IMAGE}], "votes": []}
NO_SANDBOX: ProgramRunner = None  # type: ignore[assignment]  # curl tasks never use it


def _prepared(task_name: str) -> tuple[CurlTask, TaskData, Sample, Sample]:
    task: CurlTask = get_task(task_name)  # type: ignore[assignment]
    fields: dict[str, Any] = {"state": STATE} if task_name == "the_cat_api" else {}
    hostile = Sample(id="hostile", task=task_name, query="q", labels=(GOLD[task_name],),
                     fields=fields)  # fmt: skip
    benign = Sample(id="benign", task=task_name, query="q", labels=(GOLD[task_name],),
                    fields=fields)  # fmt: skip
    data = TaskData(task_name, "v0", [hostile, benign], TaskContext((), ()), "", "")
    data.runtime = SimulatedExecutor(task.service)
    data.gold = asyncio.run(task._run_golds(data))
    return task, data, hostile, benign


PREPARED = {name: _prepared(name) for name in GOLD}


def _score(case: HostileRequest) -> tuple[Outcome, Outcome]:
    """The hostile reply, then the gold as the next sample's reply, on one event loop (so a
    broken client or memo would show up in the benign outcome)."""
    task, data, hostile, benign = PREPARED[case.task]

    async def both() -> tuple[Outcome, Outcome]:
        first = await task.score(data, hostile, task.extract_action(case.reply), NO_SANDBOX)
        second = await task.score(data, benign, task.extract_action(GOLD[case.task]), NO_SANDBOX)
        return first, second

    return asyncio.run(both())


def _check(case: HostileRequest, status: str, success: bool, message: str | None) -> None:
    assert status == case.status, (case.name, status, message)
    assert not success, case.name
    if case.status == "model_error":
        assert message and case.reason in message, (case.name, message)
    text = message or ""
    assert "\n" not in text and "\r" not in text and len(text) < 400, case.name
    assert text.isprintable(), (case.name, text)


def test_corpus_is_large_named_uniquely_and_covers_both_tasks() -> None:
    names = [case.name for case in HOSTILE_HTTP]
    assert len(names) >= 50 and len(set(names)) == len(names)
    assert {case.task for case in HOSTILE_HTTP} == set(GOLD)
    assert {case.status for case in HOSTILE_HTTP} == {"model_error", "scored"}


@pytest.mark.parametrize("case", HOSTILE_HTTP, ids=[case.name for case in HOSTILE_HTTP])
def test_hostile_reply_is_a_per_sample_outcome(case: HostileRequest) -> None:
    outcome, benign = _score(case)
    _check(case, outcome.status.value, outcome.success, outcome.message)
    assert (benign.status, benign.success) == (Status.SCORED, True), (case.name, benign.message)
    again, _ = _score(case)  # deterministic: the same line always ends the same way
    assert (again.status, again.success, again.message) == (
        outcome.status,
        outcome.success,
        outcome.message,
    )


def test_a_simulator_that_raises_is_a_model_error_naming_the_exception(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The executor's backstop: an exception no validation anticipated stays in its sample."""
    from toolbench.tasks.open_weather import service

    def boom(params: Any) -> Any:
        raise OverflowError("cannot convert float infinity to integer")

    task, data, hostile, benign = _prepared("open_weather")
    monkeypatch.setitem(service.ROUTES, "/data/2.5/weather", boom)
    monkeypatch.setattr(service.SERVICE, "_app", service.build_app())
    data.runtime = SimulatedExecutor(task.service)
    line = f"curl '{OW}/data/2.5/weather?q=Paris&appid={{API_KEY}}'"
    outcome = asyncio.run(task.score(data, hostile, line, NO_SANDBOX))
    assert outcome.status is Status.MODEL_ERROR
    assert outcome.message and "HTTP 500" in outcome.message
    assert "OverflowError" in outcome.message and "\n" not in outcome.message
    ok = asyncio.run(task.score(data, benign, GOLD["open_weather"], NO_SANDBOX))
    assert (ok.status, ok.success) == (Status.SCORED, True)


def test_a_request_httpx_cannot_build_is_refused_by_the_executor() -> None:
    """Defence in depth for requests that did not come through parse_curl's checks."""
    task, _, _, _ = PREPARED["the_cat_api"]
    executor = SimulatedExecutor(task.service)
    request = HttpRequest("GET", "https", "api.thecatapi.com", "/v1/breeds", (),
                          (("x-api-key", "caf\u00e9"),), None)  # fmt: skip
    with pytest.raises(CurlError, match=r"request cannot be sent \(UnicodeEncodeError"):
        asyncio.run(executor.execute(request, {}))


# -- end to end through the CLI ------------------------------------------------------------------


def _data_lines(task: str) -> list[dict[str, Any]]:
    folder = Path(get_task(task).package_dir) / "data" / "v0"  # type: ignore[attr-defined]
    return [json.loads(line) for line in (folder / "test.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("task", sorted(GOLD))
def test_hostile_replies_through_a_full_run(
    cli: Callable[..., CliResult], tmp_path: Path, task: str
) -> None:
    """Hostile replies on every other sample (skipping the ones the original compared as text),
    the gold reply on all the rest: the run exits 0, every hostile sample fails as stated and
    every benign one, including each hostile sample's successor, still succeeds."""
    corpus = [case for case in HOSTILE_HTTP if case.task == task]
    lines = _data_lines(task)
    slots = [i for i, line in enumerate(lines) if not line.get("compare_string_only")][::2]
    assert len(slots) >= len(corpus)
    hostile = dict(zip(slots, corpus, strict=False))
    replay = tmp_path / "hostile.jsonl"
    with replay.open("w") as handle:
        for i, line in enumerate(lines):
            reply = hostile[i].reply if i in hostile else line["completion"][0]
            handle.write(json.dumps({"id": str(i), "prediction": reply}) + "\n")
    out = tmp_path / "run"
    code, _, _ = cli("run", task, "--model", f"replay:{replay}", "--out", str(out))
    assert code == 0
    info, records = read_run(out)
    assert info["status"] == "complete" and len(records) == len(lines)
    for record in records:
        case = hostile.get(int(record["id"]))
        if case is None:
            assert record["status"] == "scored" and record["success"], record
        else:
            _check(case, record["status"], record["success"], record["message"])
