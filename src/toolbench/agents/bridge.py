"""The agent's one way out under ``--agent-network none``: loopback TCP to the hub's socket.

In an empty network namespace the agent still finds its MCP server at the URL the contract
promises (``http://127.0.0.1:PORT/mcp/<token>``): this small launcher, started inside the
sandbox in the agent's place, listens on that loopback port, carries each connection to the
run's hub over the Unix socket bound into the sandbox, starts the agent's command with the
same stdin, stdout and stderr, and exits with its status. It holds no secret: the token is
in the URL the agent has anyway, and killing the bridge only cuts the agent off.

    python -m toolbench.agents.bridge SOCKET PORT -- COMMAND...
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Sequence

_CHUNK = 65_536


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while chunk := await reader.read(_CHUNK):
            writer.write(chunk)
            await writer.drain()
    with contextlib.suppress(OSError):
        writer.close()


def _carrier(socket_path: str):  # type: ignore[no-untyped-def]
    async def carry(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            hub_reader, hub_writer = await asyncio.open_unix_connection(socket_path)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, hub_writer), _pipe(hub_reader, writer))

    return carry


async def serve(socket_path: str, port: int, argv: Sequence[str]) -> int:
    server = await asyncio.start_server(_carrier(socket_path), "127.0.0.1", port)
    async with server:
        try:
            proc = await asyncio.create_subprocess_exec(*argv)
        except OSError as exc:
            print(f"could not start {argv[0]}: {exc.strerror or exc}", file=sys.stderr)
            return 127
        return await proc.wait()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[2] != "--" or not args[1].isdigit():
        print("usage: python -m toolbench.agents.bridge SOCKET PORT -- COMMAND...", file=sys.stderr)
        return 2
    code = asyncio.run(serve(args[0], int(args[1]), args[3:]))
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
