"""Every benchmark in one command: ``python benchmarks/run_all.py`` (about 3 minutes).

Each script prints its own measurements and the ratio to its target, measured in the same run.
The fuzzers (``fuzz_extract.py``, ``fuzz_http.py``, ``fuzz_protocol.py``: 10,000+ cases per
target, target 0 uncaught exceptions) take a few minutes more and run with ``--fuzz``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
SCRIPTS = ("harness.py", "model_server.py", "engine_speed.py", "sandbox_throughput.py")
FUZZERS = ("fuzz_extract.py", "fuzz_http.py", "fuzz_protocol.py")

if __name__ == "__main__":
    failed = []
    for script in SCRIPTS + (FUZZERS if "--fuzz" in sys.argv[1:] else ()):
        print(f"== {script}", flush=True)
        if subprocess.call([sys.executable, str(HERE / script)]) != 0:
            failed.append(script)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")
