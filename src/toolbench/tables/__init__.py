"""Results as tables of plain data, and the statistics in their cells.

A ``Grid`` (``grid.py``) is a titled table whose cells are text or an ``Estimate``, a mean
with its seeded bootstrap interval (``bootstrap.py``); the terminal, the HTML report and the
CSV/Markdown exports render the same grids. ``runs.py`` says what a table reads of a run.

It sits below every package that shows results (``toolbench.report`` and the awareness
evaluation in ``toolbench.aware`` alike) and imports none of them: which tables a run gets is
decided above, here is only how a table holds and prints its numbers.
"""
