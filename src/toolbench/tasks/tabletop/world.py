"""The tabletop: a deterministic kinematic stand-in for the original's PyBullet scene.

The original ran a UR5e arm with a Robotiq gripper in PyBullet, its finger coupling in a
background thread, so the same program could stack blocks on one run and topple them on the
next. Every success check reads only where objects end up (xy, plus z in one template), so a
kinematic table keeps what the checks see and drops the timing: one pick-and-place takes the
topmost block whose centre lies within ``PICK_RADIUS`` of the pick point (nothing, if none)
and sets it down at the place point, resting on the table (or in a bowl) or on top of the
highest block whose footprint it overlaps. Bowls are fixed to the table, as in the original.

The API keeps the original's names, argument handling and return types (xy as float32 arrays,
``get_bbox`` as nested tuples, RGBA tuples, the misspelt "botom right corner" unless
``fix_corner_name``), because model programs written for the original depend on them.
Refusals raise ``ToolError``: the program crashed, as an exception in the original did.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from shapely.affinity import affine_transform, rotate, scale, skew, translate
from shapely.geometry import (
    CAP_STYLE,
    JOIN_STYLE,
    GeometryCollection,
    LinearRing,
    LineString,
    MultiLineString,
    MultiPoint,
    MultiPolygon,
    Point,
    Polygon,
    box,
    mapping,
    shape,
)

from toolbench.sandbox.world import ToolError, World

TABLE_X = (-0.3, 0.3)
TABLE_Y = (-0.8, -0.2)
TABLE_Z = (0.0, 0.15)
BLOCK_SIZE = 0.04
BLOCK_REST_Z = BLOCK_SIZE / 2  # a block's centre when it stands on the table or in a bowl
BOWL_HALF_SIZE = 0.07  # bowls are about 14 cm across and 5 cm deep
BOWL_HEIGHT = 0.05
PICK_RADIUS = 0.03  # the gripper closes on a block whose centre is this close to the pick xy
REACH = 0.9  # metres from the robot base (the origin); farther points make the arm fail
FAR = 1000.0  # metres; a coordinate beyond this is a mistake, not a place (and would overflow)
COORD_DIGITS = 6  # snapshot precision (micrometres), so snapshots are short and stable
MAX_SAID = 100  # say() messages kept per sample
MAX_SAID_CHARS = 500

# Named places 5 cm inside the table edges; get_obj_pos and put_first_on_second accept them.
PLACES: dict[str, tuple[float, float]] = {
    "top left corner": (-0.25, -0.25),
    "top side": (0.0, -0.25),
    "top right corner": (0.25, -0.25),
    "left side": (-0.25, -0.5),
    "middle": (0.0, -0.5),
    "right side": (0.25, -0.5),
    "bottom left corner": (-0.25, -0.75),
    "bottom side": (0.0, -0.75),
    "bottom right corner": (0.25, -0.75),
}
CORNERS = ("top left corner", "top right corner", "bottom left corner", "bottom right corner")
SIDES = ("top side", "right side", "bottom side", "left side")
MISSPELT_CORNER = "botom right corner"  # what the original's get_corner_name returns

# The original's RGBA palette (Tableau 10), in its lookup order: the first word found wins.
COLORS: dict[str, tuple[float, float, float, float]] = {
    "blue": (78 / 255, 121 / 255, 167 / 255, 1.0),
    "red": (255 / 255, 87 / 255, 89 / 255, 1.0),
    "green": (89 / 255, 169 / 255, 79 / 255, 1.0),
    "orange": (242 / 255, 142 / 255, 43 / 255, 1.0),
    "yellow": (237 / 255, 201 / 255, 72 / 255, 1.0),
    "purple": (176 / 255, 122 / 255, 161 / 255, 1.0),
    "pink": (255 / 255, 157 / 255, 167 / 255, 1.0),
    "cyan": (118 / 255, 183 / 255, 178 / 255, 1.0),
    "brown": (156 / 255, 117 / 255, 95 / 255, 1.0),
    "gray": (186 / 255, 176 / 255, 172 / 255, 1.0),
}

API_NAMES = (
    "get_bbox",
    "get_obj_pos",
    "get_color",
    "is_obj_visible",
    "denormalize_xy",
    "put_first_on_second",
    "get_obj_names",
    "get_corner_name",
    "get_side_name",
    "say",
)


def fixed_scope() -> dict[str, Any]:
    """What every LMP program sees besides the API: numpy and shapely's geometry helpers."""
    return {
        "np": np,
        **{
            f.__name__: f
            for f in (box, shape, mapping, affine_transform, rotate, scale, skew, translate)
        },
        **{
            cls.__name__: cls
            for cls in (
                Point,
                LineString,
                Polygon,
                MultiPoint,
                MultiLineString,
                MultiPolygon,
                GeometryCollection,
                LinearRing,
            )
        },
        "CAP_STYLE": CAP_STYLE,
        "JOIN_STYLE": JOIN_STYLE,
    }


def _short(value: object, limit: int = 80) -> str:
    """A model-supplied value for an error message, bounded whatever it is (``reprlib``
    looks at a few items of a container, never all of a huge or deep one)."""
    try:
        text = reprlib.repr(value) if not isinstance(value, str) else repr(value[: limit + 1])
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_position(values: Any, where: str) -> tuple[float, float, float]:
    """One stored [x, y, z] triple (numbers or numeric strings, as the original's layouts)."""
    if not isinstance(values, (list, tuple)) or len(values) != 3:
        raise ValueError(f"{where}: expected [x, y, z], got {_short(values)}")
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"{where}: coordinate {_short(value)} is not a number")
        try:
            number = float(value)
        except (ValueError, OverflowError):
            raise ValueError(f"{where}: coordinate {_short(value)} is not a number") from None
        if not math.isfinite(number):
            raise ValueError(f"{where}: coordinate {_short(value)} is not finite")
        out.append(number)
    return out[0], out[1], out[2]


class Table:
    """Blocks and bowls on the table, and the robot API a program drives them with."""

    def __init__(self, configs: Mapping[str, Any], *, fix_corner_name: bool = False) -> None:
        self.fix_corner_name = fix_corner_name
        self.kinds: dict[str, str] = {}
        self.pos: dict[str, np.ndarray] = {}
        self.said: list[str] = []
        self.said_total = 0
        self.moves = 0
        positions = configs["position_dict"]
        for kind, names_key, pos_key, rest_z in (
            ("block", "block_list", "block_pos", BLOCK_REST_Z),
            ("bowl", "bowl_list", "bowl_pos", 0.0),
        ):
            names, points = list(configs[names_key]), list(positions[pos_key])
            if len(names) != len(points):
                raise ValueError(f"{len(names)} {names_key} names but {len(points)} {pos_key}")
            for name, point in zip(names, points, strict=True):
                if name in self.kinds:
                    raise ValueError(f"object {name!r} appears twice")
                x, y, _ = parse_position(point, f"{pos_key} of {name!r}")
                # The original forces block z to 0.03 and lets it settle; it settles on 0.02.
                self.kinds[name] = kind
                self.pos[name] = np.array([x, y, rest_z], dtype=np.float64)

    # -- state ----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The table as JSON: objects in scene order, what the robot said, how many moves."""
        return {
            "objects": [
                {
                    "name": name,
                    "kind": self.kinds[name],
                    "pos": [round(float(v), COORD_DIGITS) + 0.0 for v in self.pos[name]],
                }
                for name in self.kinds
            ],
            "said": list(self.said),
            "said_total": self.said_total,
            "moves": self.moves,
        }

    @classmethod
    def from_snapshot(cls, snap: Mapping[str, Any], *, fix_corner_name: bool = False) -> Table:
        objects = list(snap["objects"])
        configs = {
            "block_list": [o["name"] for o in objects if o["kind"] == "block"],
            "bowl_list": [o["name"] for o in objects if o["kind"] == "bowl"],
            "position_dict": {
                "block_pos": [o["pos"] for o in objects if o["kind"] == "block"],
                "bowl_pos": [o["pos"] for o in objects if o["kind"] == "bowl"],
            },
        }
        table = cls(configs, fix_corner_name=fix_corner_name)
        table.kinds = {o["name"]: o["kind"] for o in objects}  # keep the snapshot's order
        for o in objects:
            x, y, z = parse_position(o["pos"], f"position of {o['name']!r}")
            table.pos[o["name"]] = np.array([x, y, z], dtype=np.float64)
        table.said = [str(m) for m in snap.get("said", [])]
        table.said_total = int(snap.get("said_total", len(table.said)))
        table.moves = int(snap.get("moves", 0))
        return table

    def api(self) -> dict[str, Callable[..., Any]]:
        """The variable-scope functions, bound to this table."""
        return {name: getattr(self, name) for name in API_NAMES}

    # -- the API --------------------------------------------------------------------------

    def get_obj_names(self) -> list[str]:
        return list(self.kinds)

    def is_obj_visible(self, obj_name: Any) -> bool:
        return isinstance(obj_name, str) and obj_name in self.kinds

    def _resolve(self, obj_name: Any) -> str:
        """A scene object's name, after the original's clean-up ("the" deleted, "_" spaced)
        and its fallbacks (circle -> bowl, square -> block, "small" dropped)."""
        if not isinstance(obj_name, str):
            raise ToolError(f"object names are strings, got {_short(obj_name)}")
        name = obj_name.replace("the", "").replace("_", " ").strip()
        if name in self.kinds:
            return name
        retry = name.replace("circle", "bowl").replace("square", "block").replace("small", "")
        retry = " ".join(retry.split())
        if retry in self.kinds:
            return retry
        raise ToolError(f"unknown object {_short(obj_name)}; the scene has {list(self.kinds)}")

    def get_obj_pos(self, obj_name: Any) -> np.ndarray:
        """A named place's or an object's current xy, as a fresh float32 array."""
        if isinstance(obj_name, str):
            place = obj_name.replace("the", "").replace("_", " ").strip()
            if place in PLACES:
                return np.array(PLACES[place], dtype=np.float32)
        return self.pos[self._resolve(obj_name)][:2].astype(np.float32)

    def get_bbox(self, obj_name: Any) -> tuple[tuple[float, float, float], ...]:
        name = self._resolve(obj_name)
        x, y, z = (float(v) for v in self.pos[name])
        if self.kinds[name] == "block":
            h = BLOCK_SIZE / 2
            return ((x - h, y - h, z - h), (x + h, y + h, z + h))
        h = BOWL_HALF_SIZE
        return ((x - h, y - h, z), (x + h, y + h, z + BOWL_HEIGHT))

    def get_color(self, obj_name: Any) -> tuple[float, float, float, float] | None:
        """The RGBA of the first colour word in the name; None without one (as the original)."""
        if not isinstance(obj_name, str):
            raise ToolError(f"object names are strings, got {_short(obj_name)}")
        for color, rgba in COLORS.items():
            if color in obj_name:
                return rgba
        return None

    def denormalize_xy(self, pos_normalized: Any) -> np.ndarray:
        """[0, 1]^2 table coordinates to metres; numpy broadcasting lets lists of points in."""
        try:
            values = np.asarray(pos_normalized, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise ToolError(f"denormalize_xy needs numbers, got {_short(pos_normalized)}") from None
        if values.size > 10_000 or values.ndim == 0 or values.shape[-1] != 2:
            raise ToolError(f"denormalize_xy needs [x, y] points, got shape {values.shape}")
        return values * np.array([0.5, 0.5]) + np.array([-0.25, -0.75])

    def _nearest(self, pos: Any, names: tuple[str, ...]) -> str:
        xy = _xy(pos, "position")
        points = np.array([PLACES[name] for name in names])
        return names[int(np.argmin(np.linalg.norm(points - xy, axis=1)))]

    def get_corner_name(self, pos: Any) -> str:
        name = self._nearest(pos, CORNERS)
        if name == "bottom right corner" and not self.fix_corner_name:
            return MISSPELT_CORNER
        return name

    def get_side_name(self, pos: Any) -> str:
        return self._nearest(pos, SIDES)

    def say(self, msg: Any) -> None:
        self.said_total += 1
        if len(self.said) < MAX_SAID:
            try:
                text = msg if isinstance(msg, str) else str(msg)
            except Exception:
                text = f"<{type(msg).__name__}>"
            self.said.append(text[:MAX_SAID_CHARS])

    def put_first_on_second(self, arg1: Any, arg2: Any) -> None:
        """One pick-and-place: the topmost block at the first point goes onto the second."""
        pick = self._point(arg1, "first")
        place = self._point(arg2, "second")
        self.moves += 1
        block = self._topmost_at(pick)
        if block is None:
            return  # the gripper closed on nothing; the original's arm moved all the same
        z = self._rest_z(place, exclude=block)
        self.pos[block] = np.array([place[0], place[1], z], dtype=np.float64)

    # -- kinematics -----------------------------------------------------------------------

    def _point(self, arg: Any, which: str) -> np.ndarray:
        if isinstance(arg, str):
            xy = self.get_obj_pos(arg).astype(np.float64)
        elif isinstance(arg, np.ndarray):
            xy = _xy(arg, f"the {which} position")
        else:
            raise ToolError(
                f"put_first_on_second: the {which} argument must be an object name or a "
                f"numpy array (the arm calls .copy()/.shape on it), got {_short(arg)}"
            )
        if math.hypot(float(xy[0]), float(xy[1])) > REACH:
            raise ToolError(f"the arm cannot reach {_short([float(v) for v in xy])}")
        return xy

    def _topmost_at(self, xy: np.ndarray) -> str | None:
        best: str | None = None
        for name, kind in self.kinds.items():
            p = self.pos[name]
            if kind != "block" or math.hypot(p[0] - xy[0], p[1] - xy[1]) > PICK_RADIUS:
                continue
            if best is None or p[2] > self.pos[best][2]:
                best = name
        return best

    def _rest_z(self, xy: np.ndarray, exclude: str) -> float:
        """On the highest block whose footprint overlaps this one, else on the table/bowl."""
        z = BLOCK_REST_Z
        for name, kind in self.kinds.items():
            p = self.pos[name]
            if kind != "block" or name == exclude:
                continue
            if abs(p[0] - xy[0]) < BLOCK_SIZE and abs(p[1] - xy[1]) < BLOCK_SIZE:
                z = max(z, float(p[2]) + BLOCK_SIZE)
        return z


def _xy(pos: Any, what: str) -> np.ndarray:
    """The xy of a 2- or 3-vector of finite numbers (a 3-vector's z is ignored, as the arm
    overwrote it)."""
    try:
        values = np.asarray(pos, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ToolError(f"{what} must be numbers, got {_short(pos)}") from None
    if values.shape not in ((2,), (3,)):
        raise ToolError(f"{what} must be an [x, y] or [x, y, z] vector, got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ToolError(f"{what} is not finite: {_short(values.tolist())}")
    if np.any(np.abs(values) > FAR):
        raise ToolError(f"{what} is nowhere near the table: {_short(values.tolist())}")
    return values[:2].copy()


# -- the sandbox world ----------------------------------------------------------------------

ALLOWED_MODULES = frozenset({"numpy", "numpy.linalg"})


def make_world(
    configs: dict[str, Any], state: dict[str, Any] | None = None, fix_corner_name: bool = False
) -> World:
    """A fresh table for one sample (from its configs, or from a saved ``state`` snapshot),
    with the fixed scope and the API in the namespace. The LMP functions are not here: the
    runtime adds them as host functions."""
    if state is not None:
        table = Table.from_snapshot(state, fix_corner_name=fix_corner_name)
    else:
        table = Table(configs, fix_corner_name=fix_corner_name)
    return World(
        namespace={**fixed_scope(), **table.api()},
        snapshot=table.snapshot,
        allowed_modules=ALLOWED_MODULES,
        writable_types=frozenset({np.ndarray}),
    )


def prepare_sandbox_worker() -> None:
    """Pay shapely's and numpy's lazy first-call costs once per worker, outside time limits."""
    line = LineString([(0.0, 0.0), (1.0, 1.0)])
    np.array(line.interpolate(0.5).coords[0])
    rotate(scale(line, 2.0, 2.0), 30.0)
    np.linalg.norm(np.argsort(np.array([2.0, 1.0])))
