"""``--model agent:COMMAND``: the agent process's contract (stdin, environment, own folder,
exit status, wall-time and output limits) and the hub that serves each attempt's world, with a
small fake world and tiny agent scripts of our own."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.agents.process import AgentSettings, ProcessAgent, parse_command
from toolbench.agents.registry import make_agent
from toolbench.core.agent import Agent, AgentBrief, ToolCall, ToolReply, ToolSpec
from toolbench.errors import UserError
from toolbench.models.base import Model, ModelOptions
from toolbench.types import Outcome, Status

AGENTS = Path(__file__).parent / "agents_for_tests"
PY = sys.executable


class FakeWorld:
    """A world with one tool, ``note``: it keeps what it is sent; success = "ok" was noted."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.closed = False

    @property
    def tools(self) -> Sequence[ToolSpec]:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return [ToolSpec("note", "Write a note.", schema)]

    @property
    def request(self) -> str:
        return "note ok, please"

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        if name != "note" or not isinstance(arguments.get("text"), str):
            return ToolReply(f"no such call: {name}", is_error=True)
        self.notes.append(arguments["text"])
        return ToolReply(f"noted {arguments['text']}")

    async def outcome(self) -> Outcome:
        return Outcome(status=Status.SCORED, success="ok" in self.notes)

    def failed(self, message: str) -> Outcome:
        return Outcome(status=Status.MODEL_ERROR, message=message)

    async def translate(self, action: str) -> list[ToolCall]:
        return [ToolCall("note", {"text": action})]

    async def gold_calls(self) -> list[ToolCall]:
        return [ToolCall("note", {"text": "ok"})]

    async def close(self) -> None:
        self.closed = True


def brief(request: str = "note ok, please", sample: str = "s1") -> AgentBrief:
    return AgentBrief(task="fake", sample_id=sample, epoch=2, request=request, data_version="v0")


def agent(*argv: str, timeout_s: float = 30.0) -> ProcessAgent:
    return ProcessAgent(" ".join(argv), [*argv], AgentSettings(timeout_s=timeout_s))


def attempt(a: ProcessAgent, world: FakeWorld | None = None, request: str = "hello") -> Any:
    async def go() -> Any:
        try:
            return await a.attempt(world or FakeWorld(), brief(request))
        finally:
            await a.aclose()

    return asyncio.run(go())


def test_the_agent_gets_its_request_environment_and_an_empty_folder() -> None:
    end = attempt(agent(PY, str(AGENTS / "misbehave.py"), "echo"), request="find é homes")
    assert end.failure is None, end
    assert "request='find é homes' env_request='find é homes'" in end.final_message
    assert "told=fake,s1,2,v0 cwd_files=[]" in end.final_message
    assert "url=http://127.0.0.1:" in end.final_message and "/mcp/" in end.final_message
    assert end.details["exit_code"] == 0
    assert end.details["stderr_bytes"] == len("log line\n")
    assert end.details["stdout_bytes"] > 0 and end.details["seconds"] >= 0


def test_a_crash_is_a_failure_naming_the_code_and_last_stderr_line() -> None:
    end = attempt(agent(PY, str(AGENTS / "misbehave.py"), "crash"))
    assert end.failure == "exited with code 1: boom: the agent fell over"
    assert end.details["exit_code"] == 1
    assert "about to fail" in end.details["stderr_tail"]


def test_an_agent_past_its_time_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    # A shell-free parent that starts a sleeping child: both must be gone afterwards (found
    # by a marker in their command lines: inside its PID namespace the agent's pids are not
    # the host's, and it cannot write outside its own folder).
    marker = f"toolbench-test-{uuid.uuid4().hex}"
    script = tmp_path / "tree.py"
    script.write_text(
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', {marker!r}])\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    end = attempt(agent(PY, str(script), marker, timeout_s=2.0))
    assert time.monotonic() - started < 15
    assert end.failure == "ran past its 2 s limit (killed)"
    assert not _running(marker)


def test_a_flood_of_output_is_killed_early() -> None:
    started = time.monotonic()
    end = attempt(agent(PY, str(AGENTS / "misbehave.py"), "flood"))
    assert end.failure is not None and end.failure.startswith("printed more than 1 MB on stdout")
    assert end.details["stdout_bytes"] < 50_000_000  # stopped long before its 100 MB
    assert len(end.final_message) <= 20_000
    assert time.monotonic() - started < 20


def test_the_final_message_is_the_last_20000_characters(tmp_path: Path) -> None:
    script = tmp_path / "long.py"
    script.write_text("print('a' * 30000 + 'END', end='')\n")
    end = attempt(agent(PY, str(script)))
    assert end.failure is None
    assert len(end.final_message) == 20_000 and end.final_message.endswith("aEND")


def test_an_agent_that_ignores_a_large_request_on_stdin_is_fine(tmp_path: Path) -> None:
    script = tmp_path / "deaf.py"
    script.write_text("import os; os.close(0); print('TOOLBENCH_REQUEST' in os.environ)\n")
    end = attempt(agent(PY, str(script)), request="x" * 2_000_000)  # on stdin only: too long
    assert end.failure is None and end.final_message == "False\n"


def test_a_program_that_cannot_start_is_a_failure(tmp_path: Path) -> None:
    end = attempt(agent(str(tmp_path / "gone")))
    assert end.failure is not None and end.failure.startswith("could not start")


@pytest.mark.slow  # the agent imports the MCP SDK: seconds
def test_tool_calls_reach_the_world_through_the_hub_and_the_address_dies_after(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps({"s1": [{"name": "note", "arguments": {"text": "ok"}},
                                        {"name": "nope", "arguments": {}}]}))  # fmt: skip
    world = FakeWorld()
    a = agent(PY, str(AGENTS / "replay.py"), str(calls))

    async def go() -> tuple[Any, int, int]:
        try:
            end = await a.attempt(world, brief())
            url = _url_of(a)
            async with httpx.AsyncClient() as client:  # the hub is still up: the token is not
                gone = await client.post(url, json={})
            return end, gone.status_code, a._hub.live_tokens
        finally:
            await a.aclose()

    end, status, live = asyncio.run(go())
    assert end.failure is None, end
    assert world.notes == ["ok"]
    assert "note: error=False ['noted ok']" in end.final_message
    assert "nope: error=True" in end.final_message and end.final_message.endswith("done\n")
    assert status == 404 and live == 0


def _url_of(a: ProcessAgent) -> str:
    port = a._hub._port
    return f"http://127.0.0.1:{port}/mcp/not-a-token-any-more"


@pytest.mark.slow  # the agent imports the MCP SDK: seconds
def test_attempts_run_at_once_on_one_hub_each_with_its_own_world(tmp_path: Path) -> None:
    calls = tmp_path / "calls.json"
    plan = {f"s{i}": [{"name": "note", "arguments": {"text": f"w{i}"}}] for i in range(3)}
    calls.write_text(json.dumps(plan))
    a = agent(PY, str(AGENTS / "replay.py"), str(calls))
    worlds = [FakeWorld() for _ in range(3)]

    async def go() -> list[Any]:
        try:
            return list(
                await asyncio.gather(
                    *(a.attempt(w, brief(sample=f"s{i}")) for i, w in enumerate(worlds))
                )
            )
        finally:
            await a.aclose()

    ends = asyncio.run(go())
    assert [e.failure for e in ends] == [None] * 3
    assert [w.notes for w in worlds] == [["w0"], ["w1"], ["w2"]]


def test_the_agent_is_an_agent_and_no_model() -> None:
    """Deliberately changed by issue 38 (it was "the agent is a model for the runner but
    answers no prompt", asserting ``isinstance(a, Model)`` and a ``generate`` that raised
    TypeError): the thing under test is a Subject, a model or an agent, and an agent is
    never passed as a model, so it has no ``generate`` at all."""
    a = make_agent(f"{PY} x.py", ModelOptions(model_args={"timeout": 7}))
    assert isinstance(a, ProcessAgent) and isinstance(a, Agent) and not isinstance(a, Model)
    assert not hasattr(a, "generate") and not hasattr(a, "cacheable")
    assert a.name == f"agent:{PY} x.py" and a.timeout_s == 7 and a.argv == [PY, "x.py"]


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("", "the command is empty"),
        ("   ", "the command is empty"),
        ("python 'unclosed", "cannot split the command"),
        ("no-such-program-xyz --flag", "is not an executable program"),
    ],
)
def test_bad_commands_are_user_errors(command: str, words: str) -> None:
    with pytest.raises(UserError, match=words):
        make_agent(command, ModelOptions())


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UserError, match=r"pip install 'toolbench\[mcp\]'"):
        make_agent(f"{PY} agent.py", ModelOptions())


@given(st.text(max_size=60))
def test_any_command_text_parses_or_is_a_user_error(command: str) -> None:
    try:
        argv = parse_command(command)
    except UserError as exc:
        assert "\n" not in str(exc).strip() or "\n" in command
    else:
        assert argv and all(isinstance(arg, str) for arg in argv)


def _running(marker: str) -> list[int]:
    """Host pids of processes whose command line holds ``marker`` (after a moment for the
    killed ones to be reaped)."""
    for _ in range(50):
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    if marker.encode() in (entry / "cmdline").read_bytes():
                        found.append(int(entry.name))
                except OSError:
                    continue
        if not found:
            return []
        time.sleep(0.1)
    return found


def test_paths_in_the_command_are_resolved_where_toolbench_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent runs in a fresh folder: a relative program path and a script named relative
    to the folder toolbench was started in still reach what the user meant."""
    import os

    (tmp_path / "my_agent.py").write_text("print('hi')\n")
    monkeypatch.chdir(tmp_path)
    relative_python = os.path.relpath(sys.executable, tmp_path)
    argv = parse_command(f"{relative_python} my_agent.py -m not_a_file --flag")
    assert argv == [sys.executable, str(tmp_path / "my_agent.py"), "-m", "not_a_file", "--flag"]
    assert parse_command("python3 -c pass")[1:] == ["-c", "pass"]
