"""A plugin package as pip would install it, for tests of toolbench's entry points.

``make_site`` writes one module and the ``dist-info`` (METADATA, entry_points.txt) that
``importlib.metadata`` reads; ``toolbench_cli`` runs ``toolbench`` in a subprocess that finds
it on ``PYTHONPATH``, with this checkout's source still first (as the test run has it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def make_site(site: Path, module: str, source: str, group: str, entry: str) -> Path:
    """``site`` holding ``module.py`` (``source``) and a distribution whose entry point
    ``entry`` ("name = module:attr") is in ``group`` (e.g. ``toolbench.models``)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source)
    dist = module.replace("_", "-")
    info = site / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    return site


def toolbench_cli(site: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``toolbench ARGS`` in a subprocess that finds the plugin in ``site``; its cache under
    ``tmp``, its tables 300 columns wide (rows unwrapped)."""
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "TOOLBENCH_CACHE_DIR": str(tmp / "cache")}
    env["COLUMNS"] = "300"
    return subprocess.run(
        [sys.executable, "-m", "toolbench.cli", *args],
        env=env,
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=300,
    )
