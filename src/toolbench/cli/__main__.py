"""``python -m toolbench.cli``: the same as the ``toolbench`` command."""

import sys

from toolbench.cli.main import main

sys.exit(main())
