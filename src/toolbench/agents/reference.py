"""The reference agent: a small tool-calling loop over any toolbench model, talking to a
sample's MCP server through the official ``mcp`` SDK client.

It is the example of how to plug an agent into ``toolbench run TASK --model agent:COMMAND``
(the contract is in docs/agents.md): read the request from stdin, connect to
``$TOOLBENCH_MCP_URL``, list the tools, then let the model call them until it answers
without a call; that answer, printed on stdout, is the final message. Exit 0 after a normal
end; exit 1 with one line on stderr when the MCP server cannot be reached or the model fails.

    python -m toolbench.agents.reference --model openai:gpt-4o-mini
    python -m toolbench.agents.reference --model openai:qwen2.5 --base-url http://localhost:8000/v1

Everything the model or the server sends is hostile input: tool arguments are parsed as JSON
(never evaluated), tool replies and the final message are bounded.

The built-in scripted models (``oracle``, ``replay:FILE``) answer with the task's native action
(a program, a curl command, a plan), not tool calls, so behind this agent they go through
``reference_scripted``: the one place the agent knows anything beyond the request and the
tools (it reads which sample this is from the environment). See that module.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolbench.core.agent import ToolReply, ToolSpec
from toolbench.core.bounded import bounded_text
from toolbench.errors import UserError
from toolbench.models.base import Model, ModelOptions
from toolbench.models.spec import known_model, make_model
from toolbench.types import GenerationRequest

#: Our instruction to the model; the user's request follows as the user message.
SYSTEM_PROMPT = (
    "You are an agent that completes the user's request by calling the tools you are given. "
    "Call tools as needed, read their replies, and correct course when a call fails. When the "
    "request is done, answer with a short final message and no tool call."
)
#: Model turns before the loop gives up (the world is judged as it stands).
DEFAULT_MAX_TURNS = 20
#: Tokens the model may write per turn unless --max-tokens says otherwise.
DEFAULT_MAX_TOKENS = 1024
#: One tool reply as the model reads it (the rest is cut, marked as cut).
MAX_TOOL_REPLY_CHARS = 20_000
#: The final message printed on stdout (the harness keeps the last 20,000 characters).
MAX_FINAL_CHARS = 20_000
#: Models that answer with the task's native action instead of tool calls.
SCRIPTED = frozenset({"oracle", "replay"})


class AgentFailed(Exception):
    """The agent cannot go on (server unreachable, model failed): one line for stderr."""


class Tools(Protocol):
    """The tools the loop reaches: an MCP session in a real run, anything alike in tests."""

    async def list_tools(self) -> list[ToolSpec]: ...

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply: ...


@dataclass(frozen=True)
class Brief:
    """What the harness tells the agent (the contract's stdin and environment)."""

    request: str
    mcp_url: str
    task: str = ""
    sample_id: str = ""
    epoch: int = 0
    data_version: str = ""
    data_dir: str | None = None

    @classmethod
    def from_environment(cls, env: Mapping[str, str], stdin_text: str) -> Brief:
        url = env.get("TOOLBENCH_MCP_URL", "").strip()
        if not url:
            raise UserError(
                "TOOLBENCH_MCP_URL is not set: run this agent through "
                '`toolbench run TASK --model agent:"COMMAND"`'
            )
        epoch_text = env.get("TOOLBENCH_EPOCH", "0").strip() or "0"
        return cls(
            request=stdin_text if stdin_text.strip() else env.get("TOOLBENCH_REQUEST", ""),
            mcp_url=url,
            task=env.get("TOOLBENCH_TASK", ""),
            sample_id=env.get("TOOLBENCH_SAMPLE_ID", ""),
            epoch=int(epoch_text) if epoch_text.isdigit() else 0,
            data_version=env.get("TOOLBENCH_DATA_VERSION", ""),
            data_dir=env.get("TOOLBENCH_DATA_DIR") or None,
        )


def openai_tools(specs: Sequence[ToolSpec]) -> tuple[dict[str, Any], ...]:
    """The MCP tools in the OpenAI function-tool shape that ``GenerationRequest.tools`` takes."""
    return tuple(
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": dict(spec.input_schema),
            },
        }
        for spec in specs
    )


def parse_arguments(text: Any) -> dict[str, Any] | str:
    """A tool call's arguments (the JSON text a model wrote) as an object, or why not."""
    if isinstance(text, Mapping):
        return dict(text)
    if text is None or (isinstance(text, str) and not text.strip()):
        return {}
    if not isinstance(text, str):
        return "arguments must be a JSON object"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return "arguments are not valid JSON; send a JSON object"
    if not isinstance(value, dict):
        return "arguments must be a JSON object"
    return value


@dataclass
class LoopSettings:
    max_turns: int = DEFAULT_MAX_TURNS
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0


async def tool_loop(model: Model, tools: Tools, request: str, settings: LoopSettings) -> str:
    """Ask the model, make the calls it asks for, feed the replies back, until it answers
    without a call (its text is the final message) or ``max_turns`` turns have passed."""
    specs = await tools.list_tools()
    offered = openai_tools(specs)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": request},
    ]
    text = ""
    for turn in range(1, settings.max_turns + 1):
        generation = await model.generate(
            GenerationRequest(
                messages=tuple(messages),
                tools=offered or None,
                max_tokens=settings.max_tokens,
                temperature=settings.temperature,
                step=f"turn-{turn}",
            )
        )
        text = generation.text or ""
        if not generation.tool_calls:
            return text
        calls = [_with_id(call, turn, i) for i, call in enumerate(generation.tool_calls)]
        messages.append({"role": "assistant", "content": text, "tool_calls": calls})
        for call in calls:
            reply = await _make_call(tools, call)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": reply})
    print(f"reference agent: stopped after {settings.max_turns} turns", file=sys.stderr)
    return text


def _with_id(call: Mapping[str, Any], turn: int, index: int) -> dict[str, Any]:
    """The call as the assistant message carries it, with an id (local models give none)."""
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    return {
        "id": str(call.get("id") or f"call_{turn}_{index}"),
        "type": "function",
        "function": {
            "name": str(function.get("name") or ""),
            "arguments": function.get("arguments") or "",
        },
    }


async def _make_call(tools: Tools, call: Mapping[str, Any]) -> str:
    """One call over MCP, answered as the text of a tool message (errors marked as such)."""
    name = call["function"]["name"]
    arguments = parse_arguments(call["function"]["arguments"])
    if isinstance(arguments, str):  # the model's own mistake: told, nothing sent
        return f"Error: {arguments}"
    reply = await tools.call(name, arguments)
    text = bounded_text(reply.text, MAX_TOOL_REPLY_CHARS)
    return f"Error: {text}" if reply.is_error else text


class McpTools:
    """``Tools`` over an entered ``mcp.Client``: tool listings and calls as our types."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def list_tools(self) -> list[ToolSpec]:
        specs: list[ToolSpec] = []
        cursor: str | None = None
        for _ in range(100):  # pages; a server that never ends its listing is cut off
            page = await self.client.list_tools(cursor=cursor)
            specs.extend(
                ToolSpec(tool.name, tool.description or "", dict(tool.input_schema))
                for tool in page.tools
            )
            cursor = page.next_cursor
            if not cursor:
                break
        return specs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolReply:
        result = await self.client.call_tool(name, dict(arguments))
        texts = [block.text for block in result.content if getattr(block, "type", "") == "text"]
        return ToolReply("\n".join(texts), is_error=bool(result.is_error))


async def attempt(
    brief: Brief, model_spec: str, tools: Tools, model: Model, settings: LoopSettings
) -> str:
    """One sample: the scripted path for oracle/replay, the tool loop for every other model."""
    entry = known_model(model_spec)
    if entry is not None and entry.name in SCRIPTED:
        from toolbench.agents.reference_scripted import scripted_attempt

        return await scripted_attempt(brief, entry.name, model, tools)
    return await tool_loop(model, tools, brief.request, settings)


async def run(brief: Brief, args: argparse.Namespace, server: Any = None) -> str:
    """Build the model, connect to the sample's MCP server, make the attempt; the final
    message, or ``AgentFailed`` naming what went wrong. ``server``: what ``mcp.Client`` is to
    connect to instead of ``brief.mcp_url`` (an in-process server, in tests)."""
    from mcp import Client

    options = ModelOptions(
        base_url=args.base_url[0] if args.base_url else None,
        base_urls=tuple(args.base_url or ()),
        api_key=args.api_key,
        timeout_s=args.timeout,
        cache_path=None,
    )
    model = make_model(args.model, options)
    settings = LoopSettings(args.max_turns, args.max_tokens, args.temperature)
    try:
        try:
            client = await Client(server or brief.mcp_url).__aenter__()
        except Exception as error:
            raise AgentFailed(
                f"cannot reach the MCP server at {brief.mcp_url}: {_one_line(error)}"
            ) from None
        outcome: str | BaseException
        try:
            outcome = await attempt(brief, args.model, McpTools(client), model, settings)
        except Exception as error:  # reported below, after the session is closed
            outcome = error
        await _close_quietly(client)
    finally:
        await model.aclose()
    if isinstance(outcome, BaseException):
        if isinstance(outcome, (AgentFailed, UserError)):
            raise outcome
        raise AgentFailed(f"{type(outcome).__name__}: {_one_line(outcome)}") from outcome
    return outcome


async def _close_quietly(client: Any) -> None:
    with contextlib.suppress(Exception):  # the server went away first: nothing to close
        await client.__aexit__(None, None, None)


def _one_line(error: BaseException) -> str:
    """The error's first leaf message on one line (SDK errors come in exception groups)."""
    for _ in range(16):  # exception groups (no BaseExceptionGroup name on Python 3.10)
        inner = getattr(error, "exceptions", None)
        if not inner or not isinstance(inner[0], BaseException):
            break
        error = inner[0]
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:500]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m toolbench.agents.reference",
        description="A small tool-calling agent over MCP, for `toolbench run TASK "
        '--model agent:"python -m toolbench.agents.reference --model SPEC"`.',
    )
    p.add_argument("--model", required=True, help="a toolbench model spec (toolbench list models)")
    p.add_argument("--base-url", action="append", help="OpenAI-compatible server (repeatable)")
    p.add_argument("--api-key", default=None, help="API key (default: $OPENAI_API_KEY)")
    p.add_argument("--max-turns", type=int, default=DEFAULT_MAX_TURNS, help="model turns at most")
    p.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS, help="tokens per turn")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per model request")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.max_turns < 1:
        print("reference agent: --max-turns must be at least 1", file=sys.stderr)
        return 2
    stdin_text = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    try:
        brief = Brief.from_environment(os.environ, stdin_text)
        final = asyncio.run(run(brief, args))
    except UserError as error:
        print(f"reference agent: {error}", file=sys.stderr)
        return 2
    except AgentFailed as error:
        print(f"reference agent: {error}", file=sys.stderr)
        return 1
    sys.stdout.write(bounded_text(final, MAX_FINAL_CHARS))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
