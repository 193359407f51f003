"""Our `checks.success` against the original tester, run for real, on many final tables.

Not a test (pytest does not collect it): it needs the original's code and PyBullet, which the
suite must not. It draws random and boundary tables for all 15 templates (blocks put exactly
on their targets, or exactly 5 cm / 10 cm / 3-4-5 off along x, y and diagonals, in mm or as
float32 sums a program would write), has `seed_worker.py` score each one with the original's
own ``check_final_state`` in one or more Python environments, and prints agreements and
disagreements per template. The first environment is the reference; the process exits 1 when
we disagree with it on any table. ``--write-fixture`` keeps the boundary tables and every
environment's verdicts as plain data for `test_seed_verdicts.py`.

Usage (the original pinned Python 3.8, NumPy 1.22.4 and PyBullet 3.2.5, so the reference
environment should have those; a second one with today's NumPy shows what NumPy 2 changes)::

    .venv/bin/python -m tests.tasks.tabletop.seed_differential \
        --seed-git /path/to/sambanova+toolbench.git \
        --env numpy1=/tmp/seedenv/bin/python --env numpy2=.venv/bin/python --tables 6000
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from toolbench.tasks.tabletop.checks import corner_for, derive_targets, holds
from toolbench.tasks.tabletop.templates import (
    BLOCKS,
    CHOICES,
    DIRECTION_XY,
    MAGNITUDES,
    TEMPLATES,
)
from toolbench.tasks.tabletop.world import BLOCK_REST_Z, BLOCK_SIZE, CORNERS, PLACES, SIDES

WORKER = Path(__file__).with_name("seed_worker.py")
ENV_DIR = "evaluator/code_as_policies_env"
XY = tuple[float, float]
# Offsets from a target: exact, the threshold along each axis and diagonal (5 cm, 3-4-5,
# 45 degrees), a hair inside and outside it, and 10 cm (UI_3's other magnitude).
BOUNDARY: tuple[XY, ...] = (
    (0.05, 0.0), (-0.05, 0.0), (0.0, 0.05), (0.0, -0.05),
    (0.03, 0.04), (-0.04, 0.03), (0.04, -0.03), (-0.03, -0.04),
    (0.0353553, 0.0353553), (-0.0353553, 0.0353553),
    (0.049, 0.0), (0.051, 0.0), (0.0, 0.1), (-0.1, 0.0),
)  # fmt: skip


class Draw:
    """One random table: a scene, the template's variables and a final state near its goal."""

    def __init__(
        self, rng: random.Random, tid: str, plan: XY | None = None, mode: str = ""
    ) -> None:
        """``plan``: a grid table, where the first block put gets this offset, the others
        none; ``mode``: "mm" or "f32" for how positions are written (drawn when empty)."""
        self.rng, self.tid, self.plan, self.mode = rng, tid, plan, mode
        template = TEMPLATES[tid]
        blocks = rng.sample(BLOCKS, rng.randint(*template.blocks))
        colours = [b.split()[0] for b in blocks]
        n_bowls = rng.randint(*template.bowls)
        if tid in ("SI_4", "UI_1"):  # mostly the blocks' own colours, so there are pairs
            pool = colours + [c.split()[0] for c in BLOCKS if c.split()[0] not in colours]
            bowls = [f"{c} bowl" for c in pool[:n_bowls]]
            rng.shuffle(bowls)
        else:
            bowls = [f"{c.split()[0]} bowl" for c in rng.sample(BLOCKS, n_bowls)]
        self.blocks, self.bowls = blocks, bowls
        self.initial = {n: (self.coord(-0.2, 0.2), self.coord(-0.7, -0.3)) for n in blocks + bowls}

    def coord(self, low: float, high: float) -> float:
        return round(self.rng.uniform(low, high), 3)

    def offset(self) -> XY:
        """Exact half the time, else a boundary offset (a grid table: its one offset)."""
        if self.plan is not None:
            planned, self.plan = self.plan, (0.0, 0.0)
            return planned
        return (0.0, 0.0) if self.rng.random() < 0.5 else self.rng.choice(BOUNDARY)

    def written(self) -> str:
        return self.mode or self.rng.choice(("mm", "f32"))

    def variables(self) -> dict[str, Any]:
        rng, out = self.rng, {}
        for slot in TEMPLATES[self.tid].slots:
            if slot == "block":
                out[slot] = rng.choice(self.blocks)
            elif slot == "bowl":
                out[slot] = rng.choice(self.bowls)
            elif slot == "object1":
                out[slot] = rng.choice([o for o in self.blocks + self.bowls if o != out["block"]])
            else:
                out[slot] = rng.choice(CHOICES[slot])
        return out

    def snapshot(self, pos: dict[str, tuple[float, ...]]) -> dict[str, Any]:
        objects = []
        for name in self.blocks + self.bowls:
            kind = "block" if name in self.blocks else "bowl"
            p = pos.get(name, (*self.initial[name], BLOCK_REST_Z if kind == "block" else 0.0))
            objects.append({"name": name, "kind": kind, "pos": [float(v) for v in p]})
        return {"objects": objects}


def _put(draw: Draw, goal: XY, z: float = BLOCK_REST_Z) -> tuple[float, float, float]:
    """A block at a goal plus a drawn offset: millimetres as written, or the float32 sum a
    program computes (``get_obj_pos(...) + [dx, dy]``) as our table stores it (6 digits)."""
    dx, dy = draw.offset()
    if draw.written() == "mm":
        return (round(goal[0] + dx, 3), round(goal[1] + dy, 3), z)
    x, y = np.array(goal, dtype=np.float32) + np.array((dx, dy), dtype=np.float32)
    return (round(float(x), 6), round(float(y), 6), z)


def _tower(draw: Draw, names: list[str], goal: XY) -> dict[str, tuple[float, ...]]:
    return {n: _put(draw, goal, BLOCK_REST_Z + BLOCK_SIZE * i) for i, n in enumerate(names)}


def _goals(draw: Draw, v: dict[str, Any]) -> dict[str, tuple[float, ...]]:
    """Where a program that meant to succeed would leave the blocks (before the offsets)."""
    tid, ini, blocks = draw.tid, draw.initial, draw.blocks
    if tid == "SI_0":
        other = v["object1"]
        z = BLOCK_REST_Z + (BLOCK_SIZE if other in blocks else 0.0)
        return {v["block"]: _put(draw, ini[other], draw.rng.choice((z, BLOCK_REST_Z)))}
    if tid == "SI_1":
        return _tower(draw, blocks, ini[blocks[0]])
    if tid in ("SI_2", "UI_2"):
        return _tower(draw, blocks, PLACES[v["corner_or_side"]])
    if tid == "SI_3":
        return _tower(draw, blocks, ini[v["bowl"]])
    if tid == "SI_4":
        pairs = [b for b in blocks if b.replace("block", "bowl") in draw.bowls]
        return {b: _put(draw, ini[b.replace("block", "bowl")]) for b in pairs}
    if tid == "SI_5":
        moved = _tower(draw, list(v["target_blocks"]), PLACES[v["corner_or_side"]])
        return {b: moved.get(b) or _put(draw, ini[b]) for b in blocks}
    if tid in ("SI_6", "SI_7"):
        return {v["target_block"]: _put(draw, PLACES[v["corner_or_side"]])}
    if tid in ("UI_0", "UI_6"):
        places = list(CORNERS if tid == "UI_0" else SIDES)
        draw.rng.shuffle(places)
        return {b: _put(draw, PLACES[p]) for b, p in zip(blocks, places, strict=False)}
    if tid == "UI_1":
        bowls = draw.rng.sample(draw.bowls, len(draw.bowls))
        return {b: _put(draw, ini[w]) for b, w in zip(blocks, bowls, strict=False)}
    if tid == "UI_3":
        (dx, dy), mag = DIRECTION_XY[v["direction"]], MAGNITUDES[v["magnitude"]]
        bx, by = ini[v["bowl"]]
        return {v["block"]: _put(draw, (bx + dx * mag, by + dy * mag))}
    if tid == "UI_4":
        return {v["block"]: _put(draw, PLACES[corner_for(ini[v["bowl"]], v["distance"])])}
    return _line(draw, v["line"])


def _line(draw: Draw, line: str) -> dict[str, tuple[float, ...]]:
    """UI_5: blocks spread along a vertical, horizontal or diagonal line, then offset."""
    n, rng = len(draw.blocks), draw.rng
    at = [round(-0.15 + 0.3 * i / (n - 1), 3) for i in range(n)]
    c = draw.coord(-0.1, 0.1)
    if line == "vertical":
        points = [(c, a - 0.5) for a in at]
    elif line == "horizontal":
        points = [(a, c - 0.5) for a in at]
    elif rng.random() < 0.5:  # on x - y - 0.5 = 0 or x + y + 0.5 = 0
        points = [(a, round(a - 0.5, 3)) for a in at]
    else:
        points = [(a, round(-a - 0.5, 3)) for a in at]
    return {b: _put(draw, p) for b, p in zip(draw.blocks, points, strict=False)}


def draw_table(rng: random.Random, tid: str) -> dict[str, Any]:
    """A random table in the worker's shape; a quarter are blocks scattered anywhere."""
    return _table(Draw(rng, tid), "scatter" if rng.random() < 0.25 else "goal")


def grid_tables(rng: random.Random) -> list[dict[str, Any]]:
    """For every template, offset (none, then each boundary one) and way of writing the
    position: a table where one block is off its goal by exactly that much."""
    return [
        _table(Draw(rng, tid, plan, mode), "grid")
        for tid in TEMPLATES
        for plan in ((0.0, 0.0), *BOUNDARY)
        for mode in ("mm", "f32")
    ]


def _table(draw: Draw, drawn: str) -> dict[str, Any]:
    tid = draw.tid
    variables = draw.variables()
    variables.update(derive_targets(tid, variables, draw.snapshot({})))
    if drawn == "scatter":
        pos: dict[str, tuple[float, ...]] = {
            b: (draw.coord(-0.3, 0.3), draw.coord(-0.8, -0.2), BLOCK_REST_Z) for b in draw.blocks
        }
    else:
        pos = _goals(draw, variables)
    snap = draw.snapshot(pos)
    return {
        "tester_id": tid,
        "drawn": drawn,
        "block_list": draw.blocks,
        "bowl_list": draw.bowls,
        "vars": variables,
        "objects": [{"name": o["name"], "pos": o["pos"]} for o in snap["objects"]],
    }


def ours(table: dict[str, Any]) -> bool:
    """Our `success` verdict on a table in the worker's shape."""
    kinds = {n: "block" for n in table["block_list"]} | {n: "bowl" for n in table["bowl_list"]}
    snapshot = {"objects": [{**o, "kind": kinds[o["name"]]} for o in table["objects"]]}
    configs = {
        "block_list": table["block_list"],
        "bowl_list": table["bowl_list"],
        "instruction_vars_dict": table["vars"],
    }
    return holds(table["tester_id"], configs, snapshot, strict=False)


def seed_verdicts(python: str, env_dir: Path, tables: list[dict[str, Any]]) -> list[Any]:
    """The original's verdicts (True/False, or None where it crashed) from one environment."""
    lines = "".join(json.dumps(t) + "\n" for t in tables)
    proc = subprocess.run(
        [python, str(WORKER), str(env_dir)], input=lines, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"seed worker failed under {python}:\n{proc.stderr[-3000:]}")
    return [json.loads(line).get("verdict") for line in proc.stdout.splitlines()]


def extract_original(args: argparse.Namespace, into: Path) -> Path:
    """The original's checker folder, from a git mirror (``git archive``) or a checkout."""
    if args.seed_dir:
        return Path(args.seed_dir) / ENV_DIR
    archive = subprocess.run(
        ["git", f"--git-dir={args.seed_git}", "archive", "HEAD", ENV_DIR],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / ENV_DIR


def report(
    tables: list[dict[str, Any]], verdicts: dict[str, list[Any]], show: int
) -> dict[str, Counter[str]]:
    """Per template and environment: how often we agree, disagree, or the original crashed."""
    counts: dict[str, Counter[str]] = {name: Counter() for name in verdicts}
    shown = 0
    for i, table in enumerate(tables):
        mine, tid = ours(table), table["tester_id"]
        for name, theirs in verdicts.items():
            outcome = "crash" if theirs[i] is None else ("agree" if theirs[i] == mine else "differ")
            counts[name][f"{tid} {outcome}"] += 1
            if outcome == "differ" and shown < show:
                shown += 1
                print(f"{name}: seed {theirs[i]}, ours {mine}: {json.dumps(table)}")
    print("template  " + "  ".join(f"{n:>22}" for n in verdicts) + "   (agree/differ/crash)")
    for tid in TEMPLATES:
        cells = []
        for name in verdicts:
            c = counts[name]
            cells.append(f"{c[tid + ' agree']:>8}/{c[tid + ' differ']:>5}/{c[tid + ' crash']:>5}")
        print(f"{tid:<8}  " + "  ".join(f"{cell:>22}" for cell in cells))
    for name in verdicts:
        differ = sum(v for k, v in counts[name].items() if k.endswith("differ"))
        print(f"{name}: {len(tables)} tables, {differ} disagreements with ours")
    return counts


def fixture(
    tables: list[dict[str, Any]], verdicts: dict[str, list[Any]], per_template: int
) -> list[dict[str, Any]]:
    """Tables worth keeping as test data: the grid, every table where two verdicts (any
    environment's or ours) differ, and ``per_template`` random goal tables per template."""
    kept, seen = [], Counter[str]()
    for i, table in enumerate(tables):
        row = {name: v[i] for name, v in verdicts.items()}
        split = len({*row.values(), ours(table)}) > 1
        sample = table["drawn"] == "goal" and seen[table["tester_id"]] < per_template
        if split or sample or table["drawn"] == "grid":
            seen[table["tester_id"]] += sample and not split
            kept.append({**table, "seed": row})
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed-git", help="git dir of a mirror of sambanova/toolbench")
    source.add_argument("--seed-dir", help="a checkout of sambanova/toolbench")
    parser.add_argument(
        "--env",
        action="append",
        required=True,
        metavar="NAME=PYTHON",
        help="a Python to run the original with; the first is the reference",
    )
    parser.add_argument("--tables", type=int, default=3000)
    parser.add_argument("--rng", type=int, default=37)
    parser.add_argument("--show", type=int, default=10, help="print this many disagreements")
    parser.add_argument("--write-fixture", type=Path)
    parser.add_argument("--per-template", type=int, default=4)
    args = parser.parse_args(argv)
    rng = random.Random(args.rng)
    tids = list(TEMPLATES)
    tables = grid_tables(rng) + [draw_table(rng, tids[i % len(tids)]) for i in range(args.tables)]
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = extract_original(args, Path(tmp))
        verdicts = {}
        for spec in args.env:
            name, _, python = spec.partition("=")
            verdicts[name] = seed_verdicts(python, env_dir, tables)
    counts = report(tables, verdicts, args.show)
    if args.write_fixture:
        rows = fixture(tables, verdicts, args.per_template)
        text = "".join(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n" for r in rows)
        args.write_fixture.write_text(text)
        print(f"wrote {len(rows)} tables to {args.write_fixture}")
    reference = counts[next(iter(verdicts))]
    return int(any(k.endswith("differ") and v for k, v in reference.items()))


if __name__ == "__main__":
    sys.exit(main())
