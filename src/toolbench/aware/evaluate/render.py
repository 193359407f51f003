"""How an instance is shown to a model (and to a human annotator): the API list and the dialogue.

One renderer for every mode, so explicit, implicit, feedback and human answers are all given the
same view of an instance. API parameters are shown as compact JSON schema because that is the
form every source converts to and the form native tool calling sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from toolbench.aware.schema import ApiSpec, Instance, Turn

SPEAKERS = {"user": "User", "assistant": "AI", "tool": "Tool"}

#: What OpenAI-style tool names allow; other characters are replaced for native tool calling.
_TOOL_NAME = re.compile(r"[^A-Za-z0-9_-]")


def render_api(api: ApiSpec) -> str:
    params = json.dumps(api.parameters, ensure_ascii=False, separators=(", ", ": "))
    description = " ".join(api.description.split()) or "(no description)"
    return f"- {api.name}: {description}\n  parameters: {params}"


def render_apis(apis: Sequence[ApiSpec]) -> str:
    if not apis:
        return "(no APIs are available)"
    return "\n".join(render_api(api) for api in apis)


def render_turn(turn: Turn) -> str:
    speaker = SPEAKERS[turn.role]
    if turn.role == "tool" and turn.tool_name:
        speaker = f"Tool ({turn.tool_name})"
    return f"{speaker}: {turn.content.strip()}"


def render_dialogue(turns: Sequence[Turn]) -> str:
    return "\n".join(render_turn(turn) for turn in turns)


def request_text(instance: Instance) -> str:
    """The user's words, all turns joined: what a request-vs-API similarity compares."""
    return " ".join(turn.content for turn in instance.user_turns())


def tool_name(name: str) -> str:
    """``name`` made acceptable as an OpenAI function name (letters, digits, _ and -; <= 64)."""
    return _TOOL_NAME.sub("_", name)[:64] or "api"


def native_tools(apis: Sequence[ApiSpec]) -> tuple[dict[str, object], ...]:
    """The APIs as OpenAI function tools; names made unique if sanitising made them collide."""
    tools: list[dict[str, object]] = []
    seen: set[str] = set()
    for api in apis:
        name = tool_name(api.name)
        stem, n = name, 2
        while name in seen:
            suffix = f"_{n}"
            name, n = stem[: 64 - len(suffix)] + suffix, n + 1
        seen.add(name)
        parameters = api.parameters if api.parameters.get("type") == "object" else None
        function: dict[str, object] = {
            "name": name,
            "description": " ".join(api.description.split())[:1024],
            "parameters": parameters or {"type": "object", "properties": {}},
        }
        tools.append({"type": "function", "function": function})
    return tuple(tools)


def tool_name_map(apis: Sequence[ApiSpec]) -> dict[str, str]:
    """Native tool name -> API name, the inverse of ``native_tools``' naming."""
    tools = native_tools(apis)
    return {
        str(tool["function"]["name"]): api.name  # type: ignore[index]
        for tool, api in zip(tools, apis, strict=True)
    }
