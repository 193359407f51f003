"""A test agent that replays tool calls through the sample's MCP server with the SDK's
client: the calls are read from a JSON file (argv[1]) mapping sample ids to lists of
{name, arguments}. A sample listed in argv[2:] as ID=crash|sleep|flood|quiet misbehaves instead.
Prints each reply's first line and "done" as its final message."""

import asyncio
import json
import os
import sys
import time


async def replay(url: str, calls: list[dict]) -> None:
    from mcp import Client

    async with Client(url) as client:
        tools = await client.list_tools()
        print(f"tools: {len(tools.tools)}", file=sys.stderr)
        for call in calls:
            result = await client.call_tool(call["name"], call.get("arguments") or {})
            text = result.content[0].text if result.content else ""
            print(f"{call['name']}: error={result.is_error} {text.splitlines()[:1]}")


def main() -> int:
    sample = os.environ["TOOLBENCH_SAMPLE_ID"]
    special = dict(arg.split("=", 1) for arg in sys.argv[2:])
    mode = special.get(sample)
    if mode == "crash":
        print("boom", file=sys.stderr)
        return 3
    if mode == "sleep":
        time.sleep(60)
    if mode == "quiet":  # done at once, having called nothing
        print("nothing to do")
        return 0
    if mode == "flood":
        chunk = "y" * 65536
        while True:
            sys.stdout.write(chunk)
    with open(sys.argv[1], encoding="utf-8") as f:
        calls = json.load(f)[sample]
    asyncio.run(replay(os.environ["TOOLBENCH_MCP_URL"], calls))
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
