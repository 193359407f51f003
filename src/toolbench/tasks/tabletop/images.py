"""A PNG of a table snapshot, the same bytes every time for the same snapshot.

Run folders keep a picture of each sample's initial and final table, so a reader can see what
a program did without replaying it. Two pictures per sample must cost little next to the
sample itself, so instead of a ``Figure`` with axes (whose tick and text layout took ~70 ms
a picture) we draw a handful of paths straight onto matplotlib's Agg renderer in pixel
coordinates and encode the buffer with ``matplotlib.image.imsave``. Determinism: a fixed
canvas, no shared state between calls, PNG metadata cleared (no software or time stamps), and
text drawn with ``ismath=False`` so a ``$`` in a name or title cannot start the math parser.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties
from matplotlib.image import imsave
from matplotlib.path import Path
from matplotlib.transforms import Affine2D

from toolbench.tasks.tabletop.world import (
    BLOCK_REST_Z,
    BLOCK_SIZE,
    BOWL_HALF_SIZE,
    COLORS,
    PLACES,
    TABLE_X,
    TABLE_Y,
)

SCALE = 320.0  # pixels per metre: the 0.6 m table is 192 px
MARGIN = 8
WIDTH = int(MARGIN * 2 + (TABLE_X[1] - TABLE_X[0]) * SCALE)
HEIGHT = int(MARGIN * 2 + (TABLE_Y[1] - TABLE_Y[0]) * SCALE)
DPI = 72
MAX_TITLE_CHARS = 200
GREY = (0.5, 0.5, 0.5, 1.0)
TABLE_RGBA = (0.93, 0.9, 0.85, 1.0)
Box = tuple[float, float, float, float]  # x, y, width, height in pixels
RGBA = tuple[float, float, float, float]
_FONT = FontProperties(family="DejaVu Sans", size=7)
_SQUARE = Path.unit_rectangle()
_CIRCLE = Path.unit_circle()


def _color(name: str) -> tuple[float, float, float, float]:
    for word, rgba in COLORS.items():
        if word in name:
            return rgba
    return GREY


def _px(x: float, y: float) -> tuple[float, float]:
    """Table metres to canvas pixels (origin bottom left, y up, as Agg draws)."""
    return MARGIN + (x - TABLE_X[0]) * SCALE, MARGIN + (y - TABLE_Y[0]) * SCALE


class _Canvas:
    def __init__(self) -> None:
        self.renderer = RendererAgg(WIDTH, HEIGHT, DPI)
        self.gc = self.renderer.new_gc()

    def shape(self, path: Path, box: Box, face: RGBA | None, edge: RGBA, width: float) -> None:
        """Draw ``path`` (unit square/circle) stretched over (x, y, w, h) pixels."""
        x, y, w, h = box
        self.gc.set_foreground(edge)
        self.gc.set_linewidth(width)
        self.renderer.draw_path(self.gc, path, Affine2D().scale(w, h).translate(x, y), face)

    def text(self, x: float, y: float, text: str) -> None:
        self.gc.set_foreground((0.0, 0.0, 0.0, 1.0))
        self.renderer.draw_text(self.gc, x, HEIGHT - y, text, _FONT, 0.0, ismath=False)

    def png(self, title: str) -> bytes:
        """Fast zlib level (the pictures are flat colours); the title as PNG text."""
        buffer = io.BytesIO()
        pixels = np.asarray(self.renderer.buffer_rgba())[:, :, :3]
        # None removes matplotlib's own Software entry (the stubs do not know that value)
        metadata: dict[str, Any] = {"Software": None, **({"Title": title} if title else {})}
        imsave(buffer, pixels, format="png", dpi=DPI, metadata=metadata,
               pil_kwargs={"compress_level": 1})  # fmt: skip
        return buffer.getvalue()


def _is_top(obj: Mapping[str, Any], blocks: list[Mapping[str, Any]]) -> bool:
    x, y, z = (float(v) for v in obj["pos"][:3])
    for other in blocks:
        ox, oy, oz = (float(v) for v in other["pos"][:3])
        if oz > z and abs(ox - x) < BLOCK_SIZE and abs(oy - y) < BLOCK_SIZE:
            return False
    return True


def _table(canvas: _Canvas) -> None:
    canvas.shape(_SQUARE, (0, 0, WIDTH, HEIGHT), (1.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 1.0), 0)
    x0, y0 = _px(TABLE_X[0], TABLE_Y[0])
    size = (TABLE_X[1] - TABLE_X[0]) * SCALE
    canvas.shape(_SQUARE, (x0, y0, size, size), TABLE_RGBA, (0.0, 0.0, 0.0, 1.0), 0.8)
    marks: list[tuple[float, float]] = []
    for x, y in PLACES.values():
        px, py = _px(x, y)
        marks += [(px - 3, py), (px + 3, py), (px, py - 3), (px, py + 3)]
    codes = [Path.MOVETO, Path.LINETO] * (len(marks) // 2)
    canvas.shape(Path(marks, codes), (0, 0, 1, 1), None, (0.6, 0.6, 0.6, 1.0), 0.8)


def _objects(canvas: _Canvas, objects: list[Mapping[str, Any]]) -> None:
    for obj in objects:
        if obj.get("kind") == "bowl":
            px, py = _px(float(obj["pos"][0]), float(obj["pos"][1]))
            rgba = _color(str(obj["name"]))
            r = BOWL_HALF_SIZE * SCALE
            canvas.shape(_CIRCLE, (px, py, r, r), (*rgba[:3], 0.35), rgba, 1.5)
    blocks = [o for o in objects if o.get("kind") == "block"]
    half = BLOCK_SIZE / 2 * SCALE
    for obj in sorted(blocks, key=lambda o: float(o["pos"][2])):  # lower blocks first
        x, y, z = (float(v) for v in obj["pos"][:3])
        level = max(0, round((z - BLOCK_REST_Z) / BLOCK_SIZE))
        px, py = _px(x, y)
        px, py = px + 2.5 * level, py + 2.5 * level  # a tower shows as a staircase
        box = (px - half, py - half, 2 * half, 2 * half)
        canvas.shape(_SQUARE, box, _color(str(obj["name"])), (0.0, 0.0, 0.0, 1.0), 0.6)
        if level and _is_top(obj, blocks):  # the tower's height on its top block
            canvas.text(px - 3, py - 4, str(level + 1))


def render_png(snapshot: Mapping[str, Any], title: str = "") -> bytes:
    """The table seen from above (top of the picture = top of the table, larger y)."""
    canvas = _Canvas()
    _table(canvas)
    objects = [o for o in snapshot.get("objects", []) if isinstance(o, Mapping)]
    _objects(canvas, objects)
    return canvas.png(_clean(title))


def _clean(title: str) -> str:
    """One line of printable text that PNG can carry (no NULs, no lone surrogates)."""
    text = " ".join(str(title)[: MAX_TITLE_CHARS * 4].split())
    text = text.encode("utf-8", "replace").decode("utf-8")
    return "".join(c for c in text if c.isprintable())[:MAX_TITLE_CHARS]
