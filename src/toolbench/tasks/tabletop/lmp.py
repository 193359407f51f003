"""The language-model programs (LMPs) of tabletop, as they run inside a sandbox worker.

A sample's program is one harness-written line, ``tabletop_ui(<instruction>, <objects line>)``.
Each LMP here is a plain function in the program's scope; calling it asks the harness for code
over the sandbox's host channel (``toolbench.sandbox.host``: the harness builds the LMP's
prompt and awaits the model through the runner's ``generate``), then runs that code *in this
worker* under the same sandbox policy, and returns the LMP's value. The code may call LMPs
again (nesting, capped by ``Limits.max_host_depth``) and functions nobody defined, which the
function generator (``fgen``) asks the model to write before the code runs.

The protocol is the original's (memo §2.3-2.4) except where noted:

* **Scoping rule: one dict.** Each LMP's code runs with one dict as its globals *and* locals:
  the fixed scope (numpy, shapely) + the shared variable scope (the API, the sub-LMPs, the
  generated functions) + the call's keyword arguments. So list comprehensions, generator
  expressions and functions defined in the code see the names it assigned, on every Python
  version (the original's split globals/locals made them NameErrors on Python 3.8, and generator
  expressions still fail on 3.12). ``ret_val`` / ``new_shape_pts`` are read from that dict; the
  session LMP (``tabletop_ui``) copies the names its code bound into the variable scope.
* **No string filter.** The original refused code containing ``import`` or ``__`` anywhere
  (also in comments and words such as "important") and replaced ``exec``/``eval`` by no-ops.
  Here the sandbox decides: RestrictedPython refuses names starting with ``_``, ``exec``/``eval``
  and imports (a compile error, so the sample crashes as the original's assertion did), comments
  and strings are free, and the OS layers hold whatever gets past it.
* **fgen and recursion.** Called-but-undefined bare names are found with ``ast`` in the model's
  code (not its context), assignment form preferred, in the order the original found them; a
  generated function's body is scanned the same way, recursively, and the function re-run with
  its new helpers in scope. One fix: while a function's body is scanned, the function itself
  counts as defined, so a recursive function is not generated again forever (the original
  recursed until the API budget or the stack ran out).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolbench.sandbox import host
from toolbench.sandbox.world import World
from toolbench.tasks.tabletop import world as table_world

FGEN = "fgen"
# Completion mode adds these to every LMP's own stops (session.harness_stops; --stop replaces).
HARNESS_STOPS = ("------", "Task:")


@dataclass(frozen=True)
class LmpSpec:
    """One row of the LMP table (memo §2.1)."""

    name: str
    prefix: str
    suffix: str
    stops: tuple[str, ...]
    session: bool = False
    returns: str | None = None  # the local the LMP returns


LMPS: dict[str, LmpSpec] = {
    spec.name: spec
    for spec in (
        LmpSpec("tabletop_ui", "# ", ".", ("#", "objects = ["), session=True),
        LmpSpec("parse_obj_name", "# ", ".", ("#", "objects = ["), returns="ret_val"),
        LmpSpec("parse_position", "# ", ".", ("#",), returns="ret_val"),
        LmpSpec("parse_question", "# ", ".", ("#", "objects = ["), returns="ret_val"),
        LmpSpec("transform_shape_pts", "# ", ".", ("#",), returns="new_shape_pts"),
        LmpSpec(FGEN, "# define function: ", ".", ("# define", "# example")),
    )
}
SUB_LMPS = ("parse_obj_name", "parse_position", "parse_question", "transform_shape_pts")
TOP_LMP = "tabletop_ui"
_BUILTIN_NAMES = frozenset(dir(builtins))


def call_sites(code: str) -> dict[str, ast.AST]:
    """Callee name -> the node fgen is shown: every call of a bare name, or the whole
    assignment when its value is that call (the assignment wins, the last one of each). Names
    come in the order their first call is finished: a call's arguments before the call, fields
    in the AST's order, as the original's ``ast.NodeVisitor`` found them. Unparsing is left to
    the caller, which needs it only for the few names nobody defined (it was two thirds of
    the time here).

    The walk is the original visitor's post-order, kept on an explicit stack: the code is the
    model's, and a recursive walk of an AST as deep as ``ast.parse`` allows could exhaust
    Python's stack (one step per node either way, so the time is linear in the code)."""
    calls: dict[str, ast.AST] = {}
    assigns: dict[str, ast.AST] = {}
    stack: list[tuple[ast.AST, bool]] = [(ast.parse(code), False)]
    while stack:
        node, children_done = stack.pop()
        if not children_done:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))
        elif type(node) is ast.Call:
            if type(node.func) is ast.Name:
                calls[node.func.id] = node
        elif type(node) is ast.Assign:
            call = node.value
            if type(call) is ast.Call and type(call.func) is ast.Name:
                assigns[call.func.id] = node
    return {name: assigns.get(name, node) for name, node in calls.items()}


def _children(node: ast.AST) -> list[ast.AST]:
    """A node's child nodes in field order (what ``ast.NodeVisitor.generic_visit`` visits)."""
    children: list[ast.AST] = []
    for field in node._fields:
        value = getattr(node, field, None)
        if type(value) is list:
            children.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def find_calls(code: str) -> dict[str, str]:
    """``call_sites`` with each node as source text: what fgen's prompt shows."""
    return {name: ast.unparse(node) for name, node in call_sites(code).items()}


def first_body(source: str) -> str:
    """The body of the generated source's first statement (normally its ``def``), as source;
    AttributeError when that statement has no body, as in the original."""
    first = ast.parse(source).body[0]
    body = first.body  # type: ignore[attr-defined]
    return ast.unparse(ast.Module(body=list(body), type_ignores=[]))


def lmp_sources(context: str, code: str) -> tuple[str, ...]:
    r"""The programs an LMP's code runs as. The original ran ``context + "\n" + code`` as one;
    we run the context and then the code, shifted down by the context's lines (so line
    numbers are the original's), in the same scope: the same whenever each piece compiles on
    its own (``run_lmp_code`` runs the whole otherwise). Two pieces because the code alone is
    often the same text in many samples whose contexts (their objects) differ, so a worker
    compiles it once (``session.py`` asks the template to, with ``host.Code``)."""
    if not context:
        return (code,)
    # The line breaks Python's tokenizer knows ("\r\n", "\r", "\n"), counted in one pass
    # each; a context ending in "\r" joins the "\n" into one break.
    joined = context + "\n"
    lines = joined.count("\n") + joined.count("\r") - joined.count("\r\n")
    return (context, "\n" * lines + code)


def run_lmp_code(context: str, code: str, scope: dict[str, Any]) -> None:
    r"""Run an LMP's code with its context line in ``scope``, as ``exec(context + "\n" +
    code)`` would (see ``lmp_sources``); nothing runs unless everything compiled."""
    pieces = lmp_sources(context, code)
    try:
        compiled = [host.compile_source(piece) for piece in pieces]
    except SyntaxError:
        if len(pieces) == 1:
            raise
        compiled = [host.compile_source(f"{context}\n{code}")]
    for codes in compiled:
        host.run(codes, scope)


class Runtime:
    """One sample's LMPs in the program process: the fixed scope and the shared variable
    scope that every LMP and fgen see (a fresh runtime per program: nothing leaks)."""

    def __init__(self, fixed: dict[str, Any]) -> None:
        self.fixed = fixed
        self.variable: dict[str, Any] = {name: self._lmp(name) for name in SUB_LMPS}

    def _lmp(self, name: str) -> Callable[..., Any]:
        def lmp(query: Any, context: Any = "", **kwargs: Any) -> Any:
            return self.call(name, query, context, kwargs)

        lmp.__name__ = lmp.__qualname__ = name
        return lmp

    def call(self, name: str, query: Any, context: Any, kwargs: dict[str, Any]) -> Any:
        """One LMP call: ask for code, generate its missing functions, run it, return."""
        spec = LMPS[name]
        context = context if isinstance(context, str) else str(context)
        with host.nested():
            code = host.call("lmp", {"lmp": name, "query": str(query), "context": context})
            if not isinstance(code, str):
                raise host.HostError("the host sent no code")
            self.variable.update(self.create_functions(code, {}))
            initial = {**self.fixed, **self.variable, **kwargs}
            scope = host.scope_for(initial)
            run_lmp_code(context, code, scope)
        if spec.session:
            self.variable.update(_bound(scope, initial))
        if spec.returns is not None:
            return scope[spec.returns]  # KeyError when the code never set it: a crash
        return None

    def create_functions(self, code: str, others: dict[str, Any]) -> dict[str, Any]:
        """Every function ``code`` calls that no scope defines, written by fgen (recursively)."""
        created: dict[str, Any] = {}
        for name, site in call_sites(code).items():
            known = {**self.fixed, **self.variable, **created, **others}
            if name in known or name in _BUILTIN_NAMES:
                continue
            with host.nested():
                signature = ast.unparse(site)
                source = host.call(FGEN, {"name": name, "signature": signature})
                if not isinstance(source, str):
                    raise host.HostError("the host sent no code")
                function = self._define(name, source, created)
                children = self.create_functions(first_body(source), {**known, name: function})
                if children:
                    created.update(children)
                    function = self._define(name, source, created)
            created[name] = function
        return created

    def _define(self, name: str, source: str, created: dict[str, Any]) -> Any:
        scope = host.scope_for({**self.fixed, **self.variable, **created})
        host.execute(source, scope)
        return scope[name]  # KeyError when the code defined something else: a crash


def _bound(scope: dict[str, Any], initial: dict[str, Any]) -> dict[str, Any]:
    """The names the code bound (new or rebound), without the sandbox's guards (which, like
    RestrictedPython's ``_print`` helper, start with ``_``: no program can spell them)."""
    return {
        key: value
        for key, value in scope.items()
        if not key.startswith("_") and (key not in initial or initial[key] is not value)
    }


def top_call(instruction: str, objects: list[str]) -> tuple[str, str]:
    """The (query, context) of a sample's ``tabletop_ui`` call: the program passes them, and
    its first model call's prompt (the task's ``first_request``) is built from them."""
    return instruction, "objects = " + repr(objects)


def program_for(instruction: str, objects: list[str]) -> str:
    """The harness's one-line program for a sample (literals by ``repr``: nothing of the
    data can change its shape)."""
    query, context = top_call(instruction, objects)
    return f"{TOP_LMP}({query!r}, {context!r})"


def tabletop_world(configs: dict[str, Any], fix_corner_name: bool = False) -> World:
    """The sandbox world of one sample: the table's world with ``tabletop_ui`` as its only
    program-visible name; the model's code sees the fixed and variable scopes."""
    base = table_world.make_world(configs, fix_corner_name=fix_corner_name)
    runtime = Runtime(dict(base.namespace))

    def tabletop_ui(query: Any, context: Any = "") -> None:
        runtime.call(TOP_LMP, query, context, {})

    return World(
        namespace={TOP_LMP: tabletop_ui},
        snapshot=base.snapshot,
        allowed_modules=base.allowed_modules,
        writable_types=base.writable_types,
    )


def prepare_sandbox_worker() -> None:
    """Pay the table's imports (numpy, shapely) once per worker, outside every time limit, and
    build the programs' guarded builtins here in the template (cached by allowed modules):
    otherwise every forked program process built its own copy."""
    # deferred: RestrictedPython (~11 modules), in a sandbox worker only, not to list tasks
    from toolbench.sandbox import policy

    table_world.prepare_sandbox_worker()
    policy.builtins_for(table_world.ALLOWED_MODULES)
