"""Small awareness datasets for the review tests, built with the schema (no sources needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbench.aware.schema import (
    ApiSpec,
    Instance,
    Provenance,
    Replacement,
    Turn,
    Verification,
    write_instances,
)

APIS = [
    ApiSpec(name="GetWeather", description="Current weather for a city.\nMore detail here."),
    ApiSpec(name="BookHotel", description="Book a hotel room for given dates."),
]


def complete(n: int, source: str = "apibank") -> Instance:
    return Instance(
        id=f"c{n}",
        source=source,
        dialogue=[Turn(role="user", content=f"What is the weather in Paris on day {n}?")],
        apis=APIS,
        relevant_apis=["GetWeather"],
        label="complete",
        provenance=Provenance(original_id=f"orig{n}"),
        verification=Verification(status="accepted", by="source"),
    )


def replaced(n: int, status: str = "pending", reasons: tuple[str, ...] = ()) -> Instance:
    return Instance(
        id=f"c{n}~api_replacement",
        source="apibank",
        dialogue=complete(n).dialogue,
        apis=[ApiSpec(name="GetAirQuality", description="Air quality index."), APIS[1]],
        label="incomplete",
        manipulation="api_replacement",
        twin_id=f"c{n}",
        provenance=Provenance(
            original_id=f"orig{n}",
            replacements=[
                Replacement(
                    original="GetWeather", replacement="GetAirQuality", similarity=0.81, rank=1
                )
            ],
        ),
        verification=Verification(
            status=status,  # type: ignore[arg-type]
            reasons=list(reasons),
            by="auto" if status != "pending" else "",
        ),
    )


def removed(n: int) -> Instance:
    return Instance(
        id=f"c{n}~utterance_removal",
        source="apibank",
        dialogue=[Turn(role="user", content=f"What is the weather on day {n}?")],
        apis=APIS,
        label="incomplete",
        manipulation="utterance_removal",
        twin_id=f"c{n}",
        provenance=Provenance(original_id=f"orig{n}", removed_text=["in Paris"]),
    )


def dataset(pairs: int, *, auto_rejected: int = 0) -> list[Instance]:
    """Complete instances, each followed by its two incomplete twins; the last
    ``auto_rejected`` replacement twins carry an automatic rejection."""
    rows: list[Instance] = []
    for n in range(pairs):
        auto = n >= pairs - auto_rejected
        rows.append(complete(n))
        rows.append(replaced(n, "rejected", ("similar_api",)) if auto else replaced(n))
        rows.append(removed(n))
    return rows


def incomplete_ids(instances: list[Instance], *, pending_only: bool = True) -> list[str]:
    return [
        i.id
        for i in instances
        if i.label == "incomplete" and (not pending_only or i.verification.status == "pending")
    ]


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    """A dataset of 3 complete + 6 incomplete instances (one of them auto-rejected)."""
    path = tmp_path / "aware.jsonl"
    write_instances(path, dataset(3, auto_rejected=1))
    return path
