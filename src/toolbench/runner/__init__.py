"""Running an evaluation into a run folder, and resuming it.

The run folder (``run.json``, ``samples.jsonl``, its lock and checksum chain), the engine that
solves every sample x epoch through its task with the cached, retrying model, and a run's
status and metrics. It defines no task and no model: it drives any task through the task
protocol and any model through the model protocol. Importing it gives the task and model
registries the built-ins of the layers below it that they may not import (``builtins``).
"""

from toolbench.runner.builtins import add_builtins

add_builtins()
