"""A PNG of a table snapshot, the same bytes every time for the same snapshot.

Run folders keep a picture of each sample's initial and final table, so a reader can see what
a program did without replaying it. Two pictures per sample must cost little next to the
sample itself, so instead of a ``Figure`` with axes (whose tick and text layout took ~70 ms
a picture) we draw a handful of paths straight onto matplotlib's Agg renderer in pixel
coordinates, over an empty table drawn once per thread, and write the PNG ourselves
(``encode_png``: ~0.5 ms where Pillow took ~1.9). Determinism: a fixed canvas restored before
each picture, no time or software stamps, and text drawn with ``ismath=False`` so a ``$`` in
a name or title cannot start the math parser.
"""

from __future__ import annotations

import struct
import threading
import zlib
from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.font_manager import FontProperties
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
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _color(name: str) -> tuple[float, float, float, float]:
    for word, rgba in COLORS.items():
        if word in name:
            return rgba
    return GREY


def _px(x: float, y: float) -> tuple[float, float]:
    """Table metres to canvas pixels (origin bottom left, y up, as Agg draws)."""
    return MARGIN + (x - TABLE_X[0]) * SCALE, MARGIN + (y - TABLE_Y[0]) * SCALE


class _Canvas:
    """One Agg canvas per thread, reused: the empty table is drawn once and restored before
    each picture (Agg's blitting: ``copy_from_bbox`` / ``restore_region``, the same pixels as
    drawing it again)."""

    def __init__(self) -> None:
        self.renderer = RendererAgg(WIDTH, HEIGHT, DPI)
        self.gc = self.renderer.new_gc()
        _table(self)
        self.background = self.renderer.copy_from_bbox(self.renderer.bbox)

    def reset(self) -> None:
        self.renderer.restore_region(self.background)

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
        pixels = np.asarray(self.renderer.buffer_rgba())[:, :, :3]
        return encode_png(pixels, title)


_CANVASES = threading.local()


def _canvas() -> _Canvas:
    canvas = getattr(_CANVASES, "canvas", None)
    if canvas is None:
        canvas = _CANVASES.canvas = _Canvas()
    canvas.reset()
    return canvas


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack("!I", len(body)) + kind + body + struct.pack("!I", zlib.crc32(kind + body))


def encode_png(rgb: np.ndarray, title: str = "") -> bytes:
    """An 8-bit RGB PNG of ``rgb`` (rows top to bottom): the header, the resolution, the title
    as text (``tEXt`` when Latin-1 can carry it, else UTF-8 ``iTXt``, as Pillow writes them),
    and the rows unfiltered in one zlib stream at level 1 (flat colours compress well anyway;
    Pillow's adaptive filtering cost three times the drawing)."""
    height, width, _ = rgb.shape
    rows = np.zeros((height, 1 + width * 3), dtype=np.uint8)  # filter byte 0: None
    pixels = rows[:, 1:].reshape(height, width, 3)  # a view of the rows after their filter byte
    for channel in range(3):  # per channel: numpy's inner loop runs along a whole row
        pixels[:, :, channel] = rgb[:, :, channel]
    per_metre = int(DPI / 0.0254 + 0.5)
    chunks = [
        _chunk(b"IHDR", struct.pack("!IIBBBBB", width, height, 8, 2, 0, 0, 0)),
        _chunk(b"pHYs", struct.pack("!IIB", per_metre, per_metre, 1)),
    ]
    if title:
        try:
            chunks.append(_chunk(b"tEXt", b"Title\0" + title.encode("latin-1")))
        except UnicodeEncodeError:
            chunks.append(_chunk(b"iTXt", b"Title\0\0\0\0\0" + title.encode("utf-8")))
    chunks += [_chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)), _chunk(b"IEND", b"")]
    return PNG_SIGNATURE + b"".join(chunks)


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
    canvas = _canvas()
    objects = [o for o in snapshot.get("objects", []) if isinstance(o, Mapping)]
    _objects(canvas, objects)
    return canvas.png(_clean(title))


def _clean(title: str) -> str:
    """One line of printable text that PNG can carry (no NULs, no lone surrogates)."""
    text = " ".join(str(title)[: MAX_TITLE_CHARS * 4].split())
    text = text.encode("utf-8", "replace").decode("utf-8")
    return "".join(c for c in text if c.isprintable())[:MAX_TITLE_CHARS]
