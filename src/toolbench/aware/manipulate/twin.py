"""Making an incomplete twin from a complete instance: the one place ids and links are set."""

from __future__ import annotations

from typing import Any

from toolbench.aware.schema import ApiSpec, Instance, Manipulation, Provenance, Turn, Verification


def twin_id(original: Instance, manipulation: str) -> str:
    """``<original id>~<manipulation>``: stable, and sorts next to its complete twin."""
    return f"{original.id}~{manipulation}"


def incomplete_twin(
    original: Instance,
    manipulation: Manipulation,
    *,
    dialogue: list[Turn] | None = None,
    apis: list[ApiSpec] | None = None,
    verification: Verification,
    **provenance: Any,
) -> Instance:
    """The incomplete instance made from ``original``: same everything unless replaced, linked
    back through ``twin_id``, with the original's id and source file carried into provenance."""
    return Instance(
        id=twin_id(original, manipulation),
        source=original.source,
        dialogue=list(original.dialogue if dialogue is None else dialogue),
        apis=list(original.apis if apis is None else apis),
        relevant_apis=[],
        gold_calls=list(original.gold_calls),
        label="incomplete",
        manipulation=manipulation,
        twin_id=original.id,
        provenance=Provenance(
            original_id=original.provenance.original_id,
            source_file=original.provenance.source_file,
            **provenance,
        ),
        verification=verification,
    )
