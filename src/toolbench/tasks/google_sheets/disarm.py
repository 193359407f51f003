"""Switch off the pandas/numpy features a sandboxed program must not use, in a worker only.

Programs get the real pandas and numpy, so they also get their file readers and writers, their
global option switches (``pd.options``, ``set_option``) and pandas' expression evaluator
(``DataFrame.query``/``eval``, which walks attributes on its own and has had code-injection
bugs). Blocking names in the program is
not enough: pandas dispatches method *names* given as strings (``df.agg("to_pickle", path)``).
So a worker replaces those functions on the library objects themselves with ones that raise a
clear error. The worker's audit fence (``sandbox/audit.py``) still refuses any file, network or
process access that slips past this list; this module makes the common cases fail with a message
a model can learn from. Never call it in the harness process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

WHY = "the worksheet is the only data source and sink in this task"

# pandas functions: every read_* is added at run time
_PANDAS_FUNCTIONS = (
    "eval",
    "set_option",
    "reset_option",
    "set_eng_float_format",
    "ExcelWriter",
    "ExcelFile",
    "HDFStore",
)
_FRAME_METHODS = (
    "eval",
    "query",
    "to_pickle",
    "to_parquet",
    "to_feather",
    "to_excel",
    "to_hdf",
    "to_stata",
    "to_sql",
    "to_orc",
    "to_clipboard",
    "to_gbq",
)
_NUMPY_FUNCTIONS = (
    "load",
    "save",
    "savez",
    "savez_compressed",
    "savetxt",
    "loadtxt",
    "genfromtxt",
    "fromfile",
    "fromregex",
    "memmap",
    "DataSource",
    "seterr",
    "seterrcall",
    "setbufsize",
    "set_printoptions",
    "printoptions",
)


def _refusal(qualified: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(f"{qualified} is not available in the sandbox: {WHY}")

    refuse.__name__ = refuse.__qualname__ = qualified.rpartition(".")[2]
    return refuse


class _NoOptions:
    """Stands in for ``pd.options``, whose ``.d`` is pandas' live settings dict: a program
    changing it would change how every later program in the worker reads its sheet."""

    def __getattr__(self, name: str) -> Any:
        raise PermissionError(f"pandas.options is not available in the sandbox: {WHY}")


def _no_private_dispatch(original: Callable[..., Any]) -> Callable[..., Any]:
    def apply_str(self: Any, obj: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(func, str) and func.startswith("_"):
            raise PermissionError(f"{func!r} cannot be applied by name in the sandbox")
        return original(self, obj, func, *args, **kwargs)

    return apply_str


def _no_fsspec_urls(original: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``pandas`` hands ``scheme://`` paths to fsspec, whose in-process file systems
    (``memory://``) and remote ones never touch the audit fence's ``open``; refuse them."""

    def is_fsspec_url(url: Any) -> bool:
        if original(url):
            raise PermissionError(f"URLs such as {str(url)[:60]!r} are not available: {WHY}")
        return False

    return is_fsspec_url


def disarm() -> list[str]:
    """Replace the functions; returns what was replaced (for tests)."""
    import pandas.core.apply  # deferred: pandas' lazy submodules, loaded in the sandbox worker only
    import pandas.io.common  # deferred: pandas' lazy submodules, loaded in the sandbox worker only

    replaced = ["pandas.options", "Apply._apply_str", "pandas.io.common.is_fsspec_url"]
    io_common: Any = pandas.io.common
    io_common.is_fsspec_url = _no_fsspec_urls(io_common.is_fsspec_url)
    pd.options = _NoOptions()
    # df.agg("__getattribute__", 0, "_mgr") would read private attributes by name
    apply_cls: Any = pandas.core.apply.Apply
    apply_cls._apply_str = _no_private_dispatch(apply_cls._apply_str)
    pandas_names = [n for n in dir(pd) if n.startswith("read_")] + list(_PANDAS_FUNCTIONS)
    for name in pandas_names:
        if hasattr(pd, name):
            setattr(pd, name, _refusal(f"pandas.{name}"))
            replaced.append(f"pandas.{name}")
    for cls in (pd.DataFrame, pd.Series):
        for name in _FRAME_METHODS:
            if hasattr(cls, name):
                setattr(cls, name, _refusal(f"{cls.__name__}.{name}"))
                replaced.append(f"{cls.__name__}.{name}")
    for name in _NUMPY_FUNCTIONS:
        if hasattr(np, name):
            setattr(np, name, _refusal(f"numpy.{name}"))
            replaced.append(f"numpy.{name}")
    return replaced
