"""A test agent that does one thing, named by its first argument (no MCP): echo (the request
and what it was told, as its final message), crash, sleep, flood (100 MB on stdout), or
by-sample (ids in a file: crash/sleep/flood/ok per sample, ok meaning replay.py's work)."""

import os
import sys
import time


def main() -> int:
    mode = sys.argv[1]
    if mode == "echo":
        request = sys.stdin.read()
        print("log line", file=sys.stderr)
        told = [
            os.environ.get(k, "-")
            for k in (
                "TOOLBENCH_TASK",
                "TOOLBENCH_SAMPLE_ID",
                "TOOLBENCH_EPOCH",
                "TOOLBENCH_DATA_VERSION",
            )
        ]
        print(f"request={request!r} env_request={os.environ['TOOLBENCH_REQUEST']!r}")
        url = os.environ["TOOLBENCH_MCP_URL"]
        print(f"told={','.join(told)} cwd_files={os.listdir('.')} url={url}")
        return 0
    if mode == "crash":
        print("about to fail", file=sys.stderr)
        print("boom: the agent fell over", file=sys.stderr)
        return 1
    if mode == "sleep":
        with open("marker", "w") as f:  # in its own folder
            f.write("x")
        time.sleep(60)
        return 0
    if mode == "flood":
        chunk = "x" * 65536 + "\n"
        for _ in range(1600):  # 100 MB
            sys.stdout.write(chunk)
        return 0
    raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main())
