"""Exact ties decided as the original decided them.

The original read every position as float32 (``np.float32(pose[0])``) and subtracted named
places (tuples of Python floats, so float64) or other float32 positions, under NumPy 1. Our
kinematic table can leave a block exactly 5 cm from its target, where float64 arithmetic
and the original disagree. Each expected verdict below is worked out in the test itself with
the original's arithmetic, next to what float64 would have said."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import read_run
from tests.tasks.tabletop.test_checks import Z0, Z1, Pos, at, configs, state
from toolbench.tasks.tabletop.checks import THRESHOLD, check
from toolbench.tasks.tabletop.world import PLACES

# The original's place table writes the corners as offsets from the table's edges.
BOTTOM_LEFT = (-0.3 + 0.05, -0.8 + 0.05)


def _verdict(
    tid: str,
    variables: dict[str, Any],
    moved: dict[str, Pos],
    blocks: dict[str, Pos] | None = None,
    bowls: dict[str, Pos] | None = None,
) -> bool:
    cfg = configs(variables, blocks, bowls)
    return check(tid, cfg, state(cfg, {}), state(cfg, moved)).success


def test_a_block_on_the_left_edge_is_not_within_5_cm_of_the_bottom_left_corner() -> None:
    block = (-0.3, -0.75)
    # float64 says exactly 5 cm (a hair under, in fact): inside the threshold
    assert math.hypot(block[0] - BOTTOM_LEFT[0], block[1] - BOTTOM_LEFT[1]) <= THRESHOLD
    # the original: float32(-0.3) is -0.300000011920929, so the block is 5.0000012 cm away
    seed = np.linalg.norm(np.float32(block) - np.array(BOTTOM_LEFT))
    assert seed.dtype == np.float64 and float(seed) == pytest.approx(0.0500000119, abs=1e-10)
    assert not float(seed) <= THRESHOLD
    # so "put all the blocks on the bottom left corner" (<=) and SI_6's "place it" (<) fail
    assert not _verdict("SI_2", {"corner_or_side": "bottom left corner"}, {"red block": block})
    variables = {"distance": "closest", "bowl": "red bowl",
                 "corner_or_side": "bottom left corner", "target_block": "red block"}  # fmt: skip
    assert not _verdict("SI_6", variables, {"red block": block})
    # 5 cm on the corner's other side, float32(-0.2) is -0.200000003: 4.9999997 cm, inside
    other = (-0.2, -0.75)
    assert float(np.linalg.norm(np.float32(other) - np.array(BOTTOM_LEFT))) < THRESHOLD
    assert _verdict("SI_6", variables, {"red block": other})


def test_a_block_5_cm_above_another_in_y_is_on_it_for_si_0() -> None:
    top, below = (-0.044, -0.525), (-0.044, -0.475)
    # float64: 5.000000000000004 cm, outside the threshold
    assert math.hypot(top[0] - below[0], top[1] - below[1]) > THRESHOLD
    # the original subtracts two float32 positions: 4.9999982 cm, inside
    seed = np.linalg.norm(np.float32(top) - np.float32(below))
    assert seed.dtype == np.float32 and float(seed) < THRESHOLD
    blocks = {"red block": (0.15, -0.4), "green block": below}
    variables = {"block": "red block", "object1": "green block"}
    assert _verdict("SI_0", variables, {"red block": (*top, Z1)}, blocks=blocks)
    # still not when the block is beside it rather than higher (the original's second test)
    assert not _verdict("SI_0", variables, {"red block": (*top, Z0)}, blocks=blocks)


THREE = {"red block": (-0.15, -0.4), "green block": (0.15, -0.4), "blue block": (0.0, -0.65)}
CORNERS3 = ["top left corner", "bottom right corner", "bottom left corner"]


def test_ui_0_needs_as_many_corners_as_blocks_not_four() -> None:
    bowls = {"red bowl": (0.0, -0.3)}
    spread = {n: at(c) for n, c in zip(THREE, CORNERS3, strict=True)}
    cfg = configs({}, THREE, bowls)
    result = check("UI_0", cfg, state(cfg, {}), state(cfg, spread))
    assert (result.success, result.strict_success) == (True, True)
    # three blocks in two corners: two share the top left one
    crowded = {**spread, "blue block": at("top left corner", Z1)}
    assert not _verdict("UI_0", {}, crowded, THREE, bowls)


def test_ui_6_needs_as_many_sides_as_blocks() -> None:
    bowls = {"red bowl": (0.0, -0.3)}
    sides = {n: at(s) for n, s in zip(THREE, ["top side", "left side", "bottom side"], strict=True)}
    assert _verdict("UI_6", {}, sides, THREE, bowls)
    assert not _verdict("UI_6", {}, {**sides, "blue block": at("left side", Z1)}, THREE, bowls)


def _seed_to_place(block: tuple[float, float], place: tuple[float, float]) -> float:
    """The original's block-to-place distance: float32 position minus a tuple of floats."""
    return float(np.linalg.norm(np.float32(block) - np.array(place)))


def test_exact_5_cm_probes_agree_with_float32_and_often_not_with_float64() -> None:
    """Blocks put exactly 5 cm (straight or 3-4-5) from a named place, as our table can."""
    rng = random.Random(26)
    offsets = [(0.05, 0.0), (-0.05, 0.0), (0.0, 0.05), (0.0, -0.05), (0.03, 0.04), (-0.04, 0.03)]
    flips = 0
    for _ in range(150):
        place = rng.choice(sorted(PLACES))
        dx, dy = rng.choice(offsets)
        px, py = PLACES[place]
        block = (round(px + dx, 6), round(py + dy, 6))
        expected = _seed_to_place(block, PLACES[place]) <= THRESHOLD
        flips += expected != (math.hypot(block[0] - px, block[1] - py) <= THRESHOLD)
        got = _verdict("SI_2", {"corner_or_side": place}, {n: block for n in THREE}, THREE, {})
        assert got == expected, (place, block)
    assert flips > 10  # the probes do land on ties that float64 decides the other way


def test_ui_3_targets_are_float64_as_numpy_1_made_them() -> None:
    """The bowl's float32 y plus 0.2 (a Python float) was float64 under NumPy 1, the
    original's (Python 3.8); NumPy 2 would keep float32 and decide this tie the other way."""
    bowl, block = (-0.2, -0.5), (-0.2, -0.25)  # "0.2 m to the top": 5 cm past the target
    target64 = [np.float32(bowl[0]), float(np.float32(bowl[1])) + 0.2]  # y = -0.30000000000000004
    seed = float(np.linalg.norm(np.float32(block) - np.array(target64, dtype=np.float64)))
    target32 = np.float32(bowl) + np.float32([0.0, 0.2])  # y = -0.3000000119
    numpy2 = float(np.linalg.norm(np.float32(block) - target32))
    assert seed < THRESHOLD and not numpy2 < np.float32(THRESHOLD)
    variables = {"block": "red block", "magnitude": "0.2 m", "direction": "top",
                 "bowl": "blue bowl"}  # fmt: skip
    moved = {"red block": (*block, Z0)}
    assert _verdict("UI_3", variables, moved, bowls={"blue bowl": bowl})


def test_original_layout_three_block_ui_0_scores_one_end_to_end(cli: Any, tmp_path: Path) -> None:
    """A UI_0 record with three blocks (not the seed's four), run by the oracle via the CLI."""
    record = {
        "tester_id": "UI_0",
        "configs_id": 0,
        "configs": {
            "block_list": list(THREE),
            "bowl_list": ["cyan bowl"],
            "position_dict": {
                "block_pos": [[str(x), str(y), "0.03"] for x, y in THREE.values()],
                "bowl_pos": [["0.15", "-0.6", "0.0"]],
            },
            "instruction": "Put all the blocks in different corners",
            "instruction_vars_dict": {},
        },
    }
    folder = tmp_path / "data" / "tabletop" / "v0"
    folder.mkdir(parents=True)
    (folder / "test.jsonl").write_text(json.dumps(record) + "\n")
    code, _, err = cli("run", "tabletop", "--model", "oracle", "--data-dir",
                       str(tmp_path / "data"), "--out", str(tmp_path / "run"))  # fmt: skip
    assert code == 0, err
    info, records = read_run(tmp_path / "run")
    assert [(r["status"], r["success"]) for r in records] == [("scored", True)], records
    assert info["metrics"]["tabletop"]["success_rate"] == 1.0
