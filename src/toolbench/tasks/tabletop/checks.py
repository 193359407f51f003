"""The 15 success checks, exactly as the original tester wrote them, and a corrected variant.

``success`` reproduces the original's rules with their quirks (the 0.05 m threshold on xy,
``<`` in some templates and ``<=`` in others, the signed diagonal test, colours ignored for
"mismatched" bowls, stack height never looked at), because scores must stay comparable with
the original's. ``strict_success`` is ours: the diagonal test takes the absolute value, the
mismatched-bowls template checks the colours, stacking templates check that the blocks form
one tower (and line templates that they do not), and a sample whose check already holds on
the initial table is flagged and never counts, because an empty program would pass it.

Checks read only snapshots (``Table.snapshot()`` JSON) and the record's configs, so a scorer
never needs the world that produced the state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbench.tasks.tabletop.templates import DIRECTION_XY, MAGNITUDES, NTH
from toolbench.tasks.tabletop.world import BLOCK_REST_Z, BLOCK_SIZE, CORNERS, PLACES, SIDES

THRESHOLD = 0.05
HEIGHT_TOLERANCE = 0.01  # a tower's blocks sit at 0.02, 0.06, 0.10 ... within this

Positions = dict[str, tuple[float, float, float]]


@dataclass(frozen=True)
class CheckResult:
    success: bool
    strict_success: bool
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Case:
    """What a rule looks at: the record's variables and scene, and one table state."""

    vars: Mapping[str, Any]
    blocks: list[str]
    bowls: list[str]
    pos: Positions

    def xy_dist(self, name: str, target: tuple[float, float]) -> float:
        p = self.pos[name]
        return math.hypot(p[0] - target[0], p[1] - target[1])

    def xy(self, name: str) -> tuple[float, float]:
        p = self.pos[name]
        return p[0], p[1]


def positions(snapshot: Mapping[str, Any]) -> Positions:
    """name -> (x, y, z) from a snapshot."""
    out: Positions = {}
    for obj in snapshot["objects"]:
        x, y, z = (float(v) for v in obj["pos"])
        out[str(obj["name"])] = (x, y, z)
    return out


def _stacked(case: _Case) -> bool:
    """One tower: the blocks' heights are 0.02, 0.06, 0.10 ... (one block per level)."""
    heights = sorted(case.pos[b][2] for b in case.blocks)
    return all(
        abs(z - (BLOCK_REST_Z + i * BLOCK_SIZE)) < HEIGHT_TOLERANCE for i, z in enumerate(heights)
    )


def _all_near_place(case: _Case, place: str) -> bool:
    return all(case.xy_dist(b, PLACES[place]) <= THRESHOLD for b in case.blocks)


def _distinct_nearest(case: _Case, places: tuple[str, ...]) -> bool:
    """UI_0/UI_6: each block within reach of its nearest place, all places different."""
    used = set()
    for block in case.blocks:
        nearest = min(places, key=lambda p: case.xy_dist(block, PLACES[p]))
        if case.xy_dist(block, PLACES[nearest]) > THRESHOLD:
            return False
        used.add(nearest)
    return len(used) == 4


def _si_0(case: _Case, strict: bool) -> bool:
    block, other = case.vars["block"], case.vars["object1"]
    near = case.xy_dist(block, case.xy(other)) < THRESHOLD
    return near and case.pos[block][2] > case.pos[other][2]


def _si_1(case: _Case, strict: bool) -> bool:
    xs = [case.pos[b][0] for b in case.blocks]
    ys = [case.pos[b][1] for b in case.blocks]
    together = max(xs) - min(xs) < THRESHOLD and max(ys) - min(ys) < THRESHOLD
    return together and (not strict or _stacked(case))


def _si_2(case: _Case, strict: bool) -> bool:
    return _all_near_place(case, case.vars["corner_or_side"])


def _si_3(case: _Case, strict: bool) -> bool:
    bowl = case.xy(case.vars["bowl"])
    return all(case.xy_dist(b, bowl) <= THRESHOLD for b in case.blocks)


def _si_4(case: _Case, strict: bool) -> bool:
    for block in case.blocks:
        bowl = block.replace("block", "bowl")
        if bowl in case.bowls and case.xy_dist(block, case.xy(bowl)) > THRESHOLD:
            return False
    return True


def _si_5(case: _Case, strict: bool) -> bool:
    targets = list(case.vars["target_blocks"])
    place = PLACES[case.vars["corner_or_side"]]
    for block in case.blocks:
        if block in targets:
            goal = place
        else:
            initial = case.vars[f"{block}_initial_pos"]
            goal = (float(initial[0]), float(initial[1]))
        if case.xy_dist(block, goal) > THRESHOLD:
            return False
    return True


def _target_on_place(case: _Case, strict: bool) -> bool:
    """SI_6 and SI_7: the stored target block ends on the named place."""
    return case.xy_dist(case.vars["target_block"], PLACES[case.vars["corner_or_side"]]) < THRESHOLD


def _ui_0(case: _Case, strict: bool) -> bool:
    return _distinct_nearest(case, CORNERS)


def _ui_1(case: _Case, strict: bool) -> bool:
    used = set()
    for block in case.blocks:
        bowl = min(case.bowls, key=lambda b: case.xy_dist(block, case.xy(b)))
        if case.xy_dist(block, case.xy(bowl)) > THRESHOLD:
            return False
        if strict and _color(block) == _color(bowl):
            return False
        used.add(bowl)
    return len(used) == len(case.blocks)


def _ui_2(case: _Case, strict: bool) -> bool:
    return _si_2(case, strict) and (not strict or _stacked(case))


def _ui_3(case: _Case, strict: bool) -> bool:
    dx, dy = DIRECTION_XY[case.vars["direction"]]
    magnitude = MAGNITUDES[case.vars["magnitude"]]
    bx, by = case.xy(case.vars["bowl"])
    return case.xy_dist(case.vars["block"], (bx + dx * magnitude, by + dy * magnitude)) < THRESHOLD


def corner_for(bowl_xy: tuple[float, float], distance: str) -> str:
    """The inset corner closest or farthest to a point (UI_4)."""
    pick = min if distance == "closest" else max
    return pick(CORNERS, key=lambda c: math.dist(PLACES[c], bowl_xy))


def _ui_4(case: _Case, strict: bool) -> bool:
    corner = corner_for(case.xy(case.vars["bowl"]), case.vars["distance"])
    return case.xy_dist(case.vars["block"], PLACES[corner]) < THRESHOLD


def _ui_5(case: _Case, strict: bool) -> bool:
    xs = [case.pos[b][0] for b in case.blocks]
    ys = [case.pos[b][1] for b in case.blocks]
    line = case.vars["line"]
    if line == "vertical":
        ok = max(xs) - min(xs) < THRESHOLD
    elif line == "horizontal":
        ok = max(ys) - min(ys) < THRESHOLD
    else:
        sign: Callable[[float], float] = abs if strict else float
        ok = all(sign(x - y - 0.5) < THRESHOLD for x, y in zip(xs, ys, strict=True)) or all(
            sign(x + y + 0.5) < THRESHOLD for x, y in zip(xs, ys, strict=True)
        )
    return ok and (not strict or _spread_out(case))


def _spread_out(case: _Case) -> bool:
    """A line, not a tower: every block stands on the table, no two footprints overlap."""
    if any(abs(case.pos[b][2] - BLOCK_REST_Z) >= HEIGHT_TOLERANCE for b in case.blocks):
        return False
    for i, a in enumerate(case.blocks):
        for b in case.blocks[i + 1 :]:
            pa, pb = case.pos[a], case.pos[b]
            if abs(pa[0] - pb[0]) < BLOCK_SIZE and abs(pa[1] - pb[1]) < BLOCK_SIZE:
                return False
    return True


def _ui_6(case: _Case, strict: bool) -> bool:
    return _distinct_nearest(case, SIDES)


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
    did when it wrote the record (empty for the other templates)."""
    pos = positions(snapshot)
    blocks = [str(o["name"]) for o in snapshot["objects"] if o["kind"] == "block"]
    if tester_id == "SI_5":
        dx, dy = DIRECTION_XY[variables["direction"]]
        bx, by, _ = pos[variables["bowl"]]
        out: dict[str, Any] = {
            "target_blocks": [
                b for b in blocks if (pos[b][0] - bx) * dx + (pos[b][1] - by) * dy > 0
            ]
        }
        out.update({f"{b}_initial_pos": [round(v, 6) for v in pos[b]] for b in blocks})
        return out
    if tester_id == "SI_6":
        bowl = pos[variables["bowl"]]
        pick = min if variables["distance"] == "closest" else max
        return {"target_block": pick(blocks, key=lambda b: math.dist(pos[b], bowl))}
    if tester_id == "SI_7":
        dx, dy = DIRECTION_XY[variables["direction"]]
        order = sorted(blocks, key=lambda b: -(pos[b][0] * dx + pos[b][1] * dy))
        return {"target_block": order[NTH.index(variables["nth"])]}
    return {}


def _target_notes(
    tester_id: str, configs: Mapping[str, Any], initial: Mapping[str, Any]
) -> list[str]:
    """Stored targets that the initial table does not bear out (e.g. the original's, taken
    from PyBullet's settled scene): scored with the stored ones, as the original, but said."""
    stored = configs["instruction_vars_dict"]
    notes = []
    for key, value in derive_targets(tester_id, stored, initial).items():
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
