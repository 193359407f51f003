"""The store as a ``gymnasium`` environment, the interface RL and agent research already use.

``WebShopEnv`` (registered as ``toolbench/WebShop-v0``) wraps the same session, reward and
25-turn cap as the evaluated task. gymnasium is the optional ``envs`` extra
(``pip install 'toolbench[envs]'``): importing this package never needs it, and using the
environment without it is an ``ImportError`` that says how to install it. The id is
registered when this package is imported with gymnasium present, so either
``import toolbench.envs`` before ``gymnasium.make("toolbench/WebShop-v0")``, or let
gymnasium import it: ``gymnasium.make("toolbench.envs:toolbench/WebShop-v0")``.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Any

ENV_ID = "toolbench/WebShop-v0"
INSTALL_HINT = "toolbench.envs needs gymnasium: pip install 'toolbench[envs]'"

__all__ = ["ENV_ID", "WebShopEnv", "register"]


def _gymnasium() -> Any:
    try:
        return importlib.import_module("gymnasium")
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc


def register() -> None:
    """Register ``toolbench/WebShop-v0`` with gymnasium (once; harmless to repeat)."""
    gymnasium = _gymnasium()
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=_make_env)


def _make_env(**kwargs: Any) -> Any:
    """What ``gymnasium.make`` calls: a ``WebShopEnv`` (the class is imported only now)."""
    return _web_shop().WebShopEnv(**kwargs)


def _web_shop() -> Any:
    """``toolbench.envs.web_shop``, imported on first use, on purpose: it imports gymnasium
    (an optional extra) and the web_shop store at import, which ``import toolbench.envs``
    must not need (it says how to install the extra instead)."""
    _gymnasium()
    from toolbench.envs import web_shop  # deferred: gymnasium is optional, as the docstring says

    return web_shop


def __getattr__(name: str) -> Any:
    if name == "WebShopEnv":
        return _web_shop().WebShopEnv
    raise AttributeError(f"module 'toolbench.envs' has no attribute {name!r}")


# Without the extra, importing still works; WebShopEnv says how to install it when used.
with contextlib.suppress(ImportError):
    register()
