"""A backend owns its options (issue 38): a new model backend with two options of its own, in
a package of its own that touches no toolbench file, is found through the ``toolbench.models``
entry point, lists its options in ``toolbench list models`` from its schema, takes them as
``--model-arg KEY=VALUE`` end to end through the command line, refuses an unknown key in one
line naming the flag, the backend and the keys it takes, and a changed value is another
configuration (its fingerprint differs; resuming its folder with the other value is refused).

The package is a real installed distribution: a module and a ``dist-info`` (METADATA,
entry_points.txt) that a ``toolbench`` subprocess finds on ``PYTHONPATH``, as pip leaves it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import textwrap
from pathlib import Path

import pytest

import toolbench
from tests.plugin_site import make_site, toolbench_cli
from toolbench.errors import UserError

MODULE = textwrap.dedent(
    '''
    """Answers every prompt with one fixed text, said a number of times."""

    from pydantic import BaseModel, ConfigDict, Field

    from toolbench.models.registry import TOOL_TASKS, KnownModel
    from toolbench.types import Generation


    class KnobArgs(BaseModel):
        model_config = ConfigDict(extra="forbid")

        reply: str = Field("no idea", description="the text every answer is made of")
        repeat: int = Field(1, ge=1, description="how many times the text is said")


    class KnobModel:
        cacheable = False

        def __init__(self, argument, options):
            args = options.args(KnobArgs)
            self.name = f"knobs:{argument}"
            self.text = " ".join([args.reply] * args.repeat)

        async def generate(self, request):
            return Generation(text=self.text)

        async def aclose(self):
            pass


    ENTRY = KnownModel(
        "knobs:NAME", "a fixed text, said REPEAT times", "nothing",
        frozenset({TOOL_TASKS}), KnobModel, options=KnobArgs,
    )
    '''
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("knobs-site")
    return make_site(site, "tb_knobs", MODULE, "toolbench.models", "knobs = tb_knobs:ENTRY")


def _run(site: Path, tmp: Path, out: Path, *model_args: str) -> subprocess.CompletedProcess[str]:
    flags = [flag for pair in model_args for flag in ("--model-arg", pair)]
    return toolbench_cli(
        site, tmp, "run", "home_search", "--model", "knobs:x", "--limit", "2", "--no-cache",
        "--out", str(out), *flags,
    )  # fmt: skip


def test_the_listing_shows_the_backends_options_from_its_schema(site: Path, tmp_path: Path) -> None:
    done = toolbench_cli(site, tmp_path, "list", "models")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if "knobs:NAME" in line)
    assert "reply (str, default 'no idea'): the text every answer is made of" in row
    following = done.stdout.split(row, 1)[1]
    assert "repeat (int, default 1): how many times the text is said" in following
    assert "agent:COMMAND" in done.stdout and "batch_size (int, default 8)" in done.stdout


def test_both_options_reach_the_backend_through_the_command_line(
    site: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    done = _run(site, tmp_path, out, "reply=hi there", "repeat=2")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert {r["prediction"] for r in records} == {"hi there hi there"}
    info = json.loads((out / "run.json").read_text())
    assert info["config"]["model_args"] == {"reply": "hi there", "repeat": 2}


def test_an_unknown_key_is_exit_2_naming_the_flag_the_backend_and_its_keys(
    site: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    done = _run(site, tmp_path, out, "repaet=2")
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "--model-arg repaet: backend knobs has no option 'repaet'" in lines[0]
    assert "(did you mean 'repeat'?); it takes repeat, reply" in lines[0]
    assert not out.exists()
    bad = _run(site, tmp_path, out, "repeat=zero")
    assert bad.returncode == 2 and "--model-arg repeat='zero'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and not out.exists()


def test_a_changed_option_is_another_configuration(site: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    assert _run(site, tmp_path, one, "repeat=2").returncode == 0
    assert _run(site, tmp_path, two, "repeat=3").returncode == 0
    fingerprints = [json.loads((d / "run.json").read_text())["fingerprint"] for d in (one, two)]
    assert fingerprints[0] != fingerprints[1]
    again = _run(site, tmp_path, one, "repeat=2")  # the same configuration: resumed
    assert again.returncode == 0, again.stderr
    refused = _run(site, tmp_path, one, "repeat=3")  # another one: not into that folder
    assert refused.returncode == 2
    assert "model_args" in refused.stderr and '"repeat":2' in refused.stderr.replace(" ", "")


def test_the_api_checks_model_args_as_the_command_line_does(tmp_path: Path) -> None:
    """``toolbench.run(model_args=...)`` goes through the same check (built-in backends here:
    the plugin is found by the subprocesses above, not by this process)."""
    with pytest.raises(UserError) as caught:
        toolbench.run("home_search", "oracle", model_args={"dtype": "bfloat16"}, out=tmp_path)
    assert str(caught.value) == (
        "--model-arg dtype: backend oracle has no option 'dtype'; it takes no options"
    )
    with pytest.raises(UserError, match=r"--model-arg timout: backend agent .*did you mean"):
        toolbench.run(
            "home_search", "agent:oracle", model_args={"timout": 5}, out=tmp_path / "agent"
        )
    assert not any(tmp_path.iterdir())


# ---- the built-in backends' options, and the old flags as their aliases ----


def _args(*argv: str) -> dict[str, object]:
    from toolbench.cli.main import build_parser
    from toolbench.cli.run import model_args_from

    return model_args_from(build_parser().parse_args(["run", "home_search", *argv]))


def test_the_old_flags_are_aliases_of_the_backends_options() -> None:
    hf = ("--model", "hf:/m", "--hf-dtype", "bfloat16", "--hf-batch-size", "2")
    assert _args(*hf, "--agent-timeout", "5") == {"dtype": "bfloat16", "batch_size": 2}
    assert _args(*hf, "--model-arg", "dtype=float16")["dtype"] == "float16"  # --model-arg wins
    agent = ("--model", "agent:oracle", "--agent-timeout", "5", "--agent-env", "A")
    assert _args(*agent, "--hf-device", "cpu") == {"timeout": 5.0, "env": ["A"]}
    assert _args("--model", "oracle", "--model-replicas", "2") == {"replicas": 2}
    assert _args("--model", "oracle") == {}


def test_hfs_result_changing_options_are_its_fingerprint(tmp_path: Path) -> None:
    from toolbench.agents.registry import check_subject_args
    from toolbench.models.base import ModelOptions

    def part(**given: object) -> dict[str, object]:
        return check_subject_args("hf:/m", ModelOptions(model_args=given))

    assert part() == {"dtype": "auto", "chat_template": None}
    assert part(dtype="bfloat16", batch_size="4", device="cpu", replicas=1)["dtype"] == "bfloat16"
    template = tmp_path / "chat.jinja"
    template.write_text("{{ messages }}")
    first = part(chat_template=str(template))["chat_template"]
    template.write_text("{{ messages }}!")
    assert first and part(chat_template=str(template))["chat_template"] not in (None, first)
    assert check_subject_args("agent:oracle", ModelOptions(model_args={"timeout": 9})) == {}
    with pytest.raises(UserError, match=r"^--model-arg device='gpu9': .*use auto, cpu"):
        part(device="gpu9")


def test_a_spec_becomes_a_subject_of_its_kind() -> None:
    from toolbench.agents.registry import make_subject
    from toolbench.core.subject import AgentSubject, ModelSubject
    from toolbench.models.base import ModelOptions

    model = make_subject("oracle", ModelOptions())
    assert isinstance(model, ModelSubject) and model.kind == "model" and model.name == "oracle"
    agent = make_subject("agent:oracle", ModelOptions(model_args={"timeout": 9}))
    assert isinstance(agent, AgentSubject) and agent.kind == "agent"
    assert agent.name == "agent:oracle" and not hasattr(agent.agent, "generate")
    asyncio.run(agent.aclose())
    with pytest.raises(UserError, match=r"unknown model 'agnet:x' \(did you mean 'agent:x'\?\)"):
        make_subject("agnet:x", ModelOptions())


def test_run_help_names_model_arg_and_the_aliases() -> None:
    from toolbench.cli.main import build_parser

    parser = build_parser()
    run = next(
        action.choices["run"]
        for action in parser._actions
        if isinstance(getattr(action, "choices", None), dict) and "run" in action.choices
    )
    text = " ".join(run.format_help().split())
    assert "--model-arg KEY=VALUE" in text
    for alias, key in [("--hf-dtype", "dtype"), ("--agent-timeout", "timeout=SECONDS")]:
        assert alias in text and f"--model-arg {key}" in text


def test_the_api_names_the_model_arg_of_a_former_setting(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        toolbench.run("home_search", "hf:/m", hf_dtype="bfloat16", out=tmp_path / "r")
    assert str(caught.value) == (
        "toolbench.run: hf_dtype is a backend option now: pass model_args={'dtype': ...}"
    )
