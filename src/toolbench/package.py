"""The installed package itself: its version, its folder, and the cache and key folders it uses.

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


def key_dir() -> Path:
    """``$TOOLBENCH_KEY_DIR``, else ``$XDG_CONFIG_HOME/toolbench`` (``~/.config/toolbench``):
    this user's secret keys (the run log's MAC key). Outside every run folder, and hidden
    from agent processes and sandbox workers, so nothing under test can read it (whatever
    can read the key can forge a keyed log: ``runner/chain.py``). A relative
    ``XDG_CONFIG_HOME`` is ignored, as the XDG spec says."""
    env = os.environ.get("TOOLBENCH_KEY_DIR")
    if env:
        return Path(env)
    config = os.environ.get("XDG_CONFIG_HOME")
    base = Path(config) if config and os.path.isabs(config) else Path.home() / ".config"
    return base / "toolbench"
