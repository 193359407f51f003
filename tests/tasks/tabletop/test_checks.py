"""The 15 checks on hand-built tables: for each template a final state that passes, other
ways of doing it right that must pass too, wrong answers that must fail (6 cm off, the wrong
colour, the wrong stacking order, the wrong block), and the original's quirks, which pass the
check as written but not the strict one."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from toolbench.tasks.tabletop.checks import THRESHOLD, check
from toolbench.tasks.tabletop.world import PLACES, Table

BLOCKS = {
    "red block": (-0.15, -0.4),
    "green block": (0.15, -0.4),
    "blue block": (-0.15, -0.65),
    "yellow block": (0.15, -0.65),
}
BOWLS = {
    "red bowl": (0.0, -0.3),
    "green bowl": (0.0, -0.72),
    "blue bowl": (-0.2, -0.52),
    "yellow bowl": (0.2, -0.52),
}
Z0, Z1, Z2, Z3 = 0.02, 0.06, 0.10, 0.14
Pos = tuple[float, ...]


def configs(variables: dict[str, Any], blocks: dict[str, Pos] | None = None,
            bowls: dict[str, Pos] | None = None) -> dict[str, Any]:  # fmt: skip
    blocks = BLOCKS if blocks is None else blocks
    bowls = BOWLS if bowls is None else bowls
    return {
        "block_list": list(blocks),
        "bowl_list": list(bowls),
        "position_dict": {
            "block_pos": [[p[0], p[1], 0.03] for p in blocks.values()],
            "bowl_pos": [[p[0], p[1], 0.0] for p in bowls.values()],
        },
        "instruction": "(hand-built)",
        "instruction_vars_dict": variables,
    }


def state(cfg: dict[str, Any], moved: dict[str, Pos]) -> dict[str, Any]:
    """The initial table with some blocks moved to (x, y) (resting) or (x, y, z)."""
    snap = Table(cfg).snapshot()
    for obj in snap["objects"]:
        if obj["name"] in moved:
            p = moved[obj["name"]]
            obj["pos"] = [p[0], p[1], p[2] if len(p) == 3 else Z0]
    return snap


def at(place: str, z: float = Z0, dx: float = 0.0, dy: float = 0.0) -> Pos:
    x, y = PLACES[place]
    return (x + dx, y + dy, z)


def on(bowl: str, z: float = Z0) -> Pos:
    x, y = BOWLS[bowl]
    return (x, y, z)


SHIFTS = ((0.06, 0.0), (-0.06, 0.0), (0.0, 0.06), (0.0, -0.06))


@dataclass
class Case:
    tid: str
    variables: dict[str, Any]
    good: dict[str, Pos]  # the state that passes both checks
    key: str  # a block whose 6 cm shift must fail
    rewrites: list[dict[str, Pos]] = field(default_factory=list)  # must pass both
    wrong: list[dict[str, Pos]] = field(default_factory=list)  # must fail both
    quirks: list[dict[str, Pos]] = field(default_factory=list)  # pass as written, not strict
    shifts: tuple[tuple[float, float], ...] = SHIFTS
    blocks: dict[str, Pos] | None = None
    bowls: dict[str, Pos] | None = None


def _tower(place: Pos, names: list[str]) -> dict[str, Pos]:
    return {n: (place[0], place[1], Z0 + 0.04 * i) for i, n in enumerate(names)}


ALL = list(BLOCKS)
INITIAL = {name: [x, y, Z0] for name, (x, y) in BLOCKS.items()}
CORNER_NAMES = ["top left corner", "top right corner", "bottom left corner", "bottom right corner"]
SIDE_NAMES = ["top side", "right side", "bottom side", "left side"]
LINE3 = {"red block": (-0.15, -0.4), "green block": (0.15, -0.4), "blue block": (0.0, -0.65)}

CASES = [
    Case("SI_0", {"block": "red block", "object1": "yellow bowl"},
         {"red block": on("yellow bowl")}, "red block",
         rewrites=[{"red block": (0.22, -0.5, Z0)}]),
    Case("SI_0", {"block": "red block", "object1": "green block"},
         {"red block": (0.15, -0.4, Z1)}, "red block",
         wrong=[{"green block": (-0.15, -0.4, Z1)}]),  # wrong stacking order: green on red
    Case("SI_1", {}, _tower((0.1, -0.5), ALL), "yellow block",
         rewrites=[_tower((0.1, -0.5), ALL[::-1]), _tower((-0.15, -0.4), ALL)],
         quirks=[{n: (0.1 + 0.01 * i, -0.5, Z0) for i, n in enumerate(ALL)}]),  # no tower
    Case("SI_2", {"corner_or_side": "top left corner"},
         _tower(at("top left corner"), ALL), "red block",
         rewrites=[{n: at("top left corner", dx=0.03 * (i % 2), dy=-0.03 * (i // 2))
                    for i, n in enumerate(ALL)}]),
    Case("SI_3", {"bowl": "blue bowl"}, _tower(on("blue bowl"), ALL), "green block",
         wrong=[_tower(on("blue bowl"), ALL[:3])]),
    Case("SI_4", {}, {n: on(n.replace("block", "bowl")) for n in ALL}, "blue block",
         wrong=[{"red block": on("green bowl"), "green block": on("red bowl"),
                 "blue block": on("blue bowl"), "yellow block": on("yellow bowl")}]),
    Case("SI_5", {"direction": "left", "bowl": "red bowl", "corner_or_side": "right side",
                  "target_blocks": ["red block", "blue block"],
                  **{f"{n}_initial_pos": p for n, p in INITIAL.items()}},
         _tower(at("right side"), ["red block", "blue block"]), "blue block",
         wrong=[{**_tower(at("right side"), ["red block", "blue block", "green block"])},
                {"red block": at("right side")}]),
    Case("SI_6", {"distance": "closest", "bowl": "yellow bowl", "corner_or_side": "bottom side",
                  "target_block": "yellow block"},
         {"yellow block": at("bottom side")}, "yellow block",
         wrong=[{"green block": at("bottom side")}]),  # the wrong block
    Case("SI_7", {"nth": "second", "direction": "top", "corner_or_side": "left side",
                  "target_block": "green block"},
         {"green block": at("left side")}, "green block",
         wrong=[{"blue block": at("left side")}]),
    Case("UI_0", {}, {n: at(c) for n, c in zip(ALL, CORNER_NAMES, strict=True)}, "green block",
         rewrites=[{n: at(c) for n, c in zip(ALL, CORNER_NAMES[::-1], strict=True)}],
         wrong=[{**{n: at(c) for n, c in zip(ALL, CORNER_NAMES, strict=True)},
                 "yellow block": at("top left corner", Z1)}]),  # two in one corner
    Case("UI_1", {},
         {"red block": on("green bowl"), "green block": on("red bowl"),
          "blue block": on("yellow bowl"), "yellow block": on("blue bowl")}, "red block",
         wrong=[{"red block": on("green bowl"), "green block": on("green bowl", Z1),
                 "blue block": on("yellow bowl"), "yellow block": on("blue bowl")}],
         quirks=[{n: on(n.replace("block", "bowl")) for n in ALL}]),  # colours match
    Case("UI_2", {"corner_or_side": "left side"}, _tower(at("left side"), ALL), "red block",
         quirks=[{n: at("left side", dx=0.01 * i) for i, n in enumerate(ALL)}]),  # no tower
    Case("UI_3", {"block": "red block", "magnitude": "10 cm", "direction": "top",
                  "bowl": "blue bowl"},
         {"red block": (-0.2, -0.42, Z0)}, "red block",
         rewrites=[{"red block": (-0.17, -0.44, Z0)}],
         wrong=[{"red block": (-0.2, -0.62, Z0)}, {"red block": (-0.2, -0.32, Z0)}]),
    Case("UI_4", {"block": "red block", "distance": "farthest", "bowl": "blue bowl"},
         {"red block": at("top right corner")}, "red block",
         wrong=[{"red block": at("bottom left corner")}, {"red block": at("bottom right corner")}]),
    Case("UI_5", {"line": "vertical"},
         {"red block": (0.0, -0.6, Z0), "green block": (0.0, -0.5, Z0),
          "blue block": (0.02, -0.35, Z0)}, "green block", shifts=((0.06, 0.0), (-0.06, 0.0)),
         wrong=[{"red block": (-0.1, -0.5, Z0), "green block": (0.0, -0.5, Z0),
                 "blue block": (0.1, -0.5, Z0)}],  # horizontal
         quirks=[_tower((0.0, -0.5), ["red block", "green block", "blue block"])],
         blocks=LINE3, bowls={}),
    Case("UI_5", {"line": "diagonal"},
         {"red block": (-0.1, -0.6, Z0), "green block": (0.0, -0.5, Z0),
          "blue block": (0.1, -0.4, Z0)}, "green block", shifts=((0.06, 0.0), (0.0, -0.06)),
         rewrites=[{"red block": (-0.1, -0.4, Z0), "green block": (0.0, -0.5, Z0),
                    "blue block": (0.1, -0.6, Z0)}],  # the other diagonal
         quirks=[{"red block": (-0.2, -0.3, Z0), "green block": (0.0, -0.3, Z0),
                  "blue block": (-0.1, -0.45, Z0)}],  # signed test: far off any diagonal
         blocks=LINE3, bowls={}),
    Case("UI_6", {}, {n: at(s) for n, s in zip(ALL, SIDE_NAMES, strict=True)}, "blue block",
         wrong=[{**{n: at(s) for n, s in zip(ALL, SIDE_NAMES, strict=True)},
                 "yellow block": at("right side", Z1)}]),
]  # fmt: skip


def _ids(case: Case) -> str:
    return f"{case.tid}-{next(iter(case.variables.values()), '')}"


def _judge(case: Case, moved: dict[str, Pos]) -> tuple[bool, bool, list[str]]:
    cfg = configs(case.variables, case.blocks, case.bowls)
    result = check(case.tid, cfg, state(cfg, {}), state(cfg, moved))
    return result.success, result.strict_success, result.notes


def test_every_template_has_a_case() -> None:
    assert {c.tid for c in CASES} == {f"SI_{i}" for i in range(8)} | {f"UI_{i}" for i in range(7)}


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_the_right_state_and_its_rewrites_pass(case: Case) -> None:
    for moved in [case.good, *case.rewrites]:
        assert _judge(case, moved)[:2] == (True, True), moved


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_the_initial_state_and_wrong_answers_fail(case: Case) -> None:
    assert _judge(case, {})[:2] == (False, False)
    for moved in case.wrong:
        assert _judge(case, moved)[:2] == (False, False), moved


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_six_cm_off_fails(case: Case) -> None:
    x, y, z = case.good[case.key]
    for dx, dy in case.shifts:
        moved = {**case.good, case.key: (x + dx, y + dy, z)}
        assert _judge(case, moved)[:2] == (False, False), (dx, dy)
    # and 4 cm off (inside the 5 cm threshold) still passes the check as written
    near = {**case.good, case.key: (x + 0.04 * (case.shifts[0][0] > 0), y, z)}
    assert _judge(case, near)[0] is True


@pytest.mark.parametrize("case", [c for c in CASES if c.quirks], ids=_ids)
def test_quirks_pass_as_written_but_not_strict(case: Case) -> None:
    for moved in case.quirks:
        success, strict, notes = _judge(case, moved)
        assert (success, strict) == (True, False), moved
        assert "not the strict one" in notes[0]


def test_samples_passing_with_an_empty_program_are_flagged() -> None:
    # SI_4 without a same-colour pair, SI_5 without a target block: true on the initial table
    cfg = configs({}, bowls={"purple bowl": (0.0, -0.3), "gray bowl": (0.0, -0.72)})
    result = check("SI_4", cfg, state(cfg, {}), state(cfg, {}))
    assert result.success and not result.strict_success
    assert "initial table" in result.notes[0]
    initial = {f"{n}_initial_pos": p for n, p in INITIAL.items()}
    variables = {"direction": "top", "bowl": "red bowl", "corner_or_side": "left side",
                 "target_blocks": [], **initial}  # fmt: skip
    cfg = configs(variables)
    result = check("SI_5", cfg, state(cfg, {}), state(cfg, {}))
    assert (result.success, result.strict_success) == (True, False)
    # the diagonal quirk: three blocks that already pass the signed test
    cfg = configs({"line": "diagonal"}, blocks=dict(CASES[-2].quirks[0]), bowls={})
    result = check("UI_5", cfg, state(cfg, {}), state(cfg, {}))
    assert (result.success, result.strict_success) == (True, False)


def test_threshold_edges_follow_the_original() -> None:
    """SI_2 uses <= 0.05, SI_6 uses < 0.05, on float32 positions as the original read them:
    a block 5 cm right of the top side sits at float32(0.05) = 0.0500000007, out of both
    (test_check_ties.py pins the exact ties)."""
    x, y = PLACES["top side"]
    cfg = configs({"corner_or_side": "top side"}, blocks={"red block": (0.0, -0.5)}, bowls={})
    final = state(cfg, {"red block": (x + THRESHOLD, y)})
    assert not check("SI_2", cfg, state(cfg, {}), final).success
    final = state(cfg, {"red block": (x + 0.0499, y)})
    assert check("SI_2", cfg, state(cfg, {}), final).success
    variables = {"distance": "closest", "bowl": "red bowl", "corner_or_side": "top side",
                 "target_block": "red block"}  # fmt: skip
    cfg = configs(variables)
    final = state(cfg, {"red block": (x + THRESHOLD, y)})
    assert not check("SI_6", cfg, state(cfg, {}), final).success
    final = state(cfg, {"red block": (x + 0.0499, y)})
    assert check("SI_6", cfg, state(cfg, {}), final).success


def test_broken_inputs_are_failures_with_a_note_not_exceptions() -> None:
    cfg = configs({"block": "red block"})  # object1 missing
    result = check("SI_0", cfg, state(cfg, {}), state(cfg, {}))
    assert not result.success and "could not run" in result.notes[0]
    assert not check("XX_9", cfg, state(cfg, {}), state(cfg, {})).success
    final = copy.deepcopy(state(cfg, {}))
    final["objects"] = final["objects"][1:]  # an object vanished
    cfg = configs({"block": "red block", "object1": "blue bowl"})
    assert not check("SI_0", cfg, state(cfg, {}), final).success


def test_stored_targets_are_used_as_written_and_disagreements_noted() -> None:
    """The original scored SI_6/SI_7 against the target stored at generation time (from
    PyBullet's settled scene); we do too, and say when the initial table disagrees."""
    # the red block is the closest to the blue bowl; the record says the blue block
    variables = {"distance": "closest", "bowl": "blue bowl", "corner_or_side": "bottom side"}
    cfg = configs({**variables, "target_block": "blue block"})
    result = check("SI_6", cfg, state(cfg, {}), state(cfg, {"blue block": at("bottom side")}))
    assert result.success and result.strict_success
    assert "'blue block' differs from the initial table's 'red block'" in result.notes[0]
    cfg = configs({**variables, "target_block": "red block"})
    final = state(cfg, {"red block": at("bottom side")})
    assert check("SI_6", cfg, state(cfg, {}), final).notes == []
