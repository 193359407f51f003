"""A hostile test agent: it tries what a red team's agent did, and prints what it managed as
one JSON object on stdout (its final message). Each argument is a probe, made by every
sample, or only by sample ID when written ``ID=probe``:

  read:PATH        read a file (or list a folder): its size / entries, or the error
  write:PATH       write a file there
  environ          every other process's TOOLBENCH_MCP_URL it can read in /proc
  procs            how many processes it can see
  siblings         the folders next to its own working folder
  signal:PID       signal 0 (may I signal it?) to the harness's pid
  orphan:PORT:S    double fork + setsid; the orphan connects to 127.0.0.1:PORT after S seconds
  hold:S           stay alive S seconds (so that another attempt runs meanwhile)
  call:URL         POST an MCP initialize to URL and report the HTTP status
  guess            call its own MCP server with another (guessed) token
  import:MODULE    import a module (e.g. a task's data generator)
  allocate:MB      allocate that much memory
  spawn:N          start N sleeping processes (how many it managed)
"""

import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request


def read(path: str) -> object:
    try:
        if os.path.isdir(path):
            return {"entries": sorted(os.listdir(path))[:20]}
        with open(path, "rb") as f:
            return {"bytes": len(f.read())}
    except OSError as exc:
        return {"error": type(exc).__name__}


def write(path: str) -> object:
    try:
        with open(path, "w") as f:
            f.write("escaped")
        return {"written": True}
    except OSError as exc:
        return {"error": type(exc).__name__}


def environ() -> object:
    own = os.environ.get("TOOLBENCH_MCP_URL", "")
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                data = f.read()
        except OSError:
            continue
        for item in data.split(b"\0"):
            if item.startswith(b"TOOLBENCH_MCP_URL="):
                url = item.split(b"=", 1)[1].decode()
                if url != own:
                    found.append(url)
    return sorted(set(found))


def procs() -> object:
    return len([e for e in os.listdir("/proc") if e.isdigit()])


def signal_pid(pid: str) -> object:
    try:
        os.kill(int(pid), 0)
        return {"signalled": True}
    except OSError as exc:
        return {"error": type(exc).__name__}


def orphan(port: str, delay: str) -> object:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for fd in (0, 1, 2):  # let go of the harness's pipes, as a daemon would
                os.close(fd)
            time.sleep(float(delay))
            with socket.create_connection(("127.0.0.1", int(port)), timeout=5) as s:
                s.sendall(b"alive")
        os._exit(0)
    os.wait()
    return {"forked": True}


def call(url: str) -> object:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("content-type", "application/json")
    request.add_header("accept", "application/json, text/event-stream")
    try:
        with urllib.request.urlopen(request, timeout=5) as reply:
            return {"status": reply.status}
    except urllib.error.HTTPError as exc:
        return {"status": exc.code}
    except OSError as exc:
        return {"error": type(exc).__name__}


def load(module: str) -> object:
    import importlib

    try:
        importlib.import_module(module)
        return {"imported": True}
    except ImportError as exc:
        return {"error": type(exc).__name__}


def allocate(megabytes: str) -> object:
    try:
        block = bytearray(int(megabytes) * 1024 * 1024)
        return {"allocated": len(block)}
    except MemoryError:
        return {"error": "MemoryError"}


def spawn(count: int) -> object:
    import subprocess

    started = []
    try:
        for _ in range(count):
            started.append(subprocess.Popen(["sleep", "30"]))
    except OSError as exc:
        return {"started": len(started), "error": type(exc).__name__}
    return {"started": len(started)}


def main() -> int:
    results: dict[str, object] = {}
    sample = os.environ.get("TOOLBENCH_SAMPLE_ID", "")
    for argument in sys.argv[1:]:
        owner, equals, probe = argument.partition("=")
        if not equals or ":" in owner or "/" in owner:
            probe = argument
        elif owner != sample:
            continue
        kind, _, rest = probe.partition(":")
        if kind == "read":
            results[probe] = read(rest)
        elif kind == "write":
            results[probe] = write(rest)
        elif kind == "environ":
            results[probe] = environ()
        elif kind == "procs":
            results[probe] = procs()
        elif kind == "siblings":
            results[probe] = sorted(os.listdir(os.path.dirname(os.getcwd())))
        elif kind == "signal":
            results[probe] = signal_pid(rest)
        elif kind == "orphan":
            results[probe] = orphan(*rest.split(":"))
        elif kind == "hold":
            time.sleep(float(rest))
        elif kind == "call":
            results[probe] = call(rest)
        elif kind == "guess":
            own = os.environ["TOOLBENCH_MCP_URL"]
            results[probe] = call(own.rsplit("/", 1)[0] + "/" + "A" * 32)
        elif kind == "import":
            results[probe] = load(rest)
        elif kind == "spawn":
            results[probe] = spawn(int(rest))
        elif kind == "allocate":
            results[probe] = allocate(rest)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
