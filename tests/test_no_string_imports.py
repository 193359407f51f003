"""No string imports of toolbench modules (issue 38): the import-layers contract
(``[tool.importlinter]``) sees ``import`` statements only, so a module reached through
``importlib.import_module("toolbench....")`` or a ``"toolbench.x.y:attr"`` reference escapes
it (``models.registry`` used to name ``toolbench.agents.process`` this way, four layers up).

Read from the source (ast), every file under ``src/toolbench``:

* a call of ``import_module`` / ``__import__`` whose argument is a string (or f-string)
  starting with ``toolbench.`` fails;
* a string that is a ``toolbench.x.y:attr`` reference fails, unless it is one of a registry's
  own lazy references to a module of its own layer (``models/registry.py`` naming
  ``toolbench.models.*``: heavy backends imported only when asked for);
* a module given to ``python -m`` (``[sys.executable, "-m", "toolbench.agents.bridge"]``) is
  a process's entry point, not an import, and passes.

``ALLOWED`` lists the exceptions left, each with why; removing one is the way to go.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "toolbench"

REFERENCE = re.compile(r"toolbench(\.\w+)+:\w+")

#: (file under src/toolbench, the toolbench module it names) still allowed, and why.
ALLOWED = {
    # A user-overridable default (a "module:attr" the user may point at a client of their
    # own), naming its own module.
    ("tasks/google_sheets/live.py", "toolbench.tasks.google_sheets.live"),
}

#: A registry may name modules of its own layer lazily (its built-ins, imported when asked
#: for, the way its entry points are loaded): file -> the package it may name. Its own
#: ``import_module`` of those names is that loading.
OWN_LAYER = {"models/registry.py": "toolbench.models.", "tasks/registry.py": "toolbench.tasks."}


def _python_files() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path.relative_to(SRC).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _text(node: ast.AST) -> str | None:
    """A string constant's value, or an f-string's literal start (``f"toolbench.{x}"``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values:
        return _text(node.values[0])
    return None


def _module_args(tree: ast.AST) -> set[int]:
    """ids of the string nodes that follow ``"-m"`` in a list or tuple (a ``python -m``)."""
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)):
            for before, after in zip(node.elts, node.elts[1:], strict=False):
                if _text(before) == "-m":
                    allowed.add(id(after))
    return allowed


def _is_import_call(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("import_module", "__import__")


def violations() -> list[str]:
    found = []
    for where, tree in _python_files():
        processes = _module_args(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _is_import_call(node) and node.args:
                text = _text(node.args[0]) or ""
                if text.startswith("toolbench."):
                    found.append(f"{where}:{node.lineno}: import_module({text!r})")
            text = _text(node)
            if text is None or id(node) in processes or not REFERENCE.fullmatch(text):
                continue
            module = text.partition(":")[0]
            if module.startswith(OWN_LAYER.get(where, "\0")) or (where, module) in ALLOWED:
                continue
            found.append(f"{where}:{node.lineno}: {text!r}")
    return found


def test_no_toolbench_module_is_imported_by_its_name_as_a_string() -> None:
    assert violations() == []


def test_the_check_finds_what_it_is_for() -> None:
    """The check itself: each kind of string import is found, a ``-m`` module is not."""
    source = (
        "import importlib, sys\n"
        "importlib.import_module('toolbench.agents.process')\n"
        "FACTORY = 'toolbench.agents.process:make_agent'\n"
        "ARGV = [sys.executable, '-m', 'toolbench.agents.bridge']\n"
        "GROUP = 'toolbench.models'\n"
    )
    tree = ast.parse(source)
    processes = _module_args(tree)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_import_call(n)]
    references = [
        text
        for n in ast.walk(tree)
        if (text := _text(n)) is not None and id(n) not in processes and REFERENCE.fullmatch(text)
    ]
    assert len(calls) == 1 and references == ["toolbench.agents.process:make_agent"]
