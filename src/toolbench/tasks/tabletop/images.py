"""A PNG of a table snapshot, the same bytes every time for the same snapshot.

Run folders keep a picture of each sample's initial and final table, so a reader can see what
a program did without replaying it. Determinism matters because the same run twice must give
byte-identical folders: the figure is drawn with matplotlib's Agg canvas on a private
``Figure`` (no pyplot state shared between calls), at a fixed size and dpi, with the PNG's
metadata cleared (no software or time stamps). Text is drawn with ``parse_math=False`` so a
name or title containing ``$`` cannot start matplotlib's math parser.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Circle, Rectangle

from toolbench.tasks.tabletop.world import (
    BLOCK_REST_Z,
    BLOCK_SIZE,
    BOWL_HALF_SIZE,
    COLORS,
    PLACES,
    TABLE_X,
    TABLE_Y,
)

SIZE_INCHES = (4.0, 4.4)
DPI = 80
MAX_TITLE_CHARS = 90
GREY = (0.5, 0.5, 0.5, 1.0)


def _color(name: str) -> tuple[float, float, float, float]:
    for word, rgba in COLORS.items():
        if word in name:
            return rgba
    return GREY


def _wrap(text: str) -> str:
    """The title on at most two lines, so long instructions stay inside the picture."""
    text = " ".join(text.split())[:MAX_TITLE_CHARS]
    if len(text) <= 45:
        return text
    cut = text.rfind(" ", 0, 46)
    cut = cut if cut > 0 else 45
    return text[:cut] + "\n" + text[cut:].strip()


def _is_top(obj: Mapping[str, Any], blocks: list[Mapping[str, Any]]) -> bool:
    x, y, z = (float(v) for v in obj["pos"][:3])
    for other in blocks:
        ox, oy, oz = (float(v) for v in other["pos"][:3])
        if oz > z and abs(ox - x) < BLOCK_SIZE and abs(oy - y) < BLOCK_SIZE:
            return False
    return True


def _draw(fig: Figure, snapshot: Mapping[str, Any], title: str) -> None:
    ax = fig.add_axes((0.06, 0.05, 0.9, 0.8))
    ax.set_xlim(TABLE_X[0] - 0.02, TABLE_X[1] + 0.02)
    ax.set_ylim(TABLE_Y[0] - 0.02, TABLE_Y[1] + 0.02)
    ax.set_aspect("equal")
    ax.set_axis_off()  # ticks were most of the drawing time; the table's outline is enough
    ax.add_patch(
        Rectangle((TABLE_X[0], TABLE_Y[0]), TABLE_X[1] - TABLE_X[0], TABLE_Y[1] - TABLE_Y[0],
                  facecolor=(0.93, 0.9, 0.85), edgecolor="black", linewidth=0.8)
    )  # fmt: skip
    xs, ys = zip(*PLACES.values(), strict=True)
    ax.plot(xs, ys, linestyle="none", marker="+", color=(0.6, 0.6, 0.6), markersize=5)
    objects = [o for o in snapshot.get("objects", []) if isinstance(o, Mapping)]
    for obj in objects:
        if obj.get("kind") == "bowl":
            x, y = float(obj["pos"][0]), float(obj["pos"][1])
            ax.add_patch(
                Circle((x, y), BOWL_HALF_SIZE, facecolor=(*_color(str(obj["name"]))[:3], 0.35),
                       edgecolor=_color(str(obj["name"])), linewidth=1.5)
            )  # fmt: skip
    blocks = [o for o in objects if o.get("kind") == "block"]
    for obj in sorted(blocks, key=lambda o: float(o["pos"][2])):  # lower blocks first
        x, y, z = (float(v) for v in obj["pos"][:3])
        level = max(0, round((z - BLOCK_REST_Z) / BLOCK_SIZE))
        shift = 0.006 * level  # a tower shows as a staircase of its blocks
        half = BLOCK_SIZE / 2
        ax.add_patch(
            Rectangle((x - half + shift, y - half + shift), BLOCK_SIZE, BLOCK_SIZE,
                      facecolor=_color(str(obj["name"])), edgecolor="black", linewidth=0.6)
        )  # fmt: skip
        if level and _is_top(obj, blocks):  # the tower's height on its top block
            ax.text(x + shift, y + shift, str(level + 1), fontsize=6, ha="center",
                    va="center", parse_math=False)  # fmt: skip
    fig.text(0.5, 0.93, _wrap(title), ha="center", va="center", fontsize=8, parse_math=False)


def render_png(snapshot: Mapping[str, Any], title: str = "") -> bytes:
    """The table seen from above (top of the picture = top of the table, larger y)."""
    fig = Figure(figsize=SIZE_INCHES, dpi=DPI)
    FigureCanvasAgg(fig)
    _draw(fig, snapshot, title)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()
