"""The ToolBench data folder layout and demonstration file format, read and written unchanged.

Files only: reading and writing API docs, demonstrations and ``test.jsonl`` in the original
layout, and their content digests. It is not where samples come from: loading and validating a
task's data is the task's job (``toolbench.kinds.folder``), and generating data is each task's
seeded generator.
"""
