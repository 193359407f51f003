"""A real LLM through every task: ``toolbench run <all eight> --model smollm2``, one sample each.

SmolLM2-135M-Instruct scores near zero and that is not what is checked here; the harness is:
the run ends complete with exit 0, every sample is the model's (scored or model_error, never
an infra error or an internal error of the harness), and every recorded reply was cut only at
its own request's stop sequences, with an honest finish reason. The weights are converted
once per session (tests/models/test_smollm2.py's ``shared_conversion``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, read_run
from tests.models.test_smollm2 import shared_conversion

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # eight tasks on a real model

TASKS = (
    "home_search",
    "booking",
    "open_weather",
    "the_cat_api",
    "google_sheets",
    "virtual_home",
    "web_shop",
    "tabletop",
)

WEB_SHOP_TURNS = 2

#: bounded_text's marker: a call text cut for the log cannot be compared character by character.
CUT_FOR_THE_LOG = "...[cut: "


def test_smollm2_runs_all_eight_tasks_cleanly(
    cli: Callable[..., CliResult],
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared = shared_conversion(tmp_path_factory)
    from toolbench.core.solve import prompt_hash
    from toolbench.models.hf import HFModel
    from toolbench.types import Generation, GenerationRequest

    # The stop sequences each request carried, by the prompt hash its call record names.
    stops_of: dict[str, set[str]] = defaultdict(set)
    real_generate = HFModel.generate

    async def spy(self: HFModel, request: GenerationRequest) -> Generation:
        stops_of[prompt_hash(request)].update(s for s in request.stop if s)
        return await real_generate(self, request)

    monkeypatch.setattr(HFModel, "generate", spy)
    # Bounds, so the test takes minutes on 2 CPU cores (a 2,000-token prompt is read in ~30 s
    # of CPU): short replies, and web_shop episodes of 2 turns instead of 25 (this model
    # clicks "Next >" until the limit). The code paths are the ones every run takes.
    monkeypatch.setattr("toolbench.tasks.web_shop.task.MAX_STEPS", WEB_SHOP_TURNS)
    out = tmp_path / "run"
    code, _, err = cli(
        "run", ",".join(TASKS), "--model", "smollm2", "--limit", "1", "--max-tokens", "48",
        "--cache-dir", str(shared["cache"]), "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert info["progress"]["done"] == info["progress"]["planned"] == len(TASKS)
    assert sorted(r["task"] for r in records) == sorted(TASKS)
    for task in TASKS:
        assert info["counts"][task]["infra_error"] == 0, task
    calls = 0
    for record in records:
        where = f"{record['task']} {record['id']}"
        assert record["status"] in ("scored", "model_error"), (where, record.get("message"))
        assert "internal error" not in (record.get("message") or ""), where
        assert record["calls"], where
        for call in record["calls"]:
            calls += 1
            check_call(call, stops_of, where)
    assert calls >= len(TASKS)
    web_shop = next(r for r in records if r["task"] == "web_shop")
    assert len(web_shop["calls"]) <= WEB_SHOP_TURNS


def check_call(call: dict[str, Any], stops_of: dict[str, set[str]], where: str) -> None:
    """The reply holds none of its request's stops, and was cut only where one began."""
    assert call["prompt_hash"] in stops_of, (where, call["step"])  # answered by the model
    stops = stops_of[call["prompt_hash"]]
    text = call["text"]
    assert call["finish_reason"] in ("stop", "length"), (where, call)
    assert not [stop for stop in stops if stop in text], (where, call["step"], text)
    raw = call.get("raw_text")
    if raw is None or CUT_FOR_THE_LOG in raw or CUT_FOR_THE_LOG in text:
        return
    assert call["finish_reason"] == "stop", (where, call["step"])
    assert raw.startswith(text), (where, call["step"])
    assert any(raw[len(text) :].startswith(stop) for stop in stops), (where, raw, stops)
