"""Scene layouts (ours, drawn the way the original's were) and reading records in its shape.

The original shipped 400 precomputed layouts: 20 for each (blocks, bowls) count with 1-4
blocks and 0-4 bowls, every object in the table's middle (x in [-0.2, 0.2], y in [-0.7,
-0.3]), at least 15 cm apart, and, in scenes of up to 7 objects, at least 15 cm from the
table's corners and edge midpoints, drawn by a rejection sampler (100 tries per object, start
over otherwise). We draw our own with the same rules from a fixed seed, so they are
reproducible and none is copied.

``read_records`` loads a ``test.jsonl`` in the original's record shape (ours or theirs) and
rejects a bad line with a ``UserError`` naming the file, the line and the fix.
"""

from __future__ import annotations

import ast
import functools
import json
import math
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolbench.errors import UserError
from toolbench.tasks.tabletop.templates import CHOICES, TEMPLATES
from toolbench.tasks.tabletop.world import Table, parse_position

LAYOUTS_PER_KEY = 20
MIN_GAP = 0.15
AREA_X = (-0.2, 0.2)
AREA_Y = (-0.7, -0.3)
EDGE_POINTS = tuple(
    (x, y, 0.0) for x, y in ((-0.3, -0.2), (0.0, -0.2), (0.3, -0.2), (0.3, -0.5),
                             (0.3, -0.8), (0.0, -0.8), (-0.3, -0.8), (-0.3, -0.5))
)  # fmt: skip
TRIES_PER_OBJECT = 100
MAX_LINE_BYTES = 1_000_000  # one record is a few hundred bytes

Layout = dict[str, list[list[str]]]


def _fits(point: tuple[float, float, float], placed: list[tuple[float, float, float]],
          near_edges: bool) -> bool:  # fmt: skip
    if any(math.dist(point[:2], other[:2]) < MIN_GAP for other in placed):
        return False
    return not near_edges or all(math.dist(point, e) >= MIN_GAP for e in EDGE_POINTS)


def _draw(rng: random.Random, n_blocks: int, n_bowls: int) -> Layout | None:
    near_edges = n_blocks + n_bowls <= 7
    placed: list[tuple[float, float, float]] = []
    for z in [0.03] * n_blocks + [0.0] * n_bowls:
        for _ in range(TRIES_PER_OBJECT):
            x = round(rng.uniform(*AREA_X), 3)
            y = round(rng.uniform(*AREA_Y), 3)
            if _fits((x, y, z), placed, near_edges):
                placed.append((x, y, z))
                break
        else:
            return None
    text = [[f"{x:.3f}", f"{y:.3f}", str(z)] for x, y, z in placed]
    return {"block_pos": text[:n_blocks], "bowl_pos": text[n_blocks:]}


@functools.cache
def layouts() -> dict[tuple[int, int], tuple[Layout, ...]]:
    """(n_blocks, n_bowls) -> 20 layouts, a pure function of nothing (fixed seed)."""
    rng = random.Random("tabletop-layouts-v0")
    out: dict[tuple[int, int], tuple[Layout, ...]] = {}
    for n_blocks in range(1, 5):
        for n_bowls in range(0, 5):
            found: list[Layout] = []
            while len(found) < LAYOUTS_PER_KEY:
                layout = _draw(rng, n_blocks, n_bowls)
                if layout is not None:
                    found.append(layout)
            out[n_blocks, n_bowls] = tuple(found)
    return out


# -- reading records ------------------------------------------------------------------------

FIX = (
    "each line is {tester_id, configs_id, configs: {block_list, bowl_list, position_dict, "
    "instruction, instruction_vars_dict}}"
)


def _parse_line(text: str) -> Any:
    """JSON, or a Python literal (the original's own tests read lines with ``eval``; we use
    ``ast.literal_eval``, which evaluates nothing)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _names(configs: Mapping[str, Any], key: str) -> list[str]:
    names = configs.get(key)
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"configs.{key} must be a list of names")
    return names


def _required_vars(tester_id: str, configs: Mapping[str, Any]) -> list[str]:
    keys = list(TEMPLATES[tester_id].slots)
    if tester_id == "SI_5":
        keys += ["target_blocks"] + [f"{b}_initial_pos" for b in configs["block_list"]]
    if tester_id in ("SI_6", "SI_7"):
        keys.append("target_block")
    return keys


def _encodable(record: dict[str, Any]) -> dict[str, Any]:
    r"""The record if UTF-8 can encode every string in it. A lone surrogate (a ``\ud800``
    escape without its pair) is valid JSON but reaches prompts, cache keys and logs, which
    are UTF-8: refused here, as bad data, rather than failing each sample inside the run."""
    stack: list[Any] = [record]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, str) and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                raise ValueError(
                    f"the text {value[:40]!a} holds a lone surrogate "
                    f"({value[error.start]!a}), which UTF-8 cannot encode"
                ) from None
    return record


def validate_record(record: Any) -> dict[str, Any]:  # noqa: C901 -- a flat list of field checks
    """The record if it is well formed; ValueError saying what is wrong otherwise."""
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    tester_id = record.get("tester_id")
    if tester_id not in TEMPLATES:
        raise ValueError(f"tester_id {tester_id!r} is not one of {', '.join(TEMPLATES)}")
    if not isinstance(record.get("configs_id"), (int, str)) or isinstance(
        record.get("configs_id"), bool
    ):
        raise ValueError("configs_id must be a number or a string")
    configs = record.get("configs")
    if not isinstance(configs, dict):
        raise ValueError("configs must be an object")
    blocks, bowls = _names(configs, "block_list"), _names(configs, "bowl_list")
    positions = configs.get("position_dict")
    if not isinstance(positions, dict) or not all(
        isinstance(positions.get(k), list) for k in ("block_pos", "bowl_pos")
    ):
        raise ValueError("configs.position_dict must be an object with block_pos and bowl_pos")
    if not isinstance(configs.get("instruction"), str):
        raise ValueError("configs.instruction must be a string")
    variables = configs.get("instruction_vars_dict")
    if not isinstance(variables, dict):
        raise ValueError("configs.instruction_vars_dict must be an object")
    Table(configs)  # counts, duplicate names and coordinates
    for key in _required_vars(tester_id, configs):
        if key not in variables:
            raise ValueError(f"instruction_vars_dict lacks {key!r}, which {tester_id} needs")
    for key, allowed in CHOICES.items():
        if key in variables and variables[key] not in allowed:
            raise ValueError(
                f"instruction_vars_dict.{key} {variables[key]!r} is not one of {list(allowed)}"
            )
    names = set(blocks) | set(bowls)
    for key in ("block", "bowl", "object1", "target_block"):
        if key in variables and variables[key] not in names:
            raise ValueError(f"instruction_vars_dict.{key} {variables[key]!r} is not in the scene")
    if tester_id == "SI_5":
        targets = variables["target_blocks"]
        if not isinstance(targets, list) or any(t not in blocks for t in targets):
            raise ValueError("instruction_vars_dict.target_blocks must list scene blocks")
        for block in blocks:
            parse_position(variables[f"{block}_initial_pos"], f"{block}_initial_pos")
    return record


def read_records(path: Path) -> list[dict[str, Any]]:
    """All records of a test.jsonl; the first bad line stops the load with exit 2."""
    records: list[dict[str, Any]] = []
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror}); check the --data-dir") from None
    with handle:
        for number, raw in enumerate(iter(lambda: handle.readline(MAX_LINE_BYTES), b""), 1):
            where = f"{path}:{number}"
            if len(raw) >= MAX_LINE_BYTES:
                raise UserError(f"{where}: line longer than {MAX_LINE_BYTES} bytes; {FIX}")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise UserError(f"{where}: not UTF-8 text; save the file as UTF-8") from None
            if not line.strip():
                continue
            try:
                records.append(_encodable(validate_record(_parse_line(line))))
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{where}: {exc}; {FIX}") from None
    if not records:
        raise UserError(f"{path}: no records; {FIX}")
    return records
