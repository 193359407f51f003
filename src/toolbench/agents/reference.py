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

With ``--script`` it is the player of the harness's own scripted agents (``--model
agent:oracle``, ``agent:replay:FILE``, ``agents.scripted``): stdin then holds the calls the
harness translated from the gold or the replayed prediction, as JSON (``{"request", "calls":
[{"name", "arguments"}], "final", "note"}``), and it makes them in order over MCP. The oracle
and replay models cannot run behind ``--model``: the agent sees neither the data nor the gold.
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
#: Models that answer with the task's native action instead of tool calls: the harness
#: plays them itself (``--model agent:oracle``, ``agent:replay:FILE``).
SCRIPTED = frozenset({"oracle", "replay"})
#: The most calls a script may hold (the world refuses more than 200 anyway).
MAX_SCRIPT_CALLS = 1_000


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
    """One sample: the tool loop of the model over the tools."""
    return await tool_loop(model, tools, brief.request, settings)


@dataclass(frozen=True)
class Script:
    """The harness's calls for ``--script`` (see module doc)."""

    calls: tuple[tuple[str, dict[str, Any]], ...]
    final: str
    note: str = ""

    @classmethod
    def parse(cls, text: str) -> Script:
        try:
            raw = json.loads(text)
        except (ValueError, RecursionError):
            raise UserError("--script: stdin is not a JSON script") from None
        calls = raw.get("calls") if isinstance(raw, dict) else None
        if not isinstance(calls, list) or len(calls) > MAX_SCRIPT_CALLS:
            raise UserError("--script: the script has no list of calls")
        parsed = []
        for call in calls:
            name = call.get("name") if isinstance(call, dict) else None
            arguments = call.get("arguments") if isinstance(call, dict) else None
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise UserError("--script: each call needs a name and an arguments object")
            parsed.append((name, arguments))
        final, note = raw.get("final", ""), raw.get("note", "")
        return cls(tuple(parsed), str(final or ""), str(note or ""))


async def play(script: Script, tools: Tools) -> str:
    """Make the script's calls in order over MCP; a refused call is logged (stderr) and the
    next is made, as the same action would go on in the task's own executor only where it
    can: the world's judge decides what the refusal costs."""
    if script.note:
        print(f"reference agent: {script.note}", file=sys.stderr)
    await tools.list_tools()
    for name, arguments in script.calls:
        reply = await tools.call(name, arguments)
        if reply.is_error:
            print(
                f"reference agent: {name} refused: {bounded_text(reply.text, 300)}",
                file=sys.stderr,
            )
    return script.final


async def run(brief: Brief, args: argparse.Namespace, server: Any = None) -> str:
    """Build the model, connect to the sample's MCP server, make the attempt; the final
    message, or ``AgentFailed`` naming what went wrong. ``server``: what ``mcp.Client`` is to
    connect to instead of ``brief.mcp_url`` (an in-process server, in tests)."""
    from mcp import Client  # deferred: the MCP SDK is the optional extra toolbench[mcp]

    script = Script.parse(brief.request) if args.script else None
    model = None if script is not None else _model(args)
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
            tools = McpTools(client)
            if script is not None:
                outcome = await play(script, tools)
            else:
                assert model is not None
                outcome = await attempt(brief, args.model, tools, model, settings)
        except Exception as error:  # reported below, after the session is closed
            outcome = error
        await _close_quietly(client)
    finally:
        if model is not None:
            await model.aclose()
    if isinstance(outcome, BaseException):
        if isinstance(outcome, (AgentFailed, UserError)):
            raise outcome
        raise AgentFailed(f"{type(outcome).__name__}: {_one_line(outcome)}") from outcome
    return outcome


def _model(args: argparse.Namespace) -> Model:
    """The model behind the loop; the scripted models are refused (the harness plays them)."""
    if not args.model:
        raise UserError("--model SPEC is required (or --script, for the harness's player)")
    entry = known_model(args.model)
    if entry is not None and entry.name in SCRIPTED:
        raise UserError(
            f"--model {args.model}: the oracle and replay models are played by the harness, "
            f"which alone sees the data: run toolbench with --model agent:{args.model} instead"
        )
    options = ModelOptions(
        base_url=args.base_url[0] if args.base_url else None,
        base_urls=tuple(args.base_url or ()),
        api_key=args.api_key,
        timeout_s=args.timeout,
        cache_path=None,
    )
    return make_model(args.model, options)


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
    p.add_argument("--model", help="a toolbench model spec (toolbench list models)")
    p.add_argument(
        "--script",
        action="store_true",
        help="play the calls given as JSON on stdin (the harness's agent:oracle and "
        "agent:replay:FILE use this)",
    )
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
