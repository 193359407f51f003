"""A test agent that fails the way real ones do, named by its first argument (no MCP): group
(an ``ExceptionGroup`` of one ``ValueError``), taskgroup (``asyncio.TaskGroup``, as an MCP
client's failing task raises it), two (a group of two), chained (``raise ... from``), or
logged (a traceback, then a log line after it)."""

import asyncio
import builtins
import sys

# Python 3.11's; looked up at run time (the project's floor is 3.10, where tests skip this).
ExceptionGroup = getattr(builtins, "ExceptionGroup", Exception)


def boom() -> None:
    raise ValueError("boom")


async def failing_task() -> None:
    async with asyncio.TaskGroup() as group:
        group.create_task(asyncio.sleep(5))
        group.create_task(asyncio.to_thread(boom))


def main() -> None:
    sys.stdin.read()
    mode = sys.argv[1]
    print("connecting to the world", file=sys.stderr)
    if mode == "group":
        raise ExceptionGroup("x", [ValueError("boom")])
    if mode == "taskgroup":
        asyncio.run(failing_task())
    if mode == "two":
        raise ExceptionGroup("two", [KeyError("first"), ValueError("boom")])
    if mode == "chained":
        try:
            boom()
        except ValueError as error:
            raise RuntimeError("the tool call failed") from error
    if mode == "logged":
        try:
            boom()
        except ValueError:
            import traceback

            traceback.print_exc()
        print("shutting down", file=sys.stderr)
        sys.exit(1)
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
