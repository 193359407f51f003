"""A real browser for tests: Playwright driving Debian's chromium (never a downloaded build).

Browser tests must run in CI, so a missing chromium is a failure that says how to install it,
not a skip. `.ci/run` installs it where apt is available.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ARTIFACTS = Path(os.environ.get("TOOLBENCH_TEST_ARTIFACTS", "test-artifacts"))


def chromium_path() -> str:
    """The system chromium, or a clear failure naming the fix."""
    for candidate in (os.environ.get("TOOLBENCH_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    pytest.fail(
        "no chromium: apt-get install -y --no-install-recommends chromium "
        "(or set TOOLBENCH_CHROMIUM to a chromium binary)"
    )


@pytest.fixture
def browser_page() -> Iterator[Any]:
    """A fresh page in a headless chromium; closed after the test."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()
