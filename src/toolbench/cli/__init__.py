"""The ``toolbench`` command, one module per command family.

``main`` parses and dispatches; ``run`` (run, prompt), ``report``, ``data``, ``serve``,
``listing`` and ``aware`` / ``aware_eval`` hold the command bodies, imported only when their
command runs so that ``--help`` stays fast.
"""

import toolbench.runner  # noqa: F401  (the registry's built-in tasks of higher layers: aware)
from toolbench.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
