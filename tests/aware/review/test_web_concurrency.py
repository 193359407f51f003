"""Issue 19, done-when 3: two browser reviewers and one terminal reviewer on one dataset at once.

The server is the real command (``toolbench aware verify FILE --web --port 0``) in its own
process; two chromium contexts review under different names, and the terminal review runs in a
thread with piped keys, a little slower than a person. Everyone accepts, rejects, skips and
undoes. After all three stop (the server by Ctrl-C, which exports), the dataset's verification
must hold every decision exactly once.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console

from tests.aware.review.conftest import dataset, incomplete_ids
from toolbench.aware.review.export import export_decisions
from toolbench.aware.review.store import ReviewStore, default_db_path
from toolbench.aware.review.terminal import run_review
from toolbench.aware.schema import read_instances, write_instances

PAIRS = 7  # 14 instances to review
BROWSER_KEYS = ["a", "r", "s", "a", "u", "a", "r", "a"]
TERMINAL_LINES = ["a", "r", "1", "", "s", "u", "a", "r", "2", "why not", "a"] * 3


class SlowLines(io.StringIO):
    """Piped keys, one line every few milliseconds, like a quick person at a terminal."""

    def readline(self, size: int = -1) -> str:  # type: ignore[override]
        time.sleep(0.03)
        return super().readline(size)

    def isatty(self) -> bool:
        return False


def start_server(ds: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    server = subprocess.Popen(
        [sys.executable, "-m", "toolbench.cli", "aware", "verify", str(ds), "--web", "--port=0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert server.stdout is not None
    line = server.stdout.readline()
    found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
    assert found, line + server.stderr.read()  # type: ignore[union-attr]
    return server, found.group(1)


def browser_step(page: Any, key: str) -> bool:
    """Press one key on a page; False once the page says the whole queue is reviewed."""
    if page.query_selector("#done") is not None:
        if "Every instance" in page.inner_text("#done"):
            return False
        time.sleep(0.05)
        page.reload()
        return True
    if key == "r":
        page.keyboard.press("1")
    with page.expect_navigation():
        page.keyboard.press(key)
    return True


def terminal(ds: Path, out: io.StringIO) -> None:
    console = Console(file=out, width=100, color_system=None)
    stdin = SlowLines("\n".join(TERMINAL_LINES) + "\n")
    run_review(ds, reviewer="term", stdin=stdin, console=console)
    export_decisions(ds)  # what `toolbench aware verify` does when a review ends


def effective_per_instance(ds: Path) -> tuple[Counter[str], dict[str, tuple[str, str]]]:
    ids = [i.id for i in read_instances(ds)]
    with ReviewStore(default_db_path(ds), ids) as store:
        events = store.events()
    undone = {e.undoes_seq for e in events if e.undoes_seq is not None}
    effective = [e for e in events if e.action in ("accept", "reject") and e.seq not in undone]
    status = {"accept": "accepted", "reject": "rejected"}
    return Counter(e.instance_id for e in effective), {
        e.instance_id: (status[e.action], e.reviewer) for e in effective
    }


def test_two_browsers_and_a_terminal_decide_each_instance_once(
    tmp_path: Path, browser_page: Any
) -> None:
    ds = tmp_path / "aware.jsonl"
    instances = dataset(PAIRS)
    write_instances(ds, instances)
    queue = incomplete_ids(instances)
    server, url = start_server(ds)
    out = io.StringIO()
    thread = threading.Thread(target=terminal, args=(ds, out))
    try:
        pages = [browser_page, browser_page.context.browser.new_context().new_page()]
        for page, name in zip(pages, ("web-a", "web-b"), strict=True):
            page.set_default_timeout(15000)
            page.goto(url)
            page.fill("#name", name)
            with page.expect_navigation():
                page.keyboard.press("Enter")
        thread.start()
        active, step = [True, True], 0
        deadline = time.monotonic() + 120
        while any(active) and time.monotonic() < deadline:
            for k, page in enumerate(pages):
                if active[k]:
                    active[k] = browser_step(page, BROWSER_KEYS[(step + 3 * k) % len(BROWSER_KEYS)])
            step += 1
        assert not any(active), "the browsers did not finish the queue"
        thread.join(60)
        assert not thread.is_alive()
    finally:
        server.send_signal(signal.SIGINT)
        stdout, stderr = server.communicate(timeout=60)
    assert server.returncode == 0, stderr
    assert "decisions written into" in stdout
    counts, decided = effective_per_instance(ds)
    assert set(counts) == set(queue) and set(counts.values()) == {1}
    by_reviewer = Counter(who for _, who in decided.values())
    assert set(by_reviewer) == {"web-a", "web-b", "term"}, by_reviewer
    exported = {i.id: i for i in read_instances(ds)}
    assert len(exported) == len(instances)
    for instance_id, (status, reviewer) in decided.items():
        verification = exported[instance_id].verification
        assert (verification.status, verification.by) == (status, reviewer)
    for instance in instances:
        if instance.label == "complete":
            assert exported[instance.id] == instance
    assert "every decision so far is saved" in out.getvalue() or "remaining" in out.getvalue()
