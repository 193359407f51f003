"""The 15 success checks, exactly as the original tester wrote them, and a corrected variant.

``success`` reproduces the original's rules with their quirks (the 0.05 m threshold on xy,
``<`` in some templates and ``<=`` in others, the signed diagonal test, colours ignored for
"mismatched" bowls, stack height never looked at), because scores must stay comparable with
the original's. ``strict_success`` is ours: the diagonal test takes the absolute value, the
mismatched-bowls template checks the colours, stacking templates check that the blocks form
one tower (and line templates that they do not), and a sample whose check already holds on
the initial table is flagged and never counts, because an empty program would pass it.

Arithmetic follows the original to the last bit, because our kinematic table can put a block
exactly 5 cm from its target, where float64 and float32 disagree. The original read every
object position as float32 (``np.float32(pose[0])``) and ran under Python 3.8, hence NumPy 1,
whose promotion rules we spell out with explicit dtypes instead of inheriting today's NumPy 2:
two object positions give a float32 difference; an object against a named place (a tuple of
Python floats) or a target built from Python floats gives float64; a float32 distance compared
with the Python threshold is compared in float64, except UI_5's diagonal test, an array against
a Python scalar, which NumPy 1 compared in float32. The original pinned NumPy 1.22.4; its own
tester, run under those pins on PyBullet bodies (``tests/tasks/tabletop/seed_differential.py``),
agrees with us on every table tried. Run under NumPy 2 it scores exact ties differently (a
float32 distance against 0.05 is then compared in float32): that is not the original's scoring.

Checks read only snapshots (``Table.snapshot()`` JSON) and the record's configs, so a scorer
never needs the world that produced the state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolbench.tasks.tabletop.templates import DIRECTION_XY, MAGNITUDES, NTH
from toolbench.tasks.tabletop.world import BLOCK_REST_Z, BLOCK_SIZE, CORNERS, PLACES

THRESHOLD = 0.05
HEIGHT_TOLERANCE = 0.01  # a tower's blocks sit at 0.02, 0.06, 0.10 ... within this
# The original's tester took its side points in its place table's order, which breaks ties
# in the nearest-side search differently from get_side_name's order.
TESTER_SIDES = ("top side", "left side", "right side", "bottom side")

Positions = dict[str, np.ndarray]  # name -> float32 [x, y, z], as the original read poses


@dataclass(frozen=True)
class CheckResult:
    success: bool
    strict_success: bool
    notes: list[str] = field(default_factory=list)


def _norm(vector: np.ndarray) -> float:
    """The vector's length in its own dtype (``np.linalg.norm``, as the original), as a float:
    NumPy 1 compared a float32 scalar with a Python float in float64, and so do we."""
    return float(np.linalg.norm(vector))


def _place3(place: str) -> np.ndarray:
    """A named place as the original's tuple (x, y, 0) of Python floats, i.e. float64."""
    x, y = PLACES[place]
    return np.array([x, y, 0.0], dtype=np.float64)


@dataclass(frozen=True)
class _Case:
    """What a rule looks at: the record's variables and scene, and one table state."""

    vars: Mapping[str, Any]
    blocks: list[str]
    bowls: list[str]
    pos: Positions

    def between(self, a: str, b: str) -> float:
        """``xy`` distance between two objects: float32 minus float32, float32 throughout."""
        return _norm(self.pos[a][:2] - self.pos[b][:2])

    def to_point(self, name: str, point: Sequence[float]) -> float:
        """``xy`` distance to a point given as Python floats: float32 minus float64 is float64."""
        return _norm(self.pos[name][:2] - np.asarray(point[:2], dtype=np.float64))

    def nearest(self, name: str, places: Sequence[str]) -> str:
        """The place nearest to an object in 3-D (places at z 0, float64), first on ties, as
        the original's ``argmin`` over its place list."""
        table = np.array([_place3(p) for p in places])
        return places[int(np.argmin(np.linalg.norm(table - self.pos[name], axis=1)))]


def positions(snapshot: Mapping[str, Any]) -> Positions:
    """Each object's float32 (x, y, z) by name, from a snapshot, as the original's
    ``get_obj_pos`` read them."""
    out: Positions = {}
    for obj in snapshot["objects"]:
        out[str(obj["name"])] = np.array([float(v) for v in obj["pos"]], dtype=np.float32)
    return out


def _stacked(case: _Case) -> bool:
    """One tower: the blocks' heights are 0.02, 0.06, 0.10 ... (one block per level)."""
    heights = sorted(float(case.pos[b][2]) for b in case.blocks)
    return all(
        abs(z - (BLOCK_REST_Z + i * BLOCK_SIZE)) < HEIGHT_TOLERANCE for i, z in enumerate(heights)
    )


def _all_near_place(case: _Case, place: str) -> bool:
    return all(case.to_point(b, PLACES[place]) <= THRESHOLD for b in case.blocks)


def _spread(values: np.ndarray) -> float:
    """``max - min`` of float32 coordinates: a float32 difference, compared in float64."""
    return float(values.max() - values.min())


def _distinct_nearest(case: _Case, places: tuple[str, ...]) -> bool:
    """UI_0/UI_6: each block within reach of its nearest place, and as many different places
    as there are blocks (the original's ``len(set(used)) == len(blocks)``)."""
    used = set()
    for block in case.blocks:
        nearest = case.nearest(block, places)
        if case.to_point(block, PLACES[nearest]) > THRESHOLD:
            return False
        used.add(nearest)
    return len(used) == len(case.blocks)


def _si_0(case: _Case, strict: bool) -> bool:
    block, other = case.vars["block"], case.vars["object1"]
    near = case.between(block, other) < THRESHOLD
    return near and bool(case.pos[block][2] > case.pos[other][2])


def _si_1(case: _Case, strict: bool) -> bool:
    xs = np.array([case.pos[b][0] for b in case.blocks], dtype=np.float32)
    ys = np.array([case.pos[b][1] for b in case.blocks], dtype=np.float32)
    together = _spread(xs) < THRESHOLD and _spread(ys) < THRESHOLD
    return together and (not strict or _stacked(case))


def _si_2(case: _Case, strict: bool) -> bool:
    return _all_near_place(case, case.vars["corner_or_side"])


def _si_3(case: _Case, strict: bool) -> bool:
    return all(case.between(b, case.vars["bowl"]) <= THRESHOLD for b in case.blocks)


def _si_4(case: _Case, strict: bool) -> bool:
    for block in case.blocks:
        bowl = block.replace("block", "bowl")
        if bowl in case.bowls and case.between(block, bowl) > THRESHOLD:
            return False
    return True


def _si_5(case: _Case, strict: bool) -> bool:
    targets = list(case.vars["target_blocks"])
    place = PLACES[case.vars["corner_or_side"]]
    for block in case.blocks:
        if block in targets:
            far = case.to_point(block, place) > THRESHOLD
        else:  # the original cast the stored initial xy to float32: a float32 difference
            initial = np.array([float(v) for v in case.vars[f"{block}_initial_pos"][:2]])
            far = _norm(initial.astype(np.float32) - case.pos[block][:2]) > THRESHOLD
        if far:
            return False
    return True


def _target_on_place(case: _Case, strict: bool) -> bool:
    """SI_6 and SI_7: the stored target block ends on the named place."""
    place = PLACES[case.vars["corner_or_side"]]
    return case.to_point(case.vars["target_block"], place) < THRESHOLD


def _ui_0(case: _Case, strict: bool) -> bool:
    return _distinct_nearest(case, CORNERS)


def _ui_1(case: _Case, strict: bool) -> bool:
    """Each block on its nearest bowl (3-D float32 search, as the original), bowls distinct."""
    used = set()
    bowls = np.array([case.pos[b] for b in case.bowls], dtype=np.float32).reshape(-1, 3)
    for block in case.blocks:
        bowl = case.bowls[int(np.argmin(np.linalg.norm(bowls - case.pos[block], axis=1)))]
        if case.between(block, bowl) > THRESHOLD:
            return False
        if strict and _color(block) == _color(bowl):
            return False
        used.add(bowl)
    return len(used) == len(case.blocks)


def _ui_2(case: _Case, strict: bool) -> bool:
    return _si_2(case, strict) and (not strict or _stacked(case))


def _ui_3(case: _Case, strict: bool) -> bool:
    """The bowl's float32 xy shifted by a Python float: NumPy 1 made that float64."""
    dx, dy = DIRECTION_XY[case.vars["direction"]]
    magnitude = MAGNITUDES[case.vars["magnitude"]]
    bx, by = (float(v) for v in case.pos[case.vars["bowl"]][:2])
    return case.to_point(case.vars["block"], (bx + dx * magnitude, by + dy * magnitude)) < THRESHOLD


def corner_for(bowl: Sequence[float] | np.ndarray, distance: str) -> str:
    """The inset corner closest or farthest to a bowl (UI_4), first on ties as the original's
    ``argmin``/``argmax``; ``bowl`` is (x, y) or (x, y, z) with z taken as 0 when absent."""
    point = np.zeros(3, dtype=np.float64)
    point[: len(bowl)] = [float(v) for v in bowl]
    dists = np.linalg.norm(np.array([_place3(c) for c in CORNERS]) - point, axis=1)
    pick = np.argmin if distance == "closest" else np.argmax
    return CORNERS[int(pick(dists))]


def _ui_4(case: _Case, strict: bool) -> bool:
    corner = corner_for(case.pos[case.vars["bowl"]], case.vars["distance"])
    return case.to_point(case.vars["block"], PLACES[corner]) < THRESHOLD


def _ui_5(case: _Case, strict: bool) -> bool:
    xs = np.array([case.pos[b][0] for b in case.blocks], dtype=np.float32)
    ys = np.array([case.pos[b][1] for b in case.blocks], dtype=np.float32)
    line = case.vars["line"]
    if line == "vertical":
        ok = _spread(xs) < THRESHOLD
    elif line == "horizontal":
        ok = _spread(ys) < THRESHOLD
    else:  # float32 arrays against Python scalars: NumPy 1 stayed in float32
        half, limit = np.float32(0.5), np.float32(THRESHOLD)
        sign: Callable[[np.ndarray], np.ndarray] = np.abs if strict else np.asarray
        ok = bool(np.all(sign(xs - ys - half) < limit) or np.all(sign(xs + ys + half) < limit))
    return ok and (not strict or _spread_out(case))


def _spread_out(case: _Case) -> bool:
    """A line, not a tower: every block stands on the table, no two footprints overlap."""
    if any(abs(float(case.pos[b][2]) - BLOCK_REST_Z) >= HEIGHT_TOLERANCE for b in case.blocks):
        return False
    for i, a in enumerate(case.blocks):
        for b in case.blocks[i + 1 :]:
            pa, pb = case.pos[a], case.pos[b]
            if abs(float(pa[0] - pb[0])) < BLOCK_SIZE and abs(float(pa[1] - pb[1])) < BLOCK_SIZE:
                return False
    return True


def _ui_6(case: _Case, strict: bool) -> bool:
    return _distinct_nearest(case, TESTER_SIDES)


def _color(name: str) -> str:
    return name.split(" ")[0]


RULES: dict[str, Callable[[_Case, bool], bool]] = {
    "SI_0": _si_0,
    "SI_1": _si_1,
    "SI_2": _si_2,
    "SI_3": _si_3,
    "SI_4": _si_4,
    "SI_5": _si_5,
    "SI_6": _target_on_place,
    "SI_7": _target_on_place,
    "UI_0": _ui_0,
    "UI_1": _ui_1,
    "UI_2": _ui_2,
    "UI_3": _ui_3,
    "UI_4": _ui_4,
    "UI_5": _ui_5,
    "UI_6": _ui_6,
}


def _case(configs: Mapping[str, Any], snapshot: Mapping[str, Any]) -> _Case:
    return _Case(
        vars=configs["instruction_vars_dict"],
        blocks=list(configs["block_list"]),
        bowls=list(configs["bowl_list"]),
        pos=positions(snapshot),
    )


def holds(
    tester_id: str, configs: Mapping[str, Any], snapshot: Mapping[str, Any], strict: bool
) -> bool:
    """One rule on one state (the test suite and the generator use it directly)."""
    return RULES[tester_id](_case(configs, snapshot), strict)


def derive_targets(
    tester_id: str, variables: Mapping[str, Any], snapshot: Mapping[str, Any]
) -> dict[str, Any]:
    """SI_5/SI_6/SI_7's stored targets, computed on an initial table as the original's tester
    did when it wrote the record, on float32 positions (empty for the other templates)."""
    pos = positions(snapshot)
    blocks = [str(o["name"]) for o in snapshot["objects"] if o["kind"] == "block"]
    if tester_id == "SI_5":
        bowl_x, bowl_y = pos[variables["bowl"]][:2]
        strictly_on_side: dict[str, Callable[[np.ndarray], bool]] = {
            "top": lambda p: bool(p[1] > bowl_y),
            "bottom": lambda p: bool(p[1] < bowl_y),
            "left": lambda p: bool(p[0] < bowl_x),
            "right": lambda p: bool(p[0] > bowl_x),
        }
        on_side = strictly_on_side[variables["direction"]]
        out: dict[str, Any] = {"target_blocks": [b for b in blocks if on_side(pos[b])]}
        raw = {str(o["name"]): o["pos"] for o in snapshot["objects"]}
        out.update({f"{b}_initial_pos": [round(float(v), 6) for v in raw[b]] for b in blocks})
        return out
    points = np.array([pos[b] for b in blocks], dtype=np.float32).reshape(-1, 3)
    if tester_id == "SI_6":
        dists = np.linalg.norm(points - pos[variables["bowl"]], axis=1)
        pick = np.argmin if variables["distance"] == "closest" else np.argmax
        return {"target_block": blocks[int(pick(dists))]}
    if tester_id == "SI_7":
        axis = 0 if variables["direction"] in ("left", "right") else 1
        order = np.argsort(points[:, axis], kind="stable")  # ascending
        nth = NTH.index(variables["nth"])
        index = nth if variables["direction"] in ("left", "bottom") else len(blocks) - 1 - nth
        return {"target_block": blocks[int(order[index])]}
    return {}


def _target_notes(
    tester_id: str, configs: Mapping[str, Any], initial: Mapping[str, Any]
) -> list[str]:
    """Stored targets that the initial table does not bear out (e.g. the original's, taken
    from PyBullet's settled scene): scored with the stored ones, as the original, but said."""
    stored = configs["instruction_vars_dict"]
    notes = []
    for key, value in derive_targets(tester_id, stored, initial).items():
        # the original listed SI_5's targets in sorted-coordinate order; only membership counts
        if key == "target_blocks" and _as_set(stored.get(key)) == frozenset(value):
            continue
        if key in ("target_block", "target_blocks") and stored.get(key) != value:
            notes.append(
                f"stored {key} {stored.get(key)!r} differs from the initial table's {value!r}"
            )
    return notes


def check(
    tester_id: str,
    configs: Mapping[str, Any],
    initial_snapshot: Mapping[str, Any],
    final_snapshot: Mapping[str, Any],
) -> CheckResult:
    """Score a final table. A rule that cannot be evaluated (an object missing from the state,
    a variable missing from the record) is a failure with a note, never an exception."""
    if tester_id not in RULES:
        return CheckResult(False, False, [f"unknown tester_id {tester_id!r}"])
    notes: list[str] = []
    try:
        success = holds(tester_id, configs, final_snapshot, strict=False)
        strict = holds(tester_id, configs, final_snapshot, strict=True)
        trivial = holds(tester_id, configs, initial_snapshot, strict=True)
        notes += _target_notes(tester_id, configs, initial_snapshot)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        return CheckResult(False, False, [f"check could not run: {type(exc).__name__}: {exc}"])
    if trivial:
        notes.append("the check already holds on the initial table: an empty program passes")
        strict = False
    if success and not strict and not trivial:
        notes.append("passes the original check but not the strict one")
    return CheckResult(success, strict, notes)


def _as_set(value: Any) -> frozenset[str] | None:
    """A stored list of block names as a set (None when it is not a list of names)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return None
