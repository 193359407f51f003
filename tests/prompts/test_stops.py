"""Stop sequences per task and mode: completion mode keeps the original's, chat and tools modes
send none, a run's ``--stop``/``--no-stop`` replaces them; tabletop keeps its LMPs' own stops in
every mode and adds the harness's only in completion mode."""

from __future__ import annotations

import pytest

from toolbench.config import RunConfig
from toolbench.prompts.builder import (
    STOP_SEQUENCES,
    Mode,
    PromptConfig,
    Prompter,
    default_stops,
)
from toolbench.runner.run import prompt_config_for
from toolbench.tasks.registry import get_task
from toolbench.tasks.tabletop.lmp import HARNESS_STOPS, LMPS
from toolbench.tasks.tabletop.session import LmpSession, harness_stops
from toolbench.types import Doc, Sample, TaskContext

CONTEXT = TaskContext(
    functions=(Doc("a", "API.a(x): does a"),), examples=(Doc("e", "Task: do a\nAction:\nAPI.a(1)"),)
)
SAMPLE = Sample(id="0", task="t", query="do a", labels=("API.a(1)",))


def test_only_completion_mode_has_default_stops() -> None:
    assert default_stops(Mode.COMPLETION) == ("------", "Task:") == STOP_SEQUENCES
    assert default_stops(Mode.CHAT) == ()
    assert default_stops(Mode.TOOLS) == ()


@pytest.mark.parametrize("mode", list(Mode))
def test_requests_carry_the_modes_stops_or_the_runs(mode: Mode) -> None:
    default = Prompter(CONTEXT, PromptConfig(mode=mode))
    assert default.stops == default_stops(mode)
    assert default.request(SAMPLE).stop == default_stops(mode)
    chosen = Prompter(CONTEXT, PromptConfig(mode=mode, stop=("\n\n", "END")))
    assert chosen.stops == chosen.request(SAMPLE).stop == ("\n\n", "END")
    none = Prompter(CONTEXT, PromptConfig(mode=mode, stop=()))
    assert none.request(SAMPLE, shown="page").stop == ()


def test_the_run_config_reaches_the_prompt_config() -> None:
    task = get_task("home_search")
    default = prompt_config_for(task, RunConfig(tasks=["home_search"], model="-", mode="chat"))
    assert default.stop is None and default.stops == ()
    chosen = prompt_config_for(task, RunConfig(tasks=["home_search"], model="-", stop=["\n"]))
    assert chosen.stop == ("\n",)
    none = prompt_config_for(task, RunConfig(tasks=["home_search"], model="-", stop=[]))
    assert none.stop == () and none.stops == ()


def _session(config: PromptConfig) -> LmpSession:
    sample = Sample(id="s", task="tabletop", query="q", labels=())
    return LmpSession(sample, 0, _never, config, {})


async def _never(request: object) -> object:
    raise AssertionError("no model call expected")


@pytest.mark.parametrize("lmp", ["tabletop_ui", "parse_position", "fgen"])
def test_tabletop_keeps_its_lmp_stops_in_every_mode(lmp: str) -> None:
    own = LMPS[lmp].stops
    completion = _session(PromptConfig()).request(lmp, "prompt", own, (lmp, "", ""))
    assert completion.stop == (*own, *HARNESS_STOPS) and completion.prompt == "prompt"
    chat = _session(PromptConfig(mode=Mode.CHAT)).request(lmp, "prompt", own, (lmp, "", ""))
    assert chat.stop == own and chat.messages is not None
    chosen = _session(PromptConfig(stop=("\n\n", "#"))).request(lmp, "p", own, (lmp, "", ""))
    # Repeats are dropped: a server takes only the first few stops (OpenAI: 4).
    assert chosen.stop == ((*own, "\n\n") if "#" in own else (*own, "\n\n", "#"))
    no_stop = _session(PromptConfig(mode=Mode.CHAT, stop=())).request(lmp, "p", own, (lmp, "", ""))
    assert no_stop.stop == own


def test_harness_stops() -> None:
    assert harness_stops(PromptConfig()) == HARNESS_STOPS
    assert harness_stops(PromptConfig(mode=Mode.CHAT)) == ()
    assert harness_stops(PromptConfig(mode=Mode.CHAT, stop=("x",))) == ("x",)
    assert harness_stops(PromptConfig(stop=())) == ()


def test_tabletops_first_request_follows_the_run() -> None:
    task = get_task("tabletop")
    data = task.load("v0", None)
    sample = data.samples[0]
    for config, tail in (
        (RunConfig(tasks=["tabletop"], model="-"), HARNESS_STOPS),
        (RunConfig(tasks=["tabletop"], model="-", mode="chat"), ()),
        (RunConfig(tasks=["tabletop"], model="-", mode="chat", stop=["END"]), ("END",)),
    ):
        prompter = Prompter(data.context, prompt_config_for(task, config))
        request = task.first_request(data, sample, 0, prompter)
        assert request.stop == (*LMPS["tabletop_ui"].stops, *tail)
