"""Agents as the thing under test: a task's world served as MCP tools (``mcp_server``), an
agent process run once per sample against it (``process``, ``--model agent:COMMAND``), and a
small reference agent (``reference``) that shows how to plug one in. Needs the ``mcp`` extra.
"""

from __future__ import annotations

import importlib.util

from toolbench.errors import UserError

INSTALL_HINT = "pip install 'toolbench[mcp]'"


def require_mcp(flag: str) -> None:
    """Refuse, as one line naming ``flag`` and the install, a command that needs the MCP SDK
    where it is not installed (before anything is loaded or started)."""
    if importlib.util.find_spec("mcp") is None or importlib.util.find_spec("mcp_types") is None:
        raise UserError(f"{flag}: the MCP SDK is not installed; {INSTALL_HINT}")
