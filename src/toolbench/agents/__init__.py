"""Agents as the thing under test: a task's world served as MCP tools (``mcp_server``), an
agent process run once per sample against it (``process``, ``--model agent:COMMAND``), and a
small reference agent (``reference``) that shows how to plug one in. Needs the ``mcp`` extra.
"""
