"""The report's environment lines and warnings: one line per run, and a warning where runs
set side by side were made in ways that can change their numbers."""

from __future__ import annotations

from typing import Any

from toolbench.report.environment import environment_lines, environment_warnings


def _info(
    commit: str, torch: str, scoring: int, changes: list[str] | None = None
) -> dict[str, Any]:
    info: dict[str, Any] = {
        "environment": {
            "toolbench": {"version": "0.1.0", "commit": commit, "dirty": False},
            "python": {"version": "3.11.7"},
            "os": {"system": "Linux", "release": "6.1"},
            "hardware": {"cpus": 2, "gpus": []},
            "packages": {"torch": torch, "numpy": "2.0"},
        },
        "fingerprint_parts": {"tasks": {"home_search": {"scoring_version": scoring}}},
    }
    if changes:
        info["environment_changes"] = changes
    return info


def test_one_run_gets_one_line() -> None:
    (line,) = environment_lines({"r": _info("a" * 40, "2.1", 1)})
    assert line.startswith("environment: toolbench 0.1.0 (aaaaaaa); Python 3.11.7; Linux 6.1")
    assert "torch 2.1" in line
    assert environment_lines({"old": {}}) == []


def test_runs_made_differently_are_warned_about() -> None:
    infos = {"a": _info("a" * 40, "2.1", 1), "b": _info("b" * 40, "2.2", 2)}
    warnings = environment_warnings(infos)
    assert warnings == [
        f"a and b were made differently: toolbench.commit: {'a' * 10} -> {'b' * 10}",
        "a and b were made differently: packages.torch: 2.1 -> 2.2",
        "a and b were made differently: home_search scoring version 1 -> 2",
    ]
    same = {"a": _info("a" * 40, "2.1", 1), "b": _info("a" * 40, "2.1", 1)}
    assert environment_warnings(same) == []


def test_a_run_resumed_elsewhere_is_warned_about() -> None:
    infos = {"a": _info("a" * 40, "2.1", 1, ["packages.torch: 2.0 -> 2.1"])}
    assert environment_warnings(infos) == [
        "a was resumed under another environment (packages.torch: 2.0 -> 2.1)"
    ]
