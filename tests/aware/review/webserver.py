"""Browser-test helpers: serve an ASGI app on a free loopback port in a thread; drive pages."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolbench.aware.annotate.webkit import bind, run, url_of


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app's base URL while the block runs; the server stops (and joins) afterwards."""
    sock = bind("127.0.0.1", 0)
    servers: list[Any] = []
    thread = threading.Thread(target=run, args=(app, sock, servers.append), daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not (servers and servers[0].started):
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield url_of(sock)
    finally:
        servers[0].should_exit = True
        thread.join(20)
        sock.close()


def watch_dialogs(page: Any) -> list[str]:
    fired: list[str] = []

    def on_dialog(dialog: Any) -> None:
        fired.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return fired


def sign_in(page: Any, url: str, name: str) -> None:
    page.set_default_timeout(8000)
    page.goto(url)
    page.fill("#name", name)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def press(page: Any, key: str) -> None:
    """A key that sends a form, waiting for the next page."""
    with page.expect_navigation():
        page.keyboard.press(key)
