"""The installed package itself: its version, its folder and the cache folder it uses.

Kept apart from ``toolbench/__init__.py`` (the public API, which may import any layer) so the
lowest layers (the sandbox's path fences, its execution memo, the report's page footer) can
read these without reaching above themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"

#: The folder of the ``toolbench`` package (sandbox workers may read the code under it).
PACKAGE_DIR = Path(__file__).parent


def default_cache_dir() -> Path:
    """``$TOOLBENCH_CACHE_DIR``, else ``~/.cache/toolbench``: response cache, execution memo
    and embeddings."""
    env = os.environ.get("TOOLBENCH_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "toolbench"
