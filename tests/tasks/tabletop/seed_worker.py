"""The original tester's verdicts on given tables, for ``seed_differential.py``.

Runs in the original's environment, not ours (its pins: Python 3.8, NumPy 1.22.4, PyBullet
3.2.5), because NumPy 1 and NumPy 2 decide float32-against-Python-float comparisons
differently, and those decide the exact 5 cm ties this exists to probe. It imports the
original's ``tester.py`` and ``LMP_env.py`` from a folder given on the command line (a copy
of the original's ``evaluator/code_as_policies_env``; never the repository's code), puts
PyBullet DIRECT bodies at each table's positions (blocks as the original's 4 cm boxes, bowls
as fixed URDF bodies) without stepping the simulation, and calls the template's own
``check_final_state``: positions come back through the original's ``get_obj_pos``
(``np.float32`` of ``getBasePositionAndOrientation``).

Input on stdin, one JSON table a line: ``{"tester_id", "block_list", "bowl_list",
"vars", "objects": [{"name", "pos": [x, y, z]}]}``. Output on stdout, one line each:
``{"verdict": true|false}`` or ``{"error": "..."}``. Kept to Python 3.8 syntax.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import types
from typing import Any

# A bowl with its inertial frame at the link origin, so the base position PyBullet reports
# is where the bowl was put (the original's bowl.urdf is not published with its code).
BOWL_URDF = """<?xml version="1.0"?>
<robot name="bowl">
  <link name="base">
    <inertial><origin xyz="0 0 0" rpy="0 0 0"/><mass value="0.1"/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    <collision><geometry><cylinder radius="0.07" length="0.02"/></geometry></collision>
  </link>
</robot>
"""


def load_original(env_dir: str) -> tuple[types.ModuleType, types.ModuleType]:
    """tester.py and LMP_env.py as the package the original imports them from, without
    running the original's ``evaluator/__init__.py`` (it pulls in every other task)."""
    root = types.ModuleType("evaluator")
    root.__path__ = [os.path.dirname(env_dir)]
    sub = types.ModuleType("evaluator.code_as_policies_env")
    sub.__path__ = [env_dir]
    sys.modules["evaluator"] = root
    sys.modules["evaluator.code_as_policies_env"] = sub
    env_mod = importlib.import_module("evaluator.code_as_policies_env.LMP_env")
    tester_mod = importlib.import_module("evaluator.code_as_policies_env.tester")
    return tester_mod, env_mod


class Bodies:
    """Creates the PyBullet bodies of one table, as the original's reset created them."""

    def __init__(self, pybullet: types.ModuleType, bowl_urdf: str) -> None:
        self.pb = pybullet
        self.bowl_urdf = bowl_urdf

    def place(self, objects: list[dict[str, Any]]) -> dict[str, int]:
        pb = self.pb
        pb.resetSimulation()
        ids = {}
        for obj in objects:
            name = str(obj["name"])
            pos = [float(v) for v in obj["pos"]]
            if "block" in name:
                shape = pb.createCollisionShape(pb.GEOM_BOX, halfExtents=[0.02, 0.02, 0.02])
                ids[name] = pb.createMultiBody(0.01, shape, -1, basePosition=pos)
            else:
                ids[name] = pb.loadURDF(self.bowl_urdf, pos, useFixedBase=1)
        return ids


def verdict(
    tester_mod: Any, env_mod: Any, bodies: Bodies, table: dict[str, Any]
) -> dict[str, object]:
    """One table through the template's own check_final_state."""
    env = object.__new__(env_mod.PickPlaceEnv)
    env.object_list = list(table["block_list"]) + list(table["bowl_list"])
    env.obj_name_to_id = bodies.place(table["objects"])
    tester_mod.PickPlaceEnv = lambda render=True: env  # the constructor would load the robot
    try:
        tester = tester_mod.TESTERS[table["tester_id"]]()
        tester.vars_dict = table["vars"]
        tester.position_dict = {}
        ok, _ = tester.check_final_state()
    except Exception as exc:  # the original crashed on this table (or has no such template)
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"verdict": bool(ok)}


def main() -> int:
    import pybullet

    results, sys.stdout = sys.stdout, sys.stderr  # the original prints; keep it off our output
    tester_mod, env_mod = load_original(os.path.abspath(sys.argv[1]))
    pybullet.connect(pybullet.DIRECT)
    with tempfile.TemporaryDirectory() as tmp:
        urdf = os.path.join(tmp, "bowl.urdf")
        with open(urdf, "w") as fh:
            fh.write(BOWL_URDF)
        bodies = Bodies(pybullet, urdf)
        for line in sys.stdin:
            if line.strip():
                result = verdict(tester_mod, env_mod, bodies, json.loads(line))
                results.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
