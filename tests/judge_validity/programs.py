"""Rewrites and perturbations of home_search and booking gold programs.

Both APIs are search forms: a few calls must come first (``set_location`` then
``set_buy_or_rent``; ``select_booking_type``), the other setters commute, and ``search()`` fills
defaults. The equivalences below follow from those rules; the perturbations change one
criterion of the final form (a value, a missing or an extra setter, two values swapped).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from tests.judge_validity import pyedit
from tests.judge_validity.cases import Case, perturbations, rewrites, rotate
from toolbench.tasks.booking import world as booking_api
from toolbench.tasks.home_search import world as home_api

FIRST_CALLS = {
    "home_search": ("set_location", "set_buy_or_rent"),
    "booking": ("select_booking_type",),
}
CHOICES = {
    "set_buy_or_rent": list(home_api.BUY_OR_RENT),
    "select_transportation": list(booking_api.TRANSPORTATION_TYPES),
    "select_room_type": list(booking_api.ROOM_TYPES),
    "select_booking_type": list(booking_api.BOOKING_TYPES),
}


def signatures(*classes: type) -> dict[str, list[str]]:
    """Positional parameter names of every public method (and constructor) of the classes."""
    found: dict[str, list[str]] = {}
    for cls in classes:
        found[cls.__name__] = list(inspect.signature(cls).parameters)
        for name, member in vars(cls).items():
            if callable(member) and not name.startswith("_"):
                found[name] = [p for p in inspect.signature(member).parameters if p != "self"]
    return found


SIGNATURES = {
    "home_search": signatures(home_api.HomeSearchAPI),
    "booking": signatures(booking_api.BookingAPI, booking_api.Loc, booking_api.Date),
}


@dataclass(frozen=True)
class Pool:
    """Values seen across a task's golds, for wrong values and extra criteria."""

    cities: list[str]
    home_types: list[str]
    setters: list[tuple[str, str]]  # (method, one self-contained line)

    @classmethod
    def of(cls, golds: Sequence[str]) -> Pool:
        cities: set[str] = set()
        home_types: set[str] = set()
        setters: dict[str, str] = {}
        for gold in golds:
            for _, value, call, _ in pyedit.literal_sites(gold):
                if call in ("set_location", "Loc") and isinstance(value, str):
                    cities.add(value)
                if call == "select_home_type":
                    home_types.add(value)
            for method, line in _inlined_setters(gold):
                setters.setdefault(method, line)
        return cls(sorted(cities), sorted(home_types), sorted(setters.items()))


def _inlined_setters(gold: str) -> list[tuple[str, str]]:
    """Each setter call of a gold with variables replaced by the values assigned to them."""
    assigned: dict[str, ast.expr] = {}
    found = []
    for stmt in pyedit.statements(gold):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            assigned[stmt.targets[0].id] = stmt.value
        method = pyedit.statement_call(stmt)
        if method and method.startswith("set_") and isinstance(stmt, ast.Expr):
            call = stmt.value
            assert isinstance(call, ast.Call)
            call.args = [assigned.get(a.id, a) if isinstance(a, ast.Name) else a for a in call.args]
            found.append((method, ast.unparse(stmt)))
    return found


# -- rewrites ----------------------------------------------------------------------------------


def reordered_setters(task: str, gold: str) -> str | None:
    """Required first calls first, then definitions, then the other setters in reverse order."""
    body = pyedit.statements(gold)
    first = [s for s in body if pyedit.statement_call(s) in FIRST_CALLS[task]]
    definitions = [s for s in body if isinstance(s, ast.Assign)]
    last = [s for s in body if pyedit.statement_call(s) == "search"]
    middle = [s for s in body if s not in first and s not in definitions and s not in last]
    if len(middle) < 2:
        return None
    return pyedit.render([*first, *definitions, *reversed(middle), *last])


def explicit_defaults(task: str, gold: str) -> str | None:
    """The values ``search()`` would fill in, set explicitly just before it."""
    body = pyedit.statements(gold)
    called = {pyedit.statement_call(s) for s in body}
    if "search" not in called:
        return None
    extra = [f"API.{name}(0)" for name in _zero_defaults(task) if name not in called]
    kind = _literal_argument(body, "select_booking_type")
    if kind in ("hotels", "both") and "set_num_rooms" not in called:
        extra.append("API.set_num_rooms(1)")
    if kind == "both":
        for setter, source in (("departure", "checkin"), ("return", "checkout")):
            value = _argument_source(body, f"set_{source}_date")
            if f"set_{setter}_date" not in called and value:
                extra.append(f"API.set_{setter}_date({value})")
    index = [pyedit.statement_call(s) for s in body].index("search")
    return pyedit.with_statement(gold, index, "\n".join(extra)) if extra else None


def _zero_defaults(task: str) -> tuple[str, ...]:
    if task == "home_search":
        return ("set_min_price", "set_min_square_feet")
    return ("set_min_ticket_price", "set_min_room_price")


def _literal_argument(body: Sequence[ast.stmt], method: str) -> object:
    for stmt in body:
        if pyedit.statement_call(stmt) == method and isinstance(stmt, ast.Expr):
            call = stmt.value
            if isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Constant):
                return call.args[0].value
    return None


def _argument_source(body: Sequence[ast.stmt], method: str) -> str | None:
    for stmt in body:
        if pyedit.statement_call(stmt) == method and isinstance(stmt.value, ast.Call):  # type: ignore[attr-defined]
            return ast.unparse(stmt.value.args[0])  # type: ignore[attr-defined]
    return None


def home_types_recased(gold: str) -> str | None:
    """The home type list in reverse order and lower case (the API sorts and lower-cases)."""
    tree = ast.parse(gold)
    for node in ast.walk(tree):
        if pyedit.call_name(node) == "select_home_type" and isinstance(node, ast.Call):
            values = node.args[0] if node.args else None
            if isinstance(values, ast.List):
                values.elts = [ast.Constant(str(e.value).lower()) for e in reversed(values.elts)]  # type: ignore[attr-defined]
                return pyedit.render(tree.body)
    return None


def rewrite_edits(task: str) -> dict[str, Callable[[str], str | None]]:
    edits = dict(pyedit.GENERIC_REWRITES)
    edits["keyword_arguments"] = partial(pyedit.keyword_arguments, signatures=SIGNATURES[task])
    edits["reordered_setters"] = partial(reordered_setters, task)
    edits["explicit_defaults"] = partial(explicit_defaults, task)
    if task == "home_search":
        edits["home_types_order_and_case"] = home_types_recased
    return edits


def program_rewrites(task: str, gold: str) -> list[Case]:
    return rewrites(gold, rewrite_edits(task))


# -- perturbations -----------------------------------------------------------------------------


def program_perturbations(task: str, gold: str, pool: Pool, seed: int) -> list[Case]:
    found = [*_value_changes(gold, pool, seed), *_criteria_changes(task, gold, pool, seed)]
    return perturbations(found, gold)


def _value_changes(gold: str, pool: Pool, seed: int) -> list[tuple[str, str | None]]:
    """One literal replaced: a city, a choice, a home type, a date, a number."""
    options: dict[str, list[tuple[int, object]]] = {}
    for site, value, call, position in pyedit.literal_sites(gold):
        kind, new = _wrong_value(value, call, position, pool, seed)
        if kind and new is not None:
            options.setdefault(kind, []).append((site, new))
    return [
        (kind, pyedit.replace_literal(gold, *choices[seed % len(choices)]))
        for kind, choices in options.items()
    ]


def _wrong_value(
    value: object, call: str | None, position: int, pool: Pool, seed: int
) -> tuple[str | None, object]:
    if call in ("set_location", "Loc"):
        return "wrong_city", rotate(pool.cities, seed, value)
    if call in CHOICES:
        return "wrong_type", rotate(CHOICES[call], seed, value)
    if call == "select_home_type":
        return "wrong_home_type", rotate(pool.home_types, seed, value)
    if call == "Date" and isinstance(value, int):
        if position == 1:
            return "wrong_date", value + 1 if value < 28 else value - 1
        return ("wrong_date", value + 1) if position == 2 else ("wrong_date", value % 12 + 1)
    return "wrong_number", pyedit.bumped_number(value)


def _criteria_changes(task: str, gold: str, pool: Pool, seed: int) -> list[tuple[str, str | None]]:
    """A criterion dropped, one added, search() left out, origin and destination swapped."""
    body = pyedit.statements(gold)
    calls = [pyedit.statement_call(s) for s in body]
    optional = [
        i
        for i, name in enumerate(calls)
        if name and name.startswith(("set_", "select_")) and name not in FIRST_CALLS[task]
    ]
    found: list[tuple[str, str | None]] = []
    if optional:
        found.append(
            ("dropped_criterion", pyedit.without_statement(gold, rotate_index(optional, seed)))
        )
    extra = [line for method, line in pool.setters if method not in calls]
    if extra and "search" in calls:
        line = extra[seed % len(extra)]
        found.append(("added_criterion", pyedit.with_statement(gold, calls.index("search"), line)))
        found.append(("missing_search", pyedit.without_statement(gold, calls.index("search"))))
    found.append(("swapped_origin_destination", _swapped_places(gold)))
    return found


def rotate_index(indices: list[int], seed: int) -> int:
    return indices[seed % len(indices)]


def _swapped_places(gold: str) -> str | None:
    """Origin and destination exchanged (booking trips)."""
    body = pyedit.statements(gold)
    args = {}
    for stmt in body:
        name = pyedit.statement_call(stmt)
        if name in ("set_origin", "set_destination") and isinstance(stmt, ast.Expr):
            args[name] = stmt.value.args  # type: ignore[attr-defined]
    if len(args) != 2:
        return None
    args["set_origin"][0], args["set_destination"][0] = (
        args["set_destination"][0],
        args["set_origin"][0],
    )
    return pyedit.render(body)
