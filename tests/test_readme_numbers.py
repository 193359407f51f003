"""The docs' generated numbers are what ``benchmarks/readme_numbers.py`` measures.

What the default suite checks, cheaply:
  * every marked section of the docs (the built-in models' scores in docs/tasks.md, the HTML
    page sizes in docs/reports.md: ``numbers_script.DOCS``; once the README's) is
    exactly what ``benchmarks/readme_numbers.json`` renders (a hand edit inside a section, or
    a JSON regenerated without rewriting the docs, fails);
  * the JSON covers both built-in models on every built-in tool task and every page;
  * two tasks (home_search and booking, the main job: 220 samples, 5 s on a quiet machine)
    re-measured with both models give the JSON's numbers to the digits shown, so a change to
    their scorers or the baseline that was not regenerated fails here.

The whole regeneration (every task, the HTML pages; about a minute on 2 cores) is run by hand:
``python benchmarks/readme_numbers.py --check`` (compare) or without ``--check`` (rewrite).
"""

from __future__ import annotations

import copy
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from toolbench.tasks import registry

ROOT = Path(__file__).resolve().parents[1]


def _script() -> ModuleType:
    path = ROOT / "benchmarks" / "readme_numbers.py"
    spec = importlib.util.spec_from_file_location("readme_numbers", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("readme_numbers", module)
    spec.loader.exec_module(module)
    return module


numbers_script = _script()


def test_readme_sections_are_what_the_committed_numbers_render() -> None:
    text = "\n".join(page.read_text(encoding="utf-8") for page in numbers_script.DOCS)
    assert set(numbers_script.sections(text)) == set(numbers_script.RENDERERS)
    stale = numbers_script.stale_sections(numbers_script.load())
    assert not stale, "\n".join(
        [*stale, "render with: python benchmarks/readme_numbers.py --render"]
    )


def test_the_numbers_cover_both_models_on_every_builtin_tool_task() -> None:
    numbers = numbers_script.load()
    tool_tasks = [name for name in registry.BUILTIN if name != "aware"]
    assert list(numbers_script.TASKS) == tool_tasks
    assert set(numbers["scores"]) == set(numbers_script.MODELS)
    for model, by_task in numbers["scores"].items():
        missing = set(tool_tasks) - set(by_task)
        assert not missing, f"{model}: no numbers for {sorted(missing)}; regenerate them"
    assert set(numbers["html_pages"]) == set(numbers_script.PAGES)


def test_two_tasks_remeasured_give_the_committed_numbers(tmp_path: Path) -> None:
    measured = numbers_script.measure(
        ("home_search", "booking"), numbers_script.MODELS, tmp_path, pages=False
    )
    changed = numbers_script.differences(measured, numbers_script.load())
    assert not changed, "\n".join(
        [*changed, "regenerate with: python benchmarks/readme_numbers.py"]
    )


def test_differences_and_rewriting() -> None:
    committed = numbers_script.load()
    assert numbers_script.differences(committed, committed) == []
    moved = copy.deepcopy(committed)
    moved["scores"]["baseline"]["booking"]["metrics"]["success_rate"]["mean"] += 0.01
    moved["html_pages"]["baseline"]["bytes"] *= 2
    moved["scores"]["oracle"]["home_search"]["metrics"]["success_rate"]["mean"] += 1e-5
    changed = numbers_script.differences(moved, committed)
    assert len(changed) == 2, changed  # a change below the digits shown is no change
    assert changed[0].startswith("baseline booking success_rate: 0.693 [")
    assert changed[1].startswith("page baseline: ")

    text = (
        "a <!-- readme-numbers:html-pages:begin -->old<!-- readme-numbers:html-pages:end -->.\n"
        "<!-- readme-numbers:scores:begin -->\nold\n<!-- readme-numbers:scores:end -->\n"
    )
    rewritten = numbers_script.rewrite(text, committed)
    assert rewritten.startswith("a <!-- readme-numbers:html-pages:begin -->One run of every")
    assert "<!-- readme-numbers:scores:begin -->\n| task | metric |" in rewritten
    assert rewritten.endswith("|\n<!-- readme-numbers:scores:end -->\n")
    assert numbers_script.rewrite(rewritten, committed) == rewritten
