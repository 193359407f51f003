"""An agent process is untrusted code: what a red team's agent did must fail under the OS
layer (``agents.contain``): real processes under real bubblewrap, a hostile agent script
(``agents_for_tests/escape.py``) reporting what it managed."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agents.test_process_agent import FakeWorld, brief
from toolbench.agents import contain
from toolbench.agents.contain import AgentLimits
from toolbench.agents.process import AgentSettings, ProcessAgent
from toolbench.core.agent import AgentBrief, AgentEnd
from toolbench.package import PACKAGE_DIR

ESCAPE = Path(__file__).parent / "agents_for_tests" / "escape.py"
REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    contain.detect().level != "full", reason=f"no agent containment here: {contain.detect()}"
)


def escape(*probes: str, settings: AgentSettings | None = None, **brief_fields: Any) -> dict:
    """Run the hostile agent once with ``probes``; what it reported."""
    end = attempts([list(probes)], settings, **brief_fields)[0]
    assert end.failure is None, end
    return json.loads(end.final_message)


def attempts(
    probe_lists: list[list[str]], settings: AgentSettings | None = None, **brief_fields: Any
) -> list[AgentEnd]:
    """One agent, one attempt per probe list, all at once (samples s0, s1, ...)."""
    probes = [f"s{i}={probe}" for i, lst in enumerate(probe_lists) for probe in lst]
    argv = [sys.executable, str(ESCAPE), *probes]
    agent = ProcessAgent("escape", argv, settings or AgentSettings())

    async def go() -> list[AgentEnd]:
        async def one(i: int) -> AgentEnd:
            told = dataclasses.replace(brief(sample=f"s{i}"), **brief_fields)
            return await agent.attempt(FakeWorld(), told)

        try:
            return list(await asyncio.gather(*(one(i) for i in range(len(probe_lists)))))
        finally:
            await agent.aclose()

    return asyncio.run(go())


def test_writes_outside_its_folder_fail_and_inside_succeed(tmp_path: Path) -> None:
    outside, repo_file = tmp_path / "outside.txt", REPO / "escaped.txt"
    seen = escape(f"write:{outside}", f"write:{repo_file}", "write:inside.txt", "write:/etc/x")
    assert seen["write:inside.txt"] == {"written": True}
    # Read-only file system, or (a checkout under /tmp) the private /tmp's copy of the path:
    # either way nothing reaches the host's file.
    assert seen[f"write:{repo_file}"] in ({"error": "OSError"}, {"written": True})
    assert seen["write:/etc/x"] == {"error": "OSError"}
    assert not outside.exists() and not repo_file.exists()  # /tmp is its own, in memory


def test_the_data_the_run_folder_the_cache_and_the_key_are_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir, cache, keys, data = (tmp_path / n for n in ("run", "cache", "keys", "mydata"))
    for folder, name in ((run_dir, "samples.jsonl"), (cache, "responses.sqlite"),
                         (keys, "log.key"), (data, "test.jsonl")):  # fmt: skip
        folder.mkdir()
        (folder / name).write_text("secret gold")
    monkeypatch.setenv("TOOLBENCH_KEY_DIR", str(keys))
    package_data = PACKAGE_DIR / "tasks" / "home_search" / "data"
    gold_file = next(package_data.rglob("*.jsonl"))
    probes = [f"read:{p}" for p in (run_dir / "samples.jsonl", cache / "responses.sqlite",
                                    keys / "log.key", data / "test.jsonl", gold_file)]  # fmt: skip
    probes += [f"read:{p}" for p in (run_dir, cache, keys, data, package_data)]
    settings = AgentSettings(cache_dir=cache)
    seen = escape(*probes, settings=settings, run_dir=str(run_dir), data_dir=str(data))
    for probe in probes[:5]:
        assert seen[probe] in ({"error": "FileNotFoundError"}, {"bytes": 0}), probe
    for probe in probes[5:]:  # an empty folder, or none (toolbench's tasks are hidden whole)
        assert seen[probe] in ({"entries": []}, {"error": "FileNotFoundError"}), probe
    assert (run_dir / "samples.jsonl").read_text() == "secret gold"  # untouched on the host


def test_the_tasks_generators_are_out_of_reach_and_the_agent_api_is_not() -> None:
    """A task's generator rebuilds its test set, gold included: agents cannot import it;
    what an agent built on toolbench needs (the model layer, the reference agent) imports."""
    generator = "toolbench.tasks.home_search.generator"
    seen = escape(f"import:{generator}", "import:toolbench.agents.reference")
    assert seen[f"import:{generator}"] == {"error": "ModuleNotFoundError"}
    assert seen["import:toolbench.agents.reference"] == {"imported": True}


def test_memory_past_the_limit_fails() -> None:
    settings = AgentSettings(limits=AgentLimits(memory_mb=300))
    seen = escape("allocate:50", "allocate:1000", settings=settings)
    assert seen["allocate:50"] == {"allocated": 50 * 1024 * 1024}
    assert seen["allocate:1000"] == {"error": "MemoryError"}


def test_processes_past_the_limit_fail_and_all_die_with_the_attempt() -> None:
    """A fork bomb meets the process limit (a pids cgroup as root, RLIMIT_NPROC otherwise)."""
    if os.geteuid() == 0 and contain.cgroup_root() is None:
        pytest.skip("root without a pids cgroup: no process limit here (run.json says so)")
    settings = AgentSettings(limits=AgentLimits(processes=20))
    seen = escape("spawn:60", settings=settings)
    assert 5 <= seen["spawn:60"]["started"] < 20 and "error" in seen["spawn:60"]


def test_another_agents_environment_and_folder_are_out_of_view() -> None:
    """Sample 1 looks for sample 0's MCP URL (its token) in every /proc/*/environ and for its
    scratch folder while sample 0 is running: it finds neither, and sees few processes."""
    ends = attempts([["hold:3"], ["hold:1", "environ", "procs", "siblings"]])
    assert [e.failure for e in ends] == [None, None]
    seen = json.loads(ends[1].final_message)
    assert seen["environ"] == []
    assert seen["procs"] <= 3  # bubblewrap's init and itself: no harness, no other agent
    assert len(seen["siblings"]) == 1  # its own folder; sample 0's is not in view


def test_a_guessed_endpoint_is_refused() -> None:
    """Without a token, the hub's door is a 404: the token is a capability no process in the
    agent's view carries (the environment test above)."""
    seen = escape("guess")
    assert seen["guess"] == {"status": 404}


def test_an_orphan_that_left_the_session_dies_with_the_attempt() -> None:
    """A double fork + setsid child that would connect back 2 s later never does: its PID
    namespace died with the attempt."""
    with _listener() as (port, heard):
        started = time.monotonic()
        seen = escape(f"orphan:{port}:2")
        assert seen[f"orphan:{port}:2"] == {"forked": True}
        assert time.monotonic() - started < 10
        time.sleep(4)
        assert heard == []


def test_the_harness_cannot_be_signalled() -> None:
    seen = escape(f"signal:{os.getpid()}")
    assert seen[f"signal:{os.getpid()}"] == {"error": "ProcessLookupError"}


def test_the_environment_is_an_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET", "s3cret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("MY_SETTING", "on")
    env = contain.agent_environment(os.environ, {"TOOLBENCH_TASK": "t"}, "/scratch", ["MY_SETTING"])
    assert "MY_SECRET" not in env and env["OPENAI_API_KEY"] == "sk-test"
    assert env["MY_SETTING"] == "on" and env["HOME"] == "/scratch" and env["TOOLBENCH_TASK"] == "t"
    assert not any(k.startswith("TOOLBENCH_") and k != "TOOLBENCH_TASK" for k in env)


@pytest.mark.slow  # the agent imports the MCP SDK: seconds
def test_without_network_the_agent_still_reaches_its_world_and_nothing_else() -> None:
    limits = AgentLimits(network="none")
    with _listener() as (port, heard):
        probe = f"call:http://127.0.0.1:{port}/"
        seen = escape(probe, settings=AgentSettings(limits=limits))
        assert seen[probe] == {"error": "URLError"} and heard == []
    calls = {"s0": [{"name": "note", "arguments": {"text": "ok"}}]}
    replay = Path(__file__).parent / "agents_for_tests" / "replay.py"
    world = FakeWorld()
    with _json_file(calls) as path:
        agent = ProcessAgent("r", [sys.executable, str(replay), path], AgentSettings(limits=limits))

        async def go() -> AgentEnd:
            try:
                told: AgentBrief = brief(sample="s0")
                return await agent.attempt(world, told)
            finally:
                await agent.aclose()

        end = asyncio.run(go())
    assert end.failure is None, end
    assert world.notes == ["ok"]


class _listener:
    """A loopback TCP server recording what reaches it (for canaries), in a thread."""

    def __enter__(self) -> tuple[int, list[bytes]]:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.heard: list[bytes] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return self.sock.getsockname()[1], self.heard

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                self.heard.append(conn.recv(100) or b"(connected)")

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


class _json_file:
    def __init__(self, value: Any) -> None:
        self.value = value

    def __enter__(self) -> str:
        import tempfile

        fd, self.path = tempfile.mkstemp(suffix=".json", dir=REPO / "tests")
        with os.fdopen(fd, "w") as f:
            json.dump(self.value, f)
        return self.path

    def __exit__(self, *exc: object) -> None:
        os.unlink(self.path)
