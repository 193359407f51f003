"""Loaders that turn external datasets into awareness instances (see toolbench.aware.schema).

Each loader takes a file or a folder of files and returns instances in a deterministic order;
bad input is a one-line ``UserError`` naming the file and the record. ``SOURCES`` maps the
``--source KIND:PATH`` kinds to their loaders.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolbench.aware.schema import Instance
from toolbench.aware.sources.apibank import load_apibank, read_apibank
from toolbench.aware.sources.bfcl import load_bfcl
from toolbench.aware.sources.stabletoolbench import load_api_pool, load_stabletoolbench

Loader = Callable[[Path], list[Instance]]

SOURCES: dict[str, Loader] = {
    "apibank": load_apibank,
    "toolbench": load_stabletoolbench,
    "bfcl": load_bfcl,
}

__all__ = [
    "SOURCES",
    "Loader",
    "load_api_pool",
    "load_apibank",
    "load_bfcl",
    "load_stabletoolbench",
    "read_apibank",
]
