"""Seeded generator of tabletop test records, in the original's record shape.

Each record is ``{"tester_id", "configs_id", "configs": {"block_list", "bowl_list",
"position_dict", "instruction", "instruction_vars_dict"}}``. Like the original tester we pick
counts in the template's ranges, a layout for those counts, block and bowl colours, and fill
the placeholders in alphabetical order (``block``/``bowl`` from the scene, ``object1`` from the
scene minus what is already chosen, the rest from the attribute lists), then store the derived
targets (SI_5's target blocks and every block's initial position, SI_6/SI_7's target block)
computed on the settled initial table.

Unlike the original we keep only well-posed samples, and say why in ``_rejection``: the strict
check must not already hold on the initial table (an empty program would pass), "closest",
"second from the left" and "to the left of" must not hinge on less than 2 cm, a place to put a
block must lie on the table, and "a line" must not run through a block that would get buried.
Output is a pure function of (split, n, seed), so ``data generate`` rewrites v0 byte for byte.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from toolbench.tasks.tabletop.checks import corner_for, derive_targets, holds
from toolbench.tasks.tabletop.scenes import layouts
from toolbench.tasks.tabletop.templates import (
    BLOCKS,
    BOWLS,
    CHOICES,
    DIRECTION_XY,
    MAGNITUDES,
    TEMPLATES,
    Template,
    line_points,
)
from toolbench.tasks.tabletop.world import BLOCK_SIZE, CORNERS, PLACES, TABLE_X, TABLE_Y, Table

TASK = "tabletop"
DEFAULT_TEST_SIZE = 300
DEFAULT_SEED = 0
MARGIN = 0.02  # the smallest difference an instruction may hinge on


def _scene(rng: random.Random, template: Template) -> dict[str, Any]:
    n_blocks = rng.randint(*template.blocks)
    n_bowls = rng.randint(*template.bowls)
    layout = rng.choice(layouts()[n_blocks, n_bowls])
    return {
        "block_list": rng.sample(BLOCKS, n_blocks),
        "bowl_list": rng.sample(BOWLS, n_bowls),
        "position_dict": {
            "block_pos": [list(p) for p in layout["block_pos"]],
            "bowl_pos": [list(p) for p in layout["bowl_pos"]],
        },
    }


def _fill(rng: random.Random, template: Template, scene: dict[str, Any]) -> dict[str, Any]:
    chosen: dict[str, Any] = {}
    for slot in template.slots:  # alphabetical, as the original filled them
        if slot == "block":
            chosen[slot] = rng.choice(scene["block_list"])
        elif slot == "bowl":
            chosen[slot] = rng.choice(scene["bowl_list"])
        elif slot == "object1":
            rest = [n for n in scene["block_list"] + scene["bowl_list"] if n not in chosen.values()]
            chosen[slot] = rng.choice(rest)
        else:
            chosen[slot] = rng.choice(CHOICES[slot])
    return chosen


def _on_side(block: tuple[float, float], bowl: tuple[float, float], direction: str) -> float:
    """How far the block lies on ``direction``'s side of the bowl (negative: the other side)."""
    dx, dy = DIRECTION_XY[direction]
    return (block[0] - bowl[0]) * dx + (block[1] - bowl[1]) * dy


def _derive(tester_id: str, v: dict[str, Any], table: Table) -> str | None:
    """Add the stored targets to ``v`` (``checks.derive_targets``, as the original's tester);
    a reason instead when the instruction would hinge on less than ``MARGIN``."""
    xy = {name: (float(p[0]), float(p[1])) for name, p in table.pos.items()}
    blocks = [n for n, k in table.kinds.items() if k == "block"]
    if tester_id == "SI_5":
        sides = [_on_side(xy[b], xy[v["bowl"]], v["direction"]) for b in blocks]
        if any(abs(s) < MARGIN for s in sides):
            return "a block is level with the bowl"
    elif tester_id == "SI_6":
        dist = sorted(math.dist(table.pos[b], table.pos[v["bowl"]]) for b in blocks)
        if dist[1] - dist[0] < MARGIN or dist[-1] - dist[-2] < MARGIN:
            return "two blocks are about as far from the bowl"
    elif tester_id == "SI_7":
        dx, dy = DIRECTION_XY[v["direction"]]
        keys = sorted(-(xy[b][0] * dx + xy[b][1] * dy) for b in blocks)
        if any(b - a < MARGIN for a, b in itertools.pairwise(keys)):
            return "two blocks are level in that direction"
    v.update(derive_targets(tester_id, v, table.snapshot()))
    return None


def _rejection(tester_id: str, configs: dict[str, Any], table: Table) -> str | None:
    """Why this sample is not well posed (None: keep it)."""
    v = configs["instruction_vars_dict"]
    if holds(tester_id, configs, table.snapshot(), strict=True):
        return "already done on the initial table"
    xy = {name: (float(p[0]), float(p[1])) for name, p in table.pos.items()}
    if tester_id == "UI_3":
        dx, dy = DIRECTION_XY[v["direction"]]
        m = MAGNITUDES[v["magnitude"]]
        x, y = xy[v["bowl"]][0] + dx * m, xy[v["bowl"]][1] + dy * m
        if not (TABLE_X[0] + 0.02 <= x <= TABLE_X[1] - 0.02):
            return "the place is off the table"
        if not (TABLE_Y[0] + 0.02 <= y <= TABLE_Y[1] - 0.02):
            return "the place is off the table"
    if tester_id == "UI_4":
        bowl = xy[v["bowl"]]
        dists = sorted(math.dist(PLACES[c], bowl) for c in CORNERS)
        if dists[1] - dists[0] < MARGIN or dists[-1] - dists[-2] < MARGIN:
            return "two corners are about as far from the bowl"
        assert corner_for(bowl, v["distance"]) in CORNERS
    if tester_id == "UI_5":
        blocks = configs["block_list"]
        for px, py in line_points(v["line"], len(blocks)):
            for b in blocks:
                if abs(xy[b][0] - px) < BLOCK_SIZE * 1.5 and abs(xy[b][1] - py) < BLOCK_SIZE * 1.5:
                    return "a block stands on the line"
    return None


def _record(rng: random.Random, template: Template, configs_id: int) -> dict[str, Any] | None:
    scene = _scene(rng, template)
    variables = _fill(rng, template, scene)
    table = Table(scene)
    if _derive(template.tester_id, variables, table) is not None:
        return None
    configs = {
        **scene,
        "instruction": template.text.format(**variables),
        "instruction_vars_dict": variables,
    }
    if _rejection(template.tester_id, configs, table) is not None:
        return None
    return {"tester_id": template.tester_id, "configs_id": configs_id, "configs": configs}


def generate(split: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` records, templates in turn (SI_0 ... UI_6, again ...), each well posed."""
    if split not in ("test", "train"):
        raise ValueError(f"split must be 'test' or 'train', not {split!r}")
    rng = random.Random(f"{TASK}-{split}-{seed}")
    order = list(TEMPLATES.values())
    counts = dict.fromkeys(TEMPLATES, 0)
    records: list[dict[str, Any]] = []
    while len(records) < n:
        template = order[len(records) % len(order)]
        record = _record(rng, template, counts[template.tester_id])
        if record is not None:
            counts[template.tester_id] += 1
            records.append(record)
    return records
