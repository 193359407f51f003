"""An agent that failed is recorded with what it said about why (``process.error_line``): its
exception's own line, found inside Python's exception-group box, never the box's border."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolbench.agents.process import error_line

RAISES = Path(__file__).parent / "agents_for_tests" / "raises.py"

GROUP = """\
  + Exception Group Traceback (most recent call last):
  |   File "/tmp/agent.py", line 6, in <module>
  |     raise ExceptionGroup("x", [ValueError("boom")])
  | ExceptionGroup: x (1 sub-exception)
  +-+---------------- 1 ----------------
    | ValueError: boom
    +------------------------------------
"""

NESTED = """\
  + Exception Group Traceback (most recent call last):
  |   File "/tmp/agent.py", line 11, in <module>
  |     raise ExceptionGroup("outer", [KeyError("k"), ExceptionGroup("inner", [e])])
  | ExceptionGroup: outer (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | KeyError: 'k'
    +---------------- 2 ----------------
    | ExceptionGroup: inner (1 sub-exception)
    +-+---------------- 1 ----------------
      | Traceback (most recent call last):
      |   File "/tmp/agent.py", line 4, in f
      |     raise ValueError("boom")
      | ValueError: boom
      +------------------------------------
"""

CHAINED = """\
Traceback (most recent call last):
  File "/tmp/agent.py", line 4, in f
    raise ValueError("boom")
ValueError: boom

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/tmp/agent.py", line 16, in <module>
    raise RuntimeError("the tool call failed") from e
RuntimeError: the tool call failed
"""


@pytest.mark.parametrize(
    ("stderr", "line"),
    [
        (GROUP, "ValueError: boom"),
        (NESTED, "ValueError: boom (and 1 more in an exception group)"),
        (CHAINED, "RuntimeError: the tool call failed"),
        ("starting\n" + GROUP + "\n\n", "ValueError: boom"),
        (CHAINED + "retrying once\nfatal: the world went away\n", "fatal: the world went away"),
        (CHAINED + "cleaning up\n", "RuntimeError: the tool call failed"),
        (
            'Traceback (most recent call last):\n  File "a.py", line 1\nKeyboardInterrupt\n',
            "KeyboardInterrupt",
        ),
        ("about to fail\nboom: the agent fell over\n", "boom: the agent fell over"),
        ("no traceback here\n-----\n\n", "no traceback here"),
        ("-----\n", "-----"),
        ("", "(nothing on stderr)"),
    ],
)
def test_the_line_is_the_error(stderr: str, line: str) -> None:
    assert error_line(stderr) == line


def test_a_code_line_is_never_taken_for_the_error() -> None:
    """Source lines in a frame are indented: ``x: int = 1`` there is no exception."""
    stderr = (
        'Traceback (most recent call last):\n  File "a.py", line 1\n    x: int = f()\nOSError: no\n'
    )
    assert error_line(stderr) == "OSError: no"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="ExceptionGroup is Python 3.11+")
@pytest.mark.parametrize("mode", ["group", "taskgroup", "logged"])
def test_what_python_prints_gives_the_error(mode: str) -> None:
    """Python's own printing of each way to fail, not a copy of it."""
    done = subprocess.run(
        [sys.executable, str(RAISES), mode], input="", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert error_line(done.stderr) == "ValueError: boom"
