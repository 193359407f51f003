"""The built-in tool tasks, one subpackage each, and the registry that finds them by name.

Every task folder has the same shape (``docs/writing-a-task.md``, "Folder shape"): its task
object in ``definition.py``, API docs in ``docs.py``, seeded generator in ``generator.py``,
data in ``data/``, simulator in ``world.py`` or ``service.py`` and, where it has one, its agent
world in ``agent_world.py``. The kinds the tasks are built from are ``toolbench.kinds``; the
protocol and types a task is written against are ``toolbench.core``. Importing this package
imports no task.
"""
