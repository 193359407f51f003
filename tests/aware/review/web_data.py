"""Hostile dataset text for the browser pages: markup that must show as text and never run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from toolbench.aware.schema import (
    ApiSpec,
    Instance,
    Provenance,
    Replacement,
    Turn,
    Verification,
    write_instances,
)

SCRIPT = "<script>window.__xss = 1; alert('script ran')</script>"
IMG = "<img src=x onerror=\"window.__xss = 2; alert('onerror ran')\">"
LINK = "<a href=\"javascript:window.__xss = 3; alert('link ran')\">open me</a>"
SVG = '<svg onload="window.__xss = 4"></svg>'
QUOTES = '" onmouseover="window.__xss = 5" x="'
HOSTILE = (SCRIPT, IMG, LINK, SVG, QUOTES)
NAME = "<b>mallory</b><script>window.__xss = 6</script>"


def hostile_pair() -> list[Instance]:
    """A complete instance and its API-replacement twin, with markup in every text field."""
    user = f"Weather in Paris please {SCRIPT}\nsecond line {IMG}"
    complete = Instance(
        id=f"evil{IMG}",
        source="apibank",
        dialogue=[
            Turn(role="user", content=user),
            Turn(role="assistant", content=f"Checking {LINK}"),
            Turn(role="tool", content=f"result {SVG}", tool_name=f"Tool{SCRIPT}"),
            Turn(role="user", content=f"And tomorrow? {QUOTES}"),
        ],
        apis=[
            ApiSpec(name="GetWeather", description=f"Weather. {SCRIPT}"),
            ApiSpec(
                name=f"Book{IMG}",
                description=f"Book {LINK}",
                parameters={"type": "object", "properties": {SCRIPT: {"type": "string"}}},
            ),
        ],
        relevant_apis=["GetWeather"],
        label="complete",
        provenance=Provenance(original_id="o1"),
        verification=Verification(status="accepted", by="source"),
    )
    twin = Instance(
        id=f"evil{IMG}~utterance_removal",
        source="apibank",
        dialogue=[
            Turn(role="user", content=f"Weather please {SCRIPT}\nsecond line {IMG}"),
            *complete.dialogue[1:],
        ],
        apis=[ApiSpec(name=f"Air{SVG}", description=f"Air quality {QUOTES}"), complete.apis[1]],
        label="incomplete",
        manipulation="utterance_removal",
        twin_id=complete.id,
        provenance=Provenance(
            original_id="o1",
            removed_text=[f"in Paris {LINK}"],
            replacements=[
                Replacement(original="GetWeather", replacement=f"Air{SVG}", similarity=0.7, rank=1)
            ],
            missing=f"the city {SCRIPT}",
        ),
    )
    return [complete, twin]


def write_hostile(path: Path) -> Path:
    write_instances(path, hostile_pair())
    return path


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)


def login(client: Any, name: str) -> str:
    """Sign in through the form; returns the session's CSRF token."""
    token = csrf_of(client.get("/").text)
    response = client.post("/login", data={"csrf": token, "name": name})
    assert response.status_code == 200, response.text
    return csrf_of(response.text)
