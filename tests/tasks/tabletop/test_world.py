"""The kinematic table: the original's API names, argument handling and return types, the
pick-and-place rules, snapshots, hostile arguments, and the world running in the real sandbox."""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.sandbox import Limits, SandboxPool
from toolbench.sandbox.world import ToolError
from toolbench.tasks.tabletop.world import (
    API_NAMES,
    BLOCK_REST_Z,
    BLOCK_SIZE,
    MAX_SAID,
    MAX_SAID_CHARS,
    Table,
    make_world,
)

CONFIGS: dict[str, Any] = {
    "block_list": ["red block", "green block", "blue block"],
    "bowl_list": ["yellow bowl", "blue bowl"],
    "position_dict": {
        "block_pos": [["-0.1", "-0.5", "0.03"], ["0.1", "-0.5", "0.03"], [0.0, -0.65, 0.03]],
        "bowl_pos": [["0.1", "-0.35", "0.0"], ["-0.15", "-0.35", "0.0"]],
    },
    "instruction": "Stack all the blocks",
    "instruction_vars_dict": {},
}


@pytest.fixture
def table() -> Table:
    return Table(CONFIGS)


def test_positions_are_float32_xy_arrays_and_names_are_cleaned(table: Table) -> None:
    pos = table.get_obj_pos("red block")
    assert isinstance(pos, np.ndarray) and pos.dtype == np.float32 and pos.shape == (2,)
    assert pos.tolist() == pytest.approx([-0.1, -0.5])
    # "the" deleted everywhere, underscores are spaces; circle/square/small fall back
    assert table.get_obj_pos("the red_block").tolist() == pos.tolist()
    assert table.get_obj_pos("small red square").tolist() == pos.tolist()
    assert table.get_obj_pos("yellow circle").tolist() == pytest.approx([0.1, -0.35])
    top_left = table.get_obj_pos("the top left corner")
    assert top_left.dtype == np.float32 and top_left.tolist() == pytest.approx([-0.25, -0.25])
    assert table.get_obj_pos("middle").tolist() == pytest.approx([0.0, -0.5])
    with pytest.raises(ToolError, match="unknown object"):
        table.get_obj_pos("purple block")
    with pytest.raises(ToolError, match="strings"):
        table.get_obj_pos(3)


def test_get_obj_pos_returns_a_copy(table: Table) -> None:
    pos = table.get_obj_pos("red block")
    pos += 1.0
    assert table.get_obj_pos("red block").tolist() == pytest.approx([-0.1, -0.5])


def test_names_visibility_bbox_and_colour(table: Table) -> None:
    assert table.get_obj_names() == [*CONFIGS["block_list"], *CONFIGS["bowl_list"]]
    table.get_obj_names().append("x")  # a copy
    assert table.is_obj_visible("blue bowl") and not table.is_obj_visible("x")
    bbox = table.get_bbox("red block")
    assert isinstance(bbox, tuple) and all(isinstance(c, tuple) and len(c) == 3 for c in bbox)
    assert bbox[0][0] == pytest.approx(-0.12) and bbox[1][2] == pytest.approx(0.04)
    assert table.get_color("blue bowl") == (78 / 255, 121 / 255, 167 / 255, 1.0)
    assert table.get_color("a thing") is None
    with pytest.raises(ToolError):
        table.get_bbox("top left corner")


def test_denormalize_corner_and_side_names(table: Table) -> None:
    assert table.denormalize_xy([0, 0]).tolist() == [-0.25, -0.75]
    assert table.denormalize_xy(np.array([1.0, 1.0])).tolist() == [0.25, -0.25]
    assert table.denormalize_xy([[0.5, 0.5], [1, 0]]).tolist() == [[0.0, -0.5], [0.25, -0.75]]
    with pytest.raises(ToolError):
        table.denormalize_xy(["a", "b"])
    assert table.get_corner_name(np.array([-0.2, -0.3])) == "top left corner"
    assert table.get_corner_name(np.array([0.2, -0.7, 0.0])) == "botom right corner"  # sic
    with pytest.raises(ToolError, match="unknown object"):
        table.get_obj_pos(table.get_corner_name(np.array([0.2, -0.7])))
    fixed = Table(CONFIGS, fix_corner_name=True)
    name = fixed.get_corner_name(np.array([0.2, -0.7]))
    assert name == "bottom right corner"
    assert fixed.get_obj_pos(name).tolist() == pytest.approx([0.25, -0.75])
    assert table.get_side_name(np.array([0.0, -0.3])) == "top side"
    assert table.get_side_name(np.array([0.2, -0.5])) == "right side"


def test_pick_and_place_stacks_and_rests_in_bowls(table: Table) -> None:
    table.put_first_on_second("red block", "green block")
    assert table.pos["red block"].tolist() == pytest.approx([0.1, -0.5, BLOCK_REST_Z + BLOCK_SIZE])
    # picking at the green block's xy takes the topmost block: the red one
    table.put_first_on_second("green block", "yellow bowl")
    assert table.pos["red block"].tolist() == pytest.approx([0.1, -0.35, BLOCK_REST_Z])
    assert table.pos["green block"].tolist() == pytest.approx([0.1, -0.5, BLOCK_REST_Z])
    # a position array as the place; a 3-vector's z is ignored
    table.put_first_on_second("blue block", np.array([0.2, -0.6, 0.5]))
    assert table.pos["blue block"].tolist() == pytest.approx([0.2, -0.6, BLOCK_REST_Z])
    assert table.moves == 3


def test_bowls_do_not_move_and_empty_picks_do_nothing(table: Table) -> None:
    before = table.snapshot()["objects"]
    table.put_first_on_second("blue bowl", "middle")  # bowls are fixed to the table
    table.put_first_on_second(np.array([0.25, -0.25]), "middle")  # nothing there
    assert table.snapshot()["objects"] == before


def test_put_refuses_lists_and_bad_vectors(table: Table) -> None:
    with pytest.raises(ToolError, match="numpy array"):
        table.put_first_on_second("red block", [0.0, -0.5])
    with pytest.raises(ToolError, match="numpy array"):
        table.put_first_on_second("red block", (0.0, -0.5))
    with pytest.raises(ToolError, match="not finite"):
        table.put_first_on_second("red block", np.array([math.nan, -0.5]))
    with pytest.raises(ToolError, match="shape"):
        table.put_first_on_second("red block", np.zeros((2, 2)))
    with pytest.raises(ToolError, match="reach"):
        table.put_first_on_second("red block", np.array([5.0, -0.5]))
    assert table.moves == 0


def test_say_is_bounded(table: Table) -> None:
    for _ in range(MAX_SAID + 5):
        table.say("x" * (MAX_SAID_CHARS * 3))
    table.say(10**5000)  # str() of a huge int raises; recorded as its type
    snap = table.snapshot()
    assert len(snap["said"]) == MAX_SAID and snap["said_total"] == MAX_SAID + 6
    assert all(len(m) == MAX_SAID_CHARS for m in snap["said"])


def test_snapshot_is_json_and_round_trips(table: Table) -> None:
    table.put_first_on_second("red block", "green block")
    table.say("done")
    snap = table.snapshot()
    assert json.loads(json.dumps(snap)) == snap
    again = Table.from_snapshot(snap)
    assert again.snapshot() == snap
    assert again.get_obj_pos("red block").tolist() == table.get_obj_pos("red block").tolist()


def test_world_namespace_has_fixed_scope_and_api_but_no_lmps() -> None:
    world = make_world(CONFIGS)
    assert set(API_NAMES) <= set(world.namespace)
    assert {"np", "LineString", "Point", "Polygon", "rotate", "scale", "box"} <= set(
        world.namespace
    )
    assert not {"parse_obj_name", "parse_position", "tabletop_ui"} & set(world.namespace)
    world.namespace["put_first_on_second"]("red block", "top side")
    assert world.snapshot()["moves"] == 1
    resumed = make_world(CONFIGS, state=world.snapshot())
    assert resumed.snapshot() == world.snapshot()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*CONFIGS["block_list"], *CONFIGS["bowl_list"], "middle", "left side"]),
            st.sampled_from([*CONFIGS["block_list"], "middle", "top side", "blue bowl"]),
        ),
        max_size=12,
    )
)
def test_any_sequence_of_moves_keeps_blocks_resting(moves: list[tuple[str, str]]) -> None:
    """Whatever the order, every block rests on the table/bowl or on a block right below it,
    and nothing ever leaves the table."""
    table = Table(CONFIGS)
    for first, second in moves:
        table.put_first_on_second(first, second)
    blocks = [n for n, k in table.kinds.items() if k == "block"]
    for name in blocks:
        x, y, z = table.pos[name]
        assert -0.3 <= x <= 0.3 and -0.8 <= y <= -0.2
        if z > BLOCK_REST_Z + 1e-9:
            below = [
                b
                for b in blocks
                if b != name
                and abs(table.pos[b][0] - x) < BLOCK_SIZE
                and abs(table.pos[b][1] - y) < BLOCK_SIZE
                and table.pos[b][2] == pytest.approx(z - BLOCK_SIZE)
            ]
            assert below, f"{name} floats at z={z}"
    assert Table.from_snapshot(table.snapshot()).snapshot() == table.snapshot()


PROGRAM = """\
objects = ['red block', 'green block', 'blue block', 'yellow bowl', 'blue bowl']
bowl_pos = get_obj_pos('blue bowl')
best = None
best_dist = None
for name in objects:
    if 'block' in name:
        dist = np.linalg.norm(get_obj_pos(name) - bowl_pos)
        if best_dist is None or dist < best_dist:
            best_dist = dist
            best = name
line = LineString([denormalize_xy([0.5, 0.0]), denormalize_xy([0.5, 1.0])])
pt = np.array(line.interpolate(0.5, normalized=True).coords[0])
pt += np.array([0.05, 0.1])
put_first_on_second(best, pt)
say(get_corner_name(pt))
"""


def test_world_runs_in_the_real_sandbox() -> None:
    """numpy.linalg, shapely and in-place writes on arrays work through the sandbox's guards;
    a plain list where the arm needs an array is the program's crash, with the reason."""
    factory = functools.partial(make_world, CONFIGS)
    with SandboxPool(workers=1, limits=Limits(wall_s=10.0, cpu_s=10.0)) as pool:
        ok, bad = pool.run_many(factory, [PROGRAM, "put_first_on_second('red block', [0.0, -0.5])"])
    assert ok.ok, ok.error
    red = next(o for o in ok.state["objects"] if o["name"] == "red block")
    assert red["pos"] == pytest.approx([0.05, -0.4, BLOCK_REST_Z])
    assert ok.state["said"] == ["top right corner"]
    assert not bad.ok and bad.kind == "error" and "numpy array" in (bad.error or "")


_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.just(10**400),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=50),
        st.sampled_from(["red block", "the blue bowl", "top side", "botom right corner"]),
        st.builds(np.array, st.lists(st.floats(-1, 1), max_size=4)),
        st.builds(lambda n: np.zeros((n, 2)), st.integers(0, 3)),
        st.just(np.array(["a", "b"])),
        st.just(np.array([1.0, 2.0], dtype=object)),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(API_NAMES), st.lists(_VALUES, min_size=0, max_size=3))
def test_any_arguments_give_a_value_or_a_tool_error(name: str, args: list[Any]) -> None:
    """Model programs pass anything: the API answers or refuses with ToolError, never
    another exception (which would read as a bug of ours) and never a corrupt table."""
    table = Table(CONFIGS)
    try:
        getattr(table, name)(*args)
    except ToolError:
        pass
    except TypeError as exc:  # wrong number of arguments: Python's own message, as expected
        assert "argument" in str(exc)
    snap = table.snapshot()
    assert json.loads(json.dumps(snap)) == snap
    for obj in snap["objects"]:
        assert all(math.isfinite(v) for v in obj["pos"])
