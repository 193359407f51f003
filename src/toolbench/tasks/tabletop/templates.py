"""The 15 instruction templates and their attribute values, as the original tester had them.

These strings are dataset constants: instructions in our data and in the original's must read
the same, so an expert or baseline that matches one matches the other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Template:
    tester_id: str
    text: str
    blocks: tuple[int, int]  # inclusive range of block counts
    bowls: tuple[int, int]

    @property
    def slots(self) -> tuple[str, ...]:
        """Placeholders in the order the original filled them (alphabetical)."""
        return tuple(sorted(set(re.findall(r"\{(\w+)\}", self.text))))


TEMPLATES: dict[str, Template] = {
    t.tester_id: t
    for t in (
        Template("SI_0", "Pick up the {block} and place it on the {object1}", (2, 4), (2, 4)),
        Template("SI_1", "Stack all the blocks", (2, 4), (1, 4)),
        Template("SI_2", "Put all the blocks on the {corner_or_side}", (2, 4), (1, 3)),
        Template("SI_3", "Put the blocks in the {bowl}", (2, 4), (1, 4)),
        Template("SI_4", "Put all the blocks in the bowls with matching colors", (4, 4), (4, 4)),
        Template(
            "SI_5",
            "Pick up all blocks that are located to the {direction} of the {bowl} and place "
            "them on the {corner_or_side}",
            (4, 4),
            (1, 3),
        ),
        Template(
            "SI_6",
            "Pick up the block {distance} to the {bowl} and place it on the {corner_or_side}",
            (4, 4),
            (2, 3),
        ),
        Template(
            "SI_7",
            "Pick up the {nth} block from the {direction} and place it on the {corner_or_side}",
            (4, 4),
            (1, 3),
        ),
        Template("UI_0", "Put all the blocks in different corners", (4, 4), (1, 3)),
        Template("UI_1", "Put the blocks in the bowls with mismatched colors", (4, 4), (4, 4)),
        Template("UI_2", "Stack all the blocks on the {corner_or_side}", (2, 4), (1, 3)),
        Template(
            "UI_3",
            "Pick up the {block} and place it {magnitude} to the {direction} of the {bowl}",
            (1, 4),
            (1, 4),
        ),
        Template(
            "UI_4",
            "Pick up the {block} and place it in the corner {distance} to the {bowl}",
            (1, 4),
            (1, 3),
        ),
        Template("UI_5", "Put all the blocks in a {line} line", (3, 4), (0, 0)),
        Template("UI_6", "Put all the blocks in different sides", (4, 4), (1, 3)),
    )
}

COLOR_WORDS = ("blue", "red", "green", "orange", "yellow", "pink", "cyan", "brown")
BLOCKS = tuple(f"{c} block" for c in COLOR_WORDS)
BOWLS = tuple(f"{c} bowl" for c in COLOR_WORDS)
CORNER_OR_SIDE = (
    "left side",
    "top left corner",
    "top side",
    "top right corner",
    "bottom right corner",
    "bottom side",
    "bottom left corner",
    "right side",
)
DIRECTIONS = ("top", "left", "bottom", "right")
DISTANCES = ("closest", "farthest")
MAGNITUDES = {"10 cm": 0.1, "0.2 m": 0.2}
NTH = ("first", "second", "third", "fourth")
LINES = ("horizontal", "vertical", "diagonal")
# direction -> unit offset in table xy ("top" is larger y, "right" larger x)
DIRECTION_XY = {"top": (0.0, 1.0), "bottom": (0.0, -1.0), "left": (-1.0, 0.0), "right": (1.0, 0.0)}
# Where our expert lays out "a {line} line": n evenly spaced points between these normalised
# ends (table edges 5 cm in), so the generator can drop scenes where a block already stands on
# one of those points and would be buried under another.
LINE_ENDS = {
    "vertical": ((0.5, 0.0), (0.5, 1.0)),
    "horizontal": ((0.0, 0.5), (1.0, 0.5)),
    "diagonal": ((0.0, 0.0), (1.0, 1.0)),
}


def line_points(line: str, n: int) -> list[tuple[float, float]]:
    """The n table points of a line, in metres."""
    (x0, y0), (x1, y1) = LINE_ENDS[line]
    out = []
    for i in range(n):
        t = i / (n - 1) if n > 1 else 0.5
        x, y = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
        out.append((x * 0.5 - 0.25, y * 0.5 - 0.75))
    return out


# slot -> the values the original drew it from (block/bowl/object1 come from the scene)
CHOICES: dict[str, tuple[str, ...]] = {
    "corner_or_side": CORNER_OR_SIDE,
    "direction": DIRECTIONS,
    "distance": DISTANCES,
    "line": LINES,
    "magnitude": tuple(MAGNITUDES),
    "nth": NTH,
}
