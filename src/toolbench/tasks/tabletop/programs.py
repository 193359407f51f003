"""The program texts the experts write: one plan per template, one ``ret_val`` program per
sub-LMP phrasing, one ``def`` per helper that function generation asks for.

The phrasings the top-level plans send to the sub-LMPs are the only ones the sub-LMP experts
need to understand; they are defined here side by side so the two cannot drift apart. Names
and places enter program text only through ``repr``, so no query can break out of a string.
"""

from __future__ import annotations

import ast
import re

from toolbench.tasks.tabletop.templates import DIRECTION_XY, LINE_ENDS, MAGNITUDES, NTH

OBJECTS_ARG = "f'objects = {get_obj_names()}'"
CORNER_LIST = "['top left corner', 'top right corner', 'bottom left corner', 'bottom right corner']"
SIDE_LIST = "['top side', 'right side', 'bottom side', 'left side']"


def _q(text: str) -> str:
    return repr(text)


def _lines(*rows: str) -> str:
    return "\n".join(rows)


def _parse(lmp: str, phrase: str, target: str) -> str:
    return f"{target} = {lmp}({_q(phrase)}, {OBJECTS_ARG})"


def _toward(distance: str) -> str:
    return "closest to" if distance == "closest" else "farthest from"


# -- tabletop_ui --------------------------------------------------------------------------


_BLOCKS = "block_names = parse_obj_name('the blocks', {ctx})"
_BOWLS = "bowl_names = parse_obj_name('the bowls', {ctx})"
_EACH_TO = ("for block_name in block_names:", "    put_first_on_second(block_name, {to})")
_INDEXED = ("for i in range(min(len(block_names), len(place_names))):",
            "    put_first_on_second(block_names[i], place_names[i])")  # fmt: skip

# What the plans ask the sub-LMPs, per template (slot values filled in as plain text).
PHRASES = {
    "SI_5": "the blocks to the {direction} of the {bowl}",
    "SI_6": "the block {toward} the {bowl}",
    "SI_7": "the {nth} block from the {direction}",
    "UI_3": "a point {magnitude} to the {direction} of the {bowl}",
    "UI_4": "the corner {toward} the {bowl}",
}

# The expert's plan per template: lines whose {fields} are Python literals (see ui_program).
PLANS: dict[str, tuple[str, ...]] = {
    "SI_0": ("put_first_on_second({block}, {object1})",),
    "SI_1": (_BLOCKS, "stack_objects_in_order(object_names=block_names)"),
    "SI_2": (_BLOCKS, *_EACH_TO),
    "SI_3": (_BLOCKS, *_EACH_TO),
    "SI_4": (_BLOCKS, _BOWLS, "for block_name in block_names:",
             "    bowl_name = block_name.replace('block', 'bowl')",
             "    if bowl_name in bowl_names:",
             "        put_first_on_second(block_name, bowl_name)"),
    "SI_5": ("block_names = parse_obj_name({phrase}, {ctx})", *_EACH_TO),
    "SI_6": ("block_name = parse_obj_name({phrase}, {ctx})",
             "put_first_on_second(block_name, {to})"),
    "SI_7": ("block_name = parse_obj_name({phrase}, {ctx})",
             "put_first_on_second(block_name, {to})"),
    "UI_0": (_BLOCKS, f"place_names = {CORNER_LIST}", *_INDEXED),
    "UI_1": (_BLOCKS, _BOWLS,
             "pairs = pair_blocks_with_other_colored_bowls(block_names=block_names, "
             "bowl_names=bowl_names)",
             "for pair in pairs:",
             "    put_first_on_second(pair[0], pair[1])"),
    "UI_2": (_BLOCKS, "put_first_on_second(block_names[0], {to})",
             "stack_objects_in_order(object_names=block_names)"),
    "UI_3": ("target_pos = parse_position({phrase}, {ctx})",
             "put_first_on_second({block}, target_pos)"),
    "UI_4": ("corner_pos = parse_position({phrase}, {ctx})",
             "put_first_on_second({block}, corner_pos)"),
    "UI_5": (_BLOCKS,
             "line_pts = parse_position(f'a {line} line with {{len(block_names)}} points', {ctx})",
             "for i in range(len(block_names)):",
             "    put_first_on_second(block_names[i], line_pts[i])"),
    "UI_6": (_BLOCKS, f"place_names = {SIDE_LIST}", *_INDEXED),
}  # fmt: skip


def ui_program(tid: str, s: dict[str, str]) -> str:
    """The expert's top-level plan for one template instance. Slot values enter the code as
    string literals (``repr``); only ``line``, one of three fixed words, is spliced into an
    f-string's text."""
    values = {key: _q(value) for key, value in s.items()}
    if tid in PHRASES:
        values["phrase"] = _q(PHRASES[tid].format(**s, toward=_toward(s.get("distance", ""))))
    values["to"] = _q(s.get("corner_or_side", s.get("bowl", "")))
    values["line"] = s.get("line", "") if s.get("line") in LINE_ENDS else "vertical"
    values["ctx"] = OBJECTS_ARG
    return "\n".join(PLANS[tid]).format(**values)


def naive_ui_program(tid: str, s: dict[str, str], objects: list[str]) -> str | None:
    """The baseline's own plans where it differs from the expert (None: same plan)."""
    blocks = [name for name in objects if "block" in name]
    if tid in ("UI_0", "UI_6"):
        namer = "get_corner_name" if tid == "UI_0" else "get_side_name"
        return _lines(
            f"for block_name in {blocks!r}:",
            f"    put_first_on_second(block_name, {namer}(get_obj_pos(block_name)))",
        )
    if tid == "UI_1":
        bowls = [name for name in objects if "bowl" in name]
        rows = [
            f"put_first_on_second({_q(b)}, {_q(bowls[(i + 1) % len(bowls)])})"
            for i, b in enumerate(blocks)
            if bowls
        ]
        return _lines(*rows) if rows else "say('there are no bowls')"
    if tid == "SI_6":  # hands the instruction's own words to parse_obj_name
        phrase = f"the block {s['distance']} to the {s['bowl']}"
        return _lines(
            _parse("parse_obj_name", phrase, "block_name"),
            f"put_first_on_second(block_name, {_q(s['corner_or_side'])})",
        )
    if tid == "UI_4":  # knows only the nearest corner, by name
        corner = f"get_corner_name(get_obj_pos({_q(s['bowl'])}))"
        return f"put_first_on_second({_q(s['block'])}, {corner})"
    if tid == "UI_5":  # from the middle outward, 10 cm apart, whatever stands there
        step = {"vertical": (0.0, 0.1), "horizontal": (0.1, 0.0), "diagonal": (0.07, 0.07)}
        dx, dy = step.get(s["line"], (0.0, 0.1))
        return _lines(
            f"for i in range({len(blocks)}):",
            f"    put_first_on_second({blocks!r}[i], np.array([{dx} * i, -0.5 + {dy} * i]))",
        )
    return None


def naive_obj_name_program(query: str, objects: list[str]) -> str:
    """The baseline's parse_obj_name: its demonstrations show only "the block nearest the
    ...", so any "the block <word> to/from the <bowl>" gets the nearest block."""
    text = " ".join(query.lower().split())
    found = re.fullmatch(r"the block \w+ (?:to|from) the (.+)", text)
    if found:
        return obj_name_program(f"the block closest to the {found.group(1)}", objects)
    return obj_name_program(query, objects)


# -- parse_obj_name -----------------------------------------------------------------------

_OF_KIND = _lines(
    "names = []",
    "for name in objects:",
    "    if {kind!r} in name:",
    "        names.append(name)",
    "ret_val = names",
)


def obj_name_program(query: str, objects: list[str]) -> str:
    """``ret_val`` for one object-naming phrase."""
    text = " ".join(query.lower().split())
    if text in ("the blocks", "the bowls", "blocks", "bowls"):
        return _OF_KIND.format(kind="block" if "block" in text else "bowl")
    found = re.fullmatch(r"the block (closest to|farthest from) the (.+)", text)
    if found:
        better = "<" if found.group(1) == "closest to" else ">"
        return _lines(
            f"bowl_pos = get_obj_pos({_q(found.group(2))})",
            "ret_val = None",
            "best_dist = None",
            "for name in objects:",
            "    if 'block' in name:",
            "        dist = np.linalg.norm(get_obj_pos(name) - bowl_pos)",
            f"        if best_dist is None or dist {better} best_dist:",
            "            best_dist = dist",
            "            ret_val = name",
        )
    found = re.fullmatch(
        r"the (first|second|third|fourth) block from the (top|left|bottom|right)", text
    )
    if found:
        dx, dy = DIRECTION_XY[found.group(2)]
        return _lines(
            "block_names = []",
            "keys = []",
            "for name in objects:",
            "    if 'block' in name:",
            "        pos = get_obj_pos(name)",
            "        block_names.append(name)",
            f"        keys.append(-({dx} * pos[0] + {dy} * pos[1]))",
            "order = np.argsort(keys, kind='stable')",
            f"ret_val = block_names[order[{NTH.index(found.group(1))}]]",
        )
    found = re.fullmatch(r"the blocks to the (top|left|bottom|right) of the (.+)", text)
    if found:
        dx, dy = DIRECTION_XY[found.group(1)]
        return _lines(
            f"bowl_pos = get_obj_pos({_q(found.group(2))})",
            "ret_val = []",
            "for name in objects:",
            "    if 'block' in name:",
            "        offset = get_obj_pos(name) - bowl_pos",
            f"        if {dx} * offset[0] + {dy} * offset[1] > 0:",
            "            ret_val.append(name)",
        )
    name = text[4:] if text.startswith("the ") else text
    if name in objects:
        return f"ret_val = {_q(name)}"
    return "ret_val = None"


# -- parse_position -----------------------------------------------------------------------


def position_program(query: str) -> str:
    """``ret_val`` for one position phrase."""
    text = " ".join(query.lower().split())
    found = re.fullmatch(r"a point (10 cm|0\.2 m) to the (top|left|bottom|right) of the (.+)", text)
    if found:
        m = MAGNITUDES[found.group(1)]
        dx, dy = DIRECTION_XY[found.group(2)]
        return f"ret_val = get_obj_pos({_q(found.group(3))}) + np.array([{dx * m}, {dy * m}])"
    found = re.fullmatch(r"the corner (closest to|farthest from) the (.+)", text)
    if found:
        better = "<" if found.group(1) == "closest to" else ">"
        return _lines(
            f"bowl_pos = get_obj_pos({_q(found.group(2))})",
            "ret_val = None",
            "best_dist = None",
            f"for corner_name in {CORNER_LIST}:",
            "    corner_pos = get_obj_pos(corner_name)",
            "    dist = np.linalg.norm(corner_pos - bowl_pos)",
            f"    if best_dist is None or dist {better} best_dist:",
            "        best_dist = dist",
            "        ret_val = corner_pos",
        )
    found = re.fullmatch(r"an? (vertical|horizontal|diagonal) line with (\d{1,3}) points", text)
    if found:
        (x0, y0), (x1, y1) = LINE_ENDS[found.group(1)]
        return _lines(
            f"start_pos = denormalize_xy([{x0}, {y0}])",
            f"end_pos = denormalize_xy([{x1}, {y1}])",
            "line = make_line(start=start_pos, end=end_pos)",
            f"ret_val = interpolate_pts_on_line(line=line, n={int(found.group(2))})",
        )
    place = text[4:] if text.startswith("the ") else text
    return f"ret_val = get_obj_pos({_q(place)})"


# -- fgen ---------------------------------------------------------------------------------

FUNCTIONS: dict[str, str] = {
    "make_line": _lines(
        "def make_line(start, end):",
        "    return LineString([start, end])",
    ),
    "interpolate_pts_on_line": _lines(
        "def interpolate_pts_on_line(line, n):",
        "    if n == 1:",
        "        return [np.array(line.interpolate(0.5, normalized=True).coords[0])]",
        "    points = []",
        "    for i in range(n):",
        "        point = line.interpolate(i / (n - 1), normalized=True)",
        "        points.append(np.array(point.coords[0]))",
        "    return points",
    ),
    "stack_objects_in_order": _lines(
        "def stack_objects_in_order(object_names):",
        "    for i in range(len(object_names) - 1):",
        "        put_first_on_second(object_names[i + 1], object_names[i])",
    ),
    "pair_blocks_with_other_colored_bowls": _lines(
        "def pair_blocks_with_other_colored_bowls(block_names, bowl_names):",
        "    pairs = []",
        "    free_bowls = list(bowl_names)",
        "    for block_name in block_names:",
        "        chosen = None",
        "        for bowl_name in free_bowls:",
        "            if chosen is None and not same_color(block_name, bowl_name):",
        "                chosen = bowl_name",
        "        if chosen is not None:",
        "            free_bowls.remove(chosen)",
        "            pairs.append([block_name, chosen])",
        "        elif len(pairs) > 0 and len(free_bowls) > 0:",
        "            last = pairs[-1]",
        "            pairs[-1] = [last[0], free_bowls[0]]",
        "            pairs.append([block_name, last[1]])",
        "            free_bowls.remove(free_bowls[0])",
        "    return pairs",
    ),
    "same_color": _lines(
        "def same_color(name1, name2):",
        "    return get_color(name1) == get_color(name2)",
    ),
}


def called_name(signature: str) -> str | None:
    """The function an fgen query asks for: the callee of its (first) bare-name call."""
    try:
        tree = ast.parse(signature.strip()[:MAX_SIGNATURE], mode="exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        found = re.match(r"\s*(?:\w+\s*=\s*)?([A-Za-z_]\w*)\s*\(", signature)
        return found.group(1) if found else None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id
    return None


MAX_SIGNATURE = 2000


def function_program(signature: str) -> str:
    """The ``def`` for a helper; a do-nothing one for a name the experts never call."""
    name = called_name(signature)
    if name is None or not name.isidentifier():
        return "def missing_function(*args, **kwargs):\n    return None"
    return FUNCTIONS.get(name, f"def {name}(*args, **kwargs):\n    return None")
