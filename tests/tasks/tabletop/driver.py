"""A test-only, in-process stand-in for the LMP runtime, to prove the experts on the table.

It follows the protocol of the original (prompt context prepended to the code, function
generation of called-but-undefined names found with ``ast`` before running, recursively, with
the parent re-run once its helpers exist, the shared variable scope, ``tabletop_ui`` keeping
its locals, sub-LMPs returning ``ret_val``) and the original's split globals/locals ``exec``,
the stricter of the two scoping rules. It ``exec``s only programs our own experts wrote: this
is trusted test code, never the harness's path for model output (that runs in the sandbox).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbench.tasks.tabletop.world import Table, fixed_scope

Writer = Callable[[str, str, str], str]  # (lmp, query, context) -> program
RETURNS = {
    "parse_obj_name": "ret_val",
    "parse_position": "ret_val",
    "parse_question": "ret_val",
    "transform_shape_pts": "new_shape_pts",
}
MAX_DEPTH = 8


@dataclass
class Driver:
    table: Table
    write: Writer
    merged_scope: bool = False
    calls: list[tuple[str, str]] = field(default_factory=list)  # (lmp, query) in call order
    programs: list[str] = field(default_factory=list)  # every program the writer gave
    variable: dict[str, Any] = field(default_factory=dict)
    depth: int = 0

    def __post_init__(self) -> None:
        self.fixed = fixed_scope()
        self.variable.update(self.table.api())
        for lmp, ret in RETURNS.items():
            self.variable[lmp] = self._lmp(lmp, ret)

    def run(self, instruction: str) -> None:
        context = f"objects = {self.table.get_obj_names()}"
        self._execute("tabletop_ui", instruction, context, {}, None)

    def _lmp(self, lmp: str, ret: str) -> Callable[..., Any]:
        def call(query: str, context: str = "", **kwargs: Any) -> Any:
            return self._execute(lmp, query, context, kwargs, ret)

        return call

    def _execute(
        self, lmp: str, query: str, context: str, kwargs: Mapping[str, Any], ret: str | None
    ) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise RecursionError("LMP calls nested too deeply")
        try:
            self.calls.append((lmp, query))
            code = self.write(lmp, query, context)
            self.programs.append(code)
            self._generate_missing(code, {})
            full = f"{context}\n{code}" if context else code
            scope = {**self.fixed, **self.variable}
            local = dict(kwargs)
            if self.merged_scope:
                scope.update(local)
                local = scope
            exec(compile(full, f"<{lmp}>", "exec"), scope, local)
            if ret is None:
                self.variable.update({k: v for k, v in local.items() if not k.startswith("__")})
                return None
            return local[ret]
        finally:
            self.depth -= 1

    # -- function generation ------------------------------------------------------------------

    def _exists(self, name: str, extra: Mapping[str, Any]) -> bool:
        return (
            name in self.fixed or name in self.variable or name in extra or hasattr(builtins, name)
        )

    def _generate_missing(self, code: str, created: dict[str, Any]) -> dict[str, Any]:
        """Create every called-but-undefined function of ``code``; returns what was created."""
        new: dict[str, Any] = {}
        for name, signature in callees(code).items():
            if not self._exists(name, {**created, **new}):
                new[name] = self._create(name, signature, {**created, **new})
        self.variable.update(new)
        return new

    def _create(self, name: str, signature: str, created: dict[str, Any]) -> Any:
        self.calls.append(("fgen", signature))
        source = self.write("fgen", signature, "")
        self.programs.append(source)
        scope = {**self.fixed, **self.variable, **created}
        local: dict[str, Any] = {}
        exec(compile(source, f"<fgen {name}>", "exec"), scope, local)
        first = ast.parse(source).body[0]
        body = ast.unparse(ast.Module(body=first.body, type_ignores=[]))  # type: ignore[attr-defined]
        children = self._generate_missing(body, {**created, **local})
        if children:
            scope = {**self.fixed, **self.variable, **created, **children}
            local = {}
            exec(compile(source, f"<fgen {name}>", "exec"), scope, local)
        return local[name]


def callees(code: str) -> dict[str, str]:
    """Bare-name callees -> the source fgen sees (an assignment's whole line wins)."""
    tree = ast.parse(code)
    calls: dict[str, str] = {}
    assigned: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            calls.setdefault(node.func.id, ast.unparse(node))
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
        ):
            assigned.setdefault(node.value.func.id, ast.unparse(node))
    return {**calls, **assigned}


def drive(configs: Mapping[str, Any], write: Writer, merged_scope: bool = False) -> Driver:
    """Run the instruction of ``configs`` on a fresh table with programs from ``write``."""
    driver = Driver(Table(configs), write, merged_scope=merged_scope)
    driver.run(configs["instruction"])
    return driver
