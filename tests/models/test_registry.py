"""The model registry: built-in entries built through their lazy factories, installed models
through the ``toolbench.models`` entry points (a bare factory or a ``KnownModel``), and a
broken or clashing installed model refused by name."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tasks.test_registry import install
from toolbench.errors import UserError
from toolbench.models import registry
from toolbench.models.base import ModelOptions
from toolbench.models.cache import CachedModel
from toolbench.models.spec import AWARENESS, TOOL_TASKS, known_model, make_model, require

MODEL_MODULE = '''
from toolbench.core import Generation, ModelOptions
from toolbench.models.registry import KnownModel

class Echo:
    cacheable = True
    def __init__(self, name):
        self.name = name
    async def generate(self, request):
        return Generation(text=request.prompt or "", finish_reason="stop")
    async def aclose(self):
        return None

def make(argument, options):
    """echoes the prompt back"""
    return Echo(f"echo:{argument}")

ENTRY = KnownModel("yesman", "answers awareness questions only", "nothing",
                   frozenset({"aware"}), "plug_models:make")
'''


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    registry._from_entry_point.cache_clear()
    yield root
    registry._from_entry_point.cache_clear()
    sys.modules.pop("plug_models", None)


def test_importing_the_registry_imports_no_backend() -> None:
    code = (
        "import sys, toolbench.models.spec\n"
        "heavy = [m for m in sys.modules if m in ('openai', 'httpx', 'torch', 'numpy')"
        " or m.startswith(('toolbench.models.reference.baseline', 'toolbench.aware'))]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_every_built_in_names_a_factory_that_exists() -> None:
    import importlib

    for entry in registry.BUILTIN:
        if not isinstance(entry.factory, str):  # a higher layer's built-in (``provide``)
            assert callable(entry.factory), entry.spec
            continue
        module, _, function = entry.factory.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), entry.spec


def test_the_awareness_floors_come_from_the_runner_layer_and_build() -> None:
    # models.registry may not import ``aware``: the runner layer provides the floors, whose
    # factories import them when built (issue 38: no cross-layer string reference).
    from toolbench.runner.builtins import AWARENESS_FLOORS

    assert [entry.name for entry in registry.BUILTIN[-4:]] == [
        "always-yes", "always-no", "random", "similarity",
    ]  # fmt: skip
    assert all(entry in registry.BUILTIN for entry in AWARENESS_FLOORS)
    assert make_model("always-yes", ModelOptions()).name == "always-yes"
    assert make_model("always-no", ModelOptions()).name == "always-no"
    assert make_model("random:3", ModelOptions()).name == "random(seed=3)"


def test_arguments_follow_the_spec_pattern(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="oracle takes no argument; write oracle"):
        make_model("oracle:x", ModelOptions())
    assert known_model("random:7") is known_model("random")
    assert make_model("random", ModelOptions()).name == "random"
    assert make_model("random:7", ModelOptions()).name == "random(seed=7)"


def test_an_installed_factory_is_a_model_for_every_question(site: Path, tmp_path: Path) -> None:
    install(site, "plug-models", "[toolbench.models]\necho = plug_models:make\n",
            {"plug_models": MODEL_MODULE})  # fmt: skip
    entry = known_model("echo:x")
    assert (
        entry is not None and entry.spec == "echo[:ARG]" and entry.what == "echoes the prompt back"
    )
    require("echo:x", TOOL_TASKS)
    model = make_model("echo:x", ModelOptions(cache_path=tmp_path / "r.sqlite"))
    assert isinstance(model, CachedModel) and model.inner.name == "echo:x"
    assert [m.name for m in registry.all_models()][-1] == "echo"


def test_an_installed_known_model_declares_its_capabilities(site: Path) -> None:
    install(site, "plug-models", "[toolbench.models]\nyesman = plug_models:ENTRY\n",
            {"plug_models": MODEL_MODULE})  # fmt: skip
    require("yesman", AWARENESS)
    with pytest.raises(UserError, match="cannot answer tool tasks"):
        require("yesman", TOOL_TASKS)
    with pytest.raises(UserError, match="yesman takes no argument"):
        make_model("yesman:1", ModelOptions())
    assert make_model("yesman", ModelOptions()).name == "echo:None"


def test_a_broken_entry_point_names_its_distribution(site: Path) -> None:
    install(site, "plug-broken", "[toolbench.models]\nbroken = plug_gone:make\n", {})
    with pytest.raises(UserError) as caught:
        make_model("broken:x", ModelOptions())
    assert "entry point broken = plug_gone:make" in str(caught.value)
    assert "plug-broken" in str(caught.value) and "ModuleNotFoundError" in str(caught.value)


def test_a_built_in_name_taken_by_an_installed_model_is_left_out_and_named(site: Path) -> None:
    install(site, "plug-clash", "[toolbench.models]\noracle = plug_models:make\n",
            {"plug_models": MODEL_MODULE})  # fmt: skip
    assert registry.all_models() == list(registry.BUILTIN)  # issue 36: a warning, not an error
    (problem,) = registry.problems()
    assert re.search(r"plug-clash.*built-in model is called 'oracle'", problem)
