"""Native tool calling (``--mode tools``) for the program tasks: schemas derived from each
task's API class and docs, tool calls converted to program lines we build ourselves, and the
solve loop that runs them in the sample's sandboxed world."""

from toolbench.kinds.tool_calling.convert import BadCall, call_line, gold_calls
from toolbench.kinds.tool_calling.loop import first_tools_request, solve_with_tools
from toolbench.kinds.tool_calling.schema import (
    HasToolset,
    Kind,
    Param,
    ToolSet,
    ToolSpec,
    derive_toolset,
)

__all__ = [
    "BadCall",
    "HasToolset",
    "Kind",
    "Param",
    "ToolSet",
    "ToolSpec",
    "call_line",
    "derive_toolset",
    "first_tools_request",
    "gold_calls",
    "solve_with_tools",
]
