"""--system-prompt: the instruction of chat and tools prompts, per run, refused where it
would change nothing."""

from __future__ import annotations

import pytest

from toolbench.cli.main import main


def test_the_system_prompt_replaces_the_chat_instruction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(
        ["prompt", "home_search", "--sample", "0", "--mode", "chat", "--system-prompt", "Be terse."]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "Be terse." in out
    assert "Reply with the action only" not in out


def test_tabletop_chat_takes_the_system_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "prompt",
            "tabletop",
            "--sample",
            "SI_0-0",
            "--mode",
            "chat",
            "--system-prompt",
            "Only code.",
        ]
    )
    assert code == 0
    assert "Only code." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["prompt", "home_search", "--sample", "0"], "completion prompts have no system message"),
        (
            ["run", "aware", "--model", "oracle", "--mode", "chat"],
            "keeps its own system messages",
        ),
    ],
)
def test_the_system_prompt_is_refused_where_it_changes_nothing(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*argv, "--system-prompt", "Hi."])
    err = capsys.readouterr().err
    assert code == 2
    assert says in err and len(err.strip().splitlines()) == 1
