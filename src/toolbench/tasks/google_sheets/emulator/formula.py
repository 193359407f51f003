"""One formula, evaluated with the `formulas` library, compiled once per *template*.

`formulas` compiles a formula into a schedula dispatcher whose call costs ~0.5 ms of bookkeeping; we
flatten that dispatcher once into a list of (function, inputs, outputs) steps and run the steps
directly (the functions are the library's own, so Excel semantics are kept). References are replaced
by placeholders before compiling (see `refs.template`), so one compilation serves a whole column of
`=B2*C2`, `=B3*C3`, ... Formulas that need a reference's address (ROW, OFFSET, ...) compile per cell
and are called through the library with `Ranges` inputs.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from graphlib import TopologicalSorter
from typing import Any

import numpy as np

from toolbench.tasks.google_sheets.emulator.a1 import GridRange, parse_range, rowcol_to_a1
from toolbench.tasks.google_sheets.emulator.errors import IncorrectCellLabel
from toolbench.tasks.google_sheets.emulator.refs import REF_ERROR, template
from toolbench.tasks.google_sheets.emulator.values import ErrorValue, normalize_number

# a reference -> what the formula sees there: a scalar for a cell, a 2-D object array for an area
Resolver = Callable[[GridRange], Any]
_PLACEHOLDER_RE = re.compile(r"ZZ(\d+)|ZY(\d+):ZZ\2")
_STEP_KEYS = {
    "type",
    "inputs",
    "outputs",
    "wait_inputs",
    "index",
    "solve_cycle",
    "function",
    "extra_inputs",
}
_CACHE_LIMIT = 20_000


@dataclass
class Compiled:
    """A runnable formula: `error` set when it cannot run at all (parse error, unknown function)."""

    error: str | None = None
    flat: bool = False  # run `steps` directly; else call `pipe`, the library's own callable
    steps: list[tuple[Any, tuple[Any, ...], tuple[Any, ...]]] = field(default_factory=list)
    consts: dict[Any, Any] = field(default_factory=dict)
    output: Any = None
    pipe: Any = None
    pipe_inputs: list[str] = field(default_factory=list)
    inputs: list[tuple[str, int]] = field(default_factory=list)  # (input name, reference index)
    needs_addresses: bool = False


_compiled: dict[Any, Compiled] = {}
_lib: dict[str, Any] = {}


def _library() -> dict[str, Any]:
    """Import `formulas` lazily: importing it and loading its function tables takes ~1 s."""
    if not _lib:
        import formulas  # deferred: ~1 s to import, as the docstring says
        import schedula  # deferred: with formulas
        from formulas.cell import CELL  # deferred: with formulas
        from formulas.functions import Error, not_implemented  # deferred: with formulas
        from formulas.ranges import Ranges  # deferred: with formulas
        from formulas.tokens.operand import XlError  # deferred: with formulas

        _lib.update(
            parser=formulas.Parser(),
            EMPTY=schedula.EMPTY,
            NONE=schedula.NONE,
            CELL=CELL,
            errors=Error.errors,
            not_implemented=not_implemented,
            Ranges=Ranges,
            XlError=XlError,
        )
    return _lib


def warm_up() -> None:
    """Load the library's function tables now (the first compile otherwise pays ~1 s)."""
    evaluate("=SUM(A1:A2)+ROUND(1,0)", 1, 1, lambda rng: 1)


def empty() -> Any:
    return _library()["EMPTY"]


def error(code: str) -> Any:
    return _library()["errors"].get(code, _library()["errors"]["#VALUE!"])


def is_error(value: Any) -> bool:
    return isinstance(value, _library()["XlError"])


def _compile(text: str, cell: str | None, placeholders: bool) -> Compiled:
    lib = _library()
    quiet = logging.getLogger("schedula.utils.sol")  # it logs a traceback per unknown function
    was_disabled, quiet.disabled = quiet.disabled, True
    try:
        builder = lib["parser"].ast(text)[1]
        pipe = builder.compile(**({lib["CELL"]: lib["Ranges"]().push(cell)} if cell else {}))
    except Exception:
        return Compiled(error=REF_ERROR if REF_ERROR in text else "#ERROR!")
    finally:
        quiet.disabled = was_disabled
    compiled = Compiled(pipe=pipe, pipe_inputs=list(pipe.inputs), output=pipe.outputs[0])
    if placeholders:
        for name in compiled.pipe_inputs:
            m = _PLACEHOLDER_RE.fullmatch(name)
            if m is None:  # the library saw a reference we did not: compile per cell instead
                return Compiled(needs_addresses=True)
            compiled.inputs.append((name, int(m[1] or m[2]) - 1))
    steps: dict[Any, Any] = {}
    order: TopologicalSorter[Any] = TopologicalSorter()
    for node, attrs in pipe.dsp.nodes.items():
        if attrs["type"] != "function":
            continue
        if attrs["function"] is lib["not_implemented"]:
            return Compiled(error="#NAME?")
        steps[node] = attrs
        order.add(node, *attrs["inputs"])
        for out in attrs["outputs"]:
            order.add(out, node)
    if any(set(attrs) - _STEP_KEYS for attrs in steps.values()):
        return compiled
    consts = {k: v["value"] for k, v in pipe.dsp.default_values.items()}
    known = set(consts) | set(compiled.pipe_inputs)
    flat = []
    for node in order.static_order():
        if node in steps:
            ins, outs = tuple(steps[node]["inputs"]), tuple(steps[node]["outputs"])
            if not known.issuperset(ins):
                return compiled
            known.update(outs)
            flat.append((steps[node]["function"], ins, outs))
    compiled.flat, compiled.consts, compiled.steps = True, consts, flat
    return compiled


def _compiled_for(key: Any, text: str, cell: str | None, placeholders: bool) -> Compiled:
    found = _compiled.get(key)
    if found is None:
        if len(_compiled) >= _CACHE_LIMIT:
            _compiled.clear()
        found = _compiled[key] = _compile(text, cell, placeholders)
    return found


def _run(compiled: Compiled, args: dict[str, Any]) -> Any:
    if not compiled.flat:
        return compiled.pipe(*[args[name] for name in compiled.pipe_inputs])
    env = dict(compiled.consts)
    env.update(args)
    for func, ins, outs in compiled.steps:
        result = func(*[env[i] for i in ins])
        if len(outs) == 1:
            env[outs[0]] = result
        else:
            env.update(zip(outs, result, strict=False))
    return env.get(compiled.output, empty())


def evaluate(text: str, row: int, col: int, resolve: Resolver) -> Any:
    """The value of formula `text` in cell (row, col): a Python scalar, None or an ErrorValue."""
    tmpl, refs, templatable = template(text)
    try:
        compiled = _compiled_for(tmpl, tmpl, None, True) if templatable else None
        if compiled is None or compiled.needs_addresses:
            return _evaluate_with_addresses(text, row, col, resolve)
        if compiled.error is not None:
            return ErrorValue(compiled.error)
        return to_value(_run(compiled, {name: resolve(refs[k]) for name, k in compiled.inputs}))
    except NotImplementedError:
        return ErrorValue("#NAME?")
    except RecursionError:
        return ErrorValue("#REF!")
    except Exception:
        return ErrorValue("#VALUE!")


def _evaluate_with_addresses(text: str, row: int, col: int, resolve: Resolver) -> Any:
    """ROW(), OFFSET(...) and friends: compiled for this cell, fed `Ranges` that know addresses."""
    lib = _library()
    compiled = _compiled_for((text, row, col), text, rowcol_to_a1(row, col), False)
    if compiled.error is not None:
        return ErrorValue(compiled.error)
    args: dict[str, Any] = {}
    for name in compiled.pipe_inputs:
        try:
            rng = parse_range(name, allow_sheet_only=False)
        except IncorrectCellLabel:  # a name, not a reference: Sheets' "Unknown range name"
            args[name] = error("#NAME?")
            continue
        value = resolve(rng)
        if is_error(value):
            args[name] = value
            continue
        arr = np.asarray(value, dtype=object).reshape((1, 1)) if rng.is_cell else value
        args[name] = lib["Ranges"]().push(name, arr)
    return to_value(_run(compiled, args))


def to_value(result: Any) -> Any:
    """The library's result (0-d/2-D arrays, numpy scalars, XlError) as a stored Python value.
    An array result keeps its top-left value (Sheets would spill it: a known gap)."""
    lib = _library()
    if isinstance(result, np.ndarray):
        flat = result.ravel()
        result = flat[0] if flat.size else lib["EMPTY"]
    if result is lib["EMPTY"] or result is lib["NONE"] or result is None:
        return None
    if isinstance(result, lib["XlError"]):
        return ErrorValue(str(result))
    if hasattr(result, "item") and not isinstance(result, str):
        result = result.item()
    if isinstance(result, bool):
        return result
    if isinstance(result, (int, float)):
        if isinstance(result, float) and not math.isfinite(result):
            return ErrorValue("#NUM!")
        return normalize_number(result)
    if isinstance(result, str):
        return result
    return ErrorValue("#VALUE!")


def to_input(value: Any) -> Any:
    """A stored/computed cell value as a formula input."""
    if value is None:
        return empty()
    if isinstance(value, ErrorValue):
        return error(str(value))
    return value
