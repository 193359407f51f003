"""What the generators produce: a prediction for one sample, labelled with why it was made."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

REWRITE = "rewrite"  # must succeed
PERTURBATION = "perturbation"  # must fail
SWAP = "swap"  # another sample's gold: must fail


@dataclass(frozen=True)
class Case:
    family: str
    kind: str
    prediction: str


def rewrites(gold: str, edits: dict[str, Callable[[str], str | None]]) -> list[Case]:
    """One case per edit that applies and changes the text."""
    cases = []
    for kind, edit in edits.items():
        text = edit(gold)
        if text is not None and text.strip() != gold.strip():
            cases.append(Case(REWRITE, kind, text))
    return cases


def fenced(gold: str) -> str:
    """The answer as a chat model sends it: a sentence, then the action in a code fence."""
    language = "bash" if gold.lstrip().startswith("curl") else "python"
    return f"Sure, this should do it:\n```{language}\n{gold}\n```\nLet me know if it helps."


def perturbations(found: Iterable[tuple[str, str | None]], gold: str) -> list[Case]:
    """(kind, text) pairs as cases, the first of each kind, skipping any that equal the gold."""
    cases: dict[str, Case] = {}
    for kind, text in found:
        if text is not None and kind not in cases and text.strip() != gold.strip():
            cases[kind] = Case(PERTURBATION, kind, text)
    return list(cases.values())


def rotate(items: list[str], seed: int, avoid: object) -> str | None:
    """A deterministic pick from ``items`` that differs from ``avoid`` (varies with ``seed``)."""
    choices = [item for item in items if item != avoid]
    return choices[seed % len(choices)] if choices else None
