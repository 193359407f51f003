"""The ``toolbench`` command, one module per command family.

``main`` parses and dispatches; ``run`` (run, prompt), ``report``, ``data``, ``serve``,
``listing`` and ``aware`` / ``aware_eval`` hold the command bodies, imported only when their
command runs so that ``--help`` stays fast.
"""

from toolbench.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
