"""Retrievers pick the API docs and demonstrations most relevant to a query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from toolbench.types import Doc


class Retriever(Protocol):
    def search(self, queries: Sequence[str], k: int) -> list[list[Doc]]:
        """The top-k docs for each query, best first. Batched, because runs prepare all at once."""
        ...
