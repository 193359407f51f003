"""The built-in tool tasks, one subpackage each, and the pieces they are built from.

Each task folder holds its simulator, seeded data generator, API docs, demonstrations and data;
the shared modules are the task kinds (one-call solve loop, program tasks, curl tasks), data
folder loading, scoring helpers and the registry. Importing this package imports no task. The
protocol and types a task is written against are not here (``toolbench.core``), nor is the
runner that drives a task.
"""
