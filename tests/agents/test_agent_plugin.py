"""An agent in a package of its own (issue 38): registered in the ``toolbench.agents``
entry-point group, listed by ``toolbench list models``, and run by ``toolbench run --model
NAME:ARG`` as an agent (the runner dispatches on the subject's kind: the agent's ``attempt``
solves each sample on the task's world; it has no ``generate`` to be asked).

The package is a real installed distribution on ``PYTHONPATH`` (a module and a dist-info).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.plugin_site import make_site, toolbench_cli

MODULE = textwrap.dedent(
    '''
    from toolbench.core.agent import AgentEnd


    class LookAgent:
        """Looks at the world's tools, calls none, and says so."""

        def __init__(self, argument, options):
            self.name = f"look:{argument}"

        async def attempt(self, world, brief):
            return AgentEnd(f"{len(world.tools)} tools for {brief.task}, none called")

        async def aclose(self):
            pass
    '''
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("look-site")
    return make_site(site, "tb_look", MODULE, "toolbench.agents", "look = tb_look:LookAgent")


def test_an_installed_agent_is_listed_and_run_as_an_agent(site: Path, tmp_path: Path) -> None:
    listed = toolbench_cli(site, tmp_path, "list", "models")
    assert listed.returncode == 0, listed.stderr
    assert "look[:ARG]" in listed.stdout and "Looks at the world's tools" in listed.stdout
    out = tmp_path / "run"
    done = toolbench_cli(
        site, tmp_path, "run", "home_search", "--model", "look:x", "--limit", "2", "--out",
        str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        assert record["prediction"].endswith("tools for home_search, none called")
        assert record["details"]["agent"]["tool_calls"] == 0 and record["calls"] == []


def test_an_installed_agent_refuses_model_args_it_does_not_take(site: Path, tmp_path: Path) -> None:
    done = toolbench_cli(
        site, tmp_path, "run", "home_search", "--model", "look:x", "--model-arg", "speed=2",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "--model-arg speed: backend look has no option 'speed'; it takes no options" in (
        done.stderr
    )
    assert len(done.stderr.strip().splitlines()) == 1
