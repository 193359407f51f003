"""The small public API a script uses: ``import toolbench`` and go."""

from __future__ import annotations

from pathlib import Path

import toolbench


def test_the_public_names_are_the_documented_ones() -> None:
    for name in toolbench.__all__:
        assert getattr(toolbench, name) is not None, name


def test_a_script_runs_a_task_loads_data_and_builds_a_model(tmp_path: Path) -> None:
    result = toolbench.run("booking", "oracle", limit=3, out=tmp_path / "run")
    assert result.info["status"] == "complete"
    assert result.info["metrics"]["booking"]["success_rate"] == 1.0
    data = toolbench.load_task("home_search")
    assert len(data.samples) == 100 and data.context.functions
    assert toolbench.get_task("booking").metrics[0] == "success_rate"
    assert toolbench.make_model("oracle").name == "oracle"
    assert toolbench.Status.SCORED.value == "scored"
