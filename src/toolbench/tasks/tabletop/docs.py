"""Base prompts of the six LMPs, in our own words and with our own demonstrations.

The runtime appends, per call, the session history (``tabletop_ui`` only), the context line
(``objects = [...]``) and the query with its prefix and suffix, so each base prompt ends with
a complete demonstration and no trailing blank line. Demonstrations contain no comments inside
code, because ``#`` is a stop string: a model imitating a commented demo would stop at once.

The original's copies of ``parse_question`` and ``transform_shape_pts`` were empty (those LMPs
ran zero-shot); ours carry a few demonstrations, as Code as Policies' originals did.
"""

from __future__ import annotations

TABLETOP_UI = """\
from env_utils import get_obj_pos, get_obj_names, put_first_on_second, say
from plan_utils import parse_obj_name, parse_position, parse_question, transform_shape_pts
from ctrl_utils import stack_objects_in_order, point_gripper_to

objects = ['cyan block', 'gray block', 'cyan bowl', 'gray bowl']
# set the gray block down in the cyan bowl.
put_first_on_second('gray block', 'cyan bowl')
objects = ['cyan block', 'gray block', 'cyan bowl', 'gray bowl']
# now move the cyan bowl's block next to it.
say('moving the cyan block beside the cyan bowl')
target_pos = parse_position('a point 5 cm right of the cyan bowl', f'objects = {get_obj_names()}')
put_first_on_second('cyan block', target_pos)
objects = ['purple block', 'gray block', 'cyan block', 'purple bowl', 'gray bowl']
# take the block nearest the gray bowl to the middle of the table.
block_name = parse_obj_name('the block nearest the gray bowl', f'objects = {get_obj_names()}')
put_first_on_second(block_name, 'middle')
objects = ['purple block', 'gray block', 'cyan block', 'purple bowl', 'gray bowl']
# build a tower out of every block.
block_names = parse_obj_name('the blocks', f'objects = {get_obj_names()}')
stack_objects_in_order(object_names=block_names)
objects = ['purple block', 'gray block', 'cyan block', 'purple bowl', 'gray bowl']
# move every block to the bottom side.
block_names = parse_obj_name('the blocks', f'objects = {get_obj_names()}')
for block_name in block_names:
    put_first_on_second(block_name, 'bottom side')
objects = ['purple block', 'gray block', 'purple bowl', 'gray bowl']
# drop each block into the bowl of its own colour.
block_names = parse_obj_name('the blocks', f'objects = {get_obj_names()}')
bowl_names = parse_obj_name('the bowls', f'objects = {get_obj_names()}')
for block_name in block_names:
    bowl_name = block_name.replace('block', 'bowl')
    if bowl_name in bowl_names:
        put_first_on_second(block_name, bowl_name)
objects = ['purple block', 'gray block', 'cyan block', 'gray bowl']
# pick the block that is second from the bottom and put it in the top right corner.
block_name = parse_obj_name('the second block from the bottom', f'objects = {get_obj_names()}')
put_first_on_second(block_name, 'top right corner')
objects = ['purple block', 'gray block', 'cyan block', 'gray bowl']
# every block that sits right of the gray bowl goes to the left side.
block_names = parse_obj_name('the blocks to the right of the gray bowl', f'objects = {get_obj_names()}')
for block_name in block_names:
    put_first_on_second(block_name, 'left side')
objects = ['purple block', 'gray block', 'cyan block', 'gray bowl']
# line the blocks up horizontally.
block_names = parse_obj_name('the blocks', f'objects = {get_obj_names()}')
line_pts = parse_position(f'a horizontal line with {len(block_names)} points', f'objects = {get_obj_names()}')
for i in range(len(block_names)):
    put_first_on_second(block_names[i], line_pts[i])
objects = ['purple block', 'gray block', 'gray bowl']
# put the purple block in whichever corner is farthest from the gray bowl.
corner_pos = parse_position('the corner farthest from the gray bowl', f'objects = {get_obj_names()}')
put_first_on_second('purple block', corner_pos)
objects = ['purple block', 'gray block', 'gray bowl']
# trace a diagonal with the gripper.
pts = parse_position('a diagonal line with 3 points', f'objects = {get_obj_names()}')
for pt in pts:
    point_gripper_to(pt)
objects = ['purple block', 'gray block', 'gray bowl']
# how many blocks are on the table?
answer = parse_question('how many blocks are on the table', f'objects = {get_obj_names()}')
say(answer)"""  # noqa: E501

PARSE_OBJ_NAME = """\
import numpy as np
from env_utils import get_obj_pos, get_obj_names, get_bbox
from utils import get_obj_positions_np

objects = ['cyan block', 'gray block', 'cyan bowl', 'gray bowl']
# the blocks.
names = []
for name in objects:
    if 'block' in name:
        names.append(name)
ret_val = names
objects = ['cyan block', 'gray block', 'purple block', 'cyan bowl']
# the block nearest the cyan bowl.
bowl_pos = get_obj_pos('cyan bowl')
ret_val = None
best_dist = None
for name in objects:
    if 'block' in name:
        dist = np.linalg.norm(get_obj_pos(name) - bowl_pos)
        if best_dist is None or dist < best_dist:
            best_dist = dist
            ret_val = name
objects = ['cyan block', 'gray block', 'purple block', 'cyan bowl']
# the second block from the bottom.
block_names = []
keys = []
for name in objects:
    if 'block' in name:
        pos = get_obj_pos(name)
        block_names.append(name)
        keys.append(pos[1])
order = np.argsort(keys, kind='stable')
ret_val = block_names[order[1]]
objects = ['cyan block', 'gray block', 'purple block', 'gray bowl']
# the blocks to the right of the gray bowl.
bowl_pos = get_obj_pos('gray bowl')
ret_val = []
for name in objects:
    if 'block' in name:
        if get_obj_pos(name)[0] > bowl_pos[0]:
            ret_val.append(name)
objects = ['cyan block', 'gray block', 'cyan bowl', 'gray bowl']
# the biggest object.
ret_val = None
best_area = None
for name in objects:
    bbox = get_bbox(name)
    area = (bbox[1][0] - bbox[0][0]) * (bbox[1][1] - bbox[0][1])
    if best_area is None or area > best_area:
        best_area = area
        ret_val = name
objects = ['cyan block', 'gray block', 'cyan bowl', 'gray bowl']
# the cyan block.
ret_val = 'cyan block'"""

PARSE_POSITION = """\
import numpy as np
from shapely.geometry import *
from shapely.affinity import *
from env_utils import denormalize_xy, get_obj_pos, get_obj_names
from ctrl_utils import make_line, interpolate_pts_on_line

# a point 5 cm right of the cyan bowl.
ret_val = get_obj_pos('cyan bowl') + np.array([0.05, 0.0])
# a vertical line with 3 points.
start_pos = denormalize_xy([0.5, 0.0])
end_pos = denormalize_xy([0.5, 1.0])
line = make_line(start=start_pos, end=end_pos)
ret_val = interpolate_pts_on_line(line=line, n=3)
# the corner nearest the gray block.
ref_pos = get_obj_pos('gray block')
ret_val = None
best_dist = None
for corner_name in ['top left corner', 'top right corner', 'bottom left corner', 'bottom right corner']:
    corner_pos = get_obj_pos(corner_name)
    dist = np.linalg.norm(corner_pos - ref_pos)
    if best_dist is None or dist < best_dist:
        best_dist = dist
        ret_val = corner_pos
# the middle of the table.
ret_val = denormalize_xy([0.5, 0.5])
# the top left corner.
ret_val = get_obj_pos('top left corner')
# a point halfway between the two bowls.
ret_val = (get_obj_pos('cyan bowl') + get_obj_pos('gray bowl')) / 2"""  # noqa: E501

PARSE_QUESTION = """\
from env_utils import get_obj_pos, get_obj_names, is_obj_visible

objects = ['cyan block', 'gray block', 'cyan bowl']
# how many blocks are on the table.
count = 0
for name in objects:
    if 'block' in name:
        count = count + 1
ret_val = count
objects = ['cyan block', 'gray block', 'cyan bowl']
# is the gray block left of the cyan bowl.
ret_val = bool(get_obj_pos('gray block')[0] < get_obj_pos('cyan bowl')[0])
objects = ['cyan block', 'gray block', 'cyan bowl']
# is there a purple bowl.
ret_val = is_obj_visible('purple bowl')"""

TRANSFORM_SHAPE_PTS = """\
import numpy as np
from shapely.geometry import *
from shapely.affinity import *

# move the points 10 cm to the left.
new_shape_pts = np.array(shape_pts) + np.array([-0.1, 0.0])
# make it twice as big around its centre.
center = np.mean(np.array(shape_pts), axis=0)
new_shape_pts = (np.array(shape_pts) - center) * 2 + center
# turn it by 90 degrees.
new_shape_pts = np.array(rotate(LineString(shape_pts), 90, origin='centroid').coords)"""

FGEN = """\
import numpy as np
from shapely.geometry import *
from shapely.affinity import *
from env_utils import get_obj_pos, get_obj_names, put_first_on_second

# define function: total = add_up(numbers).
def add_up(numbers):
    total = 0
    for number in numbers:
        total = total + number
    return total
# define function: pt = shift_up(pt, dist).
def shift_up(pt, dist):
    return pt + np.array([0.0, dist])
# define function: line = make_vertical_line(x, y_start, y_end).
def make_vertical_line(x, y_start, y_end):
    return LineString([[x, y_start], [x, y_end]])
# define function: pt = point_along(line, fraction).
def point_along(line, fraction):
    return np.array(line.interpolate(fraction, normalized=True).coords[0])
# define function: move_all(object_names, place).
def move_all(object_names, place):
    for name in object_names:
        put_first_on_second(name, place)"""

BASE_PROMPTS: dict[str, str] = {
    "tabletop_ui": TABLETOP_UI,
    "parse_obj_name": PARSE_OBJ_NAME,
    "parse_position": PARSE_POSITION,
    "parse_question": PARSE_QUESTION,
    "transform_shape_pts": TRANSFORM_SHAPE_PTS,
    "fgen": FGEN,
}
