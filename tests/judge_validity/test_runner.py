"""``benchmarks/judge_validity.py`` on a folder in the original layout, and on broken judges.

The folder holds records written here (``prompt`` + ``completion`` lines). A judge that accepts
everything and one that rejects everything must both make the runner exit 1: the suite is
itself proven by wrong judges.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.judge_validity.harness import evaluate
from toolbench.tasks.registry import get_task
from toolbench.types import Outcome, Status

ROOT = Path(__file__).resolve().parents[2]


def _home(city: str, kind: str, home_type: str, *setters: str) -> str:
    calls = [f'API.set_location("{city}")', f'API.set_buy_or_rent("{kind}")']
    calls += [f'API.select_home_type(["{home_type}"])', *setters, "API.search()"]
    return "\n".join(calls)


HOMES = [
    (
        "Find a condo to buy in Boise with 2 bedrooms",
        _home("Boise", "buy", "Condo", "API.set_num_beds(2)"),
    ),
    (
        "Rent an apartment in Fargo under $1200 with a balcony",
        _home("Fargo", "rent", "Apartment", "API.set_max_price(1200)", "API.set_num_balconies(1)"),
    ),
    (
        "Houses for sale in Provo, 3 baths, 2 garages",
        _home("Provo", "buy", "House", "API.set_num_baths(3)", "API.set_num_garages(2)"),
    ),
    (
        "Rent a townhouse in Akron, 900 square feet or more",
        _home("Akron", "rent", "Townhouse", "API.set_min_square_feet(900)"),
    ),
]


def _runner() -> ModuleType:
    path = ROOT / "benchmarks" / "judge_validity.py"
    spec = importlib.util.spec_from_file_location("judge_validity_runner", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def home_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "home_search" / "v0"
    folder.mkdir(parents=True)
    lines = [json.dumps({"prompt": q, "completion": [gold]}) for q, gold in HOMES]
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_runner_passes_on_an_original_layout_folder(
    home_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _runner().main(["home_search", "--data-dir", str(home_folder)]) == 0
    out = capsys.readouterr().out
    assert "home_search: 4 samples" in out and "THRESHOLD MISSED" not in out


def _always(success: bool) -> Any:
    async def score(self: Any, data: Any, sample: Any, action: str, sandbox: Any) -> Outcome:
        return Outcome(Status.SCORED, success, {"f1": float(success)}, details={})

    return score


@pytest.mark.parametrize(("success", "missed"), [(True, "perturbations"), (False, "rewrites")])
def test_a_broken_judge_fails_the_runner(
    home_folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    success: bool,
    missed: str,
) -> None:
    monkeypatch.setattr(type(get_task("home_search")), "score", _always(success))
    report = evaluate("home_search", home_folder)
    assert any(missed in line for line in report.failures())
    assert _runner().main(["home_search", "--data-dir", str(home_folder)]) == 1
    assert "THRESHOLD MISSED" in capsys.readouterr().out


def test_a_folder_without_test_jsonl_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _runner().main(["home_search", "--data-dir", str(tmp_path)]) == 2
    assert "test.jsonl" in capsys.readouterr().err
