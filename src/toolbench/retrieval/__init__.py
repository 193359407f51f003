"""Retrieval of API docs and demonstrations for a query (BM25 or dense)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolbench.errors import UserError
from toolbench.retrieval.base import Retriever
from toolbench.types import Doc

RETRIEVERS = ("bm25", "dense")


def make_retriever(kind: str, docs: Sequence[Doc], cache_dir: Path | None = None) -> Retriever:
    if kind == "bm25":
        # here: numpy (bm25) costs every CLI start ~0.1 s, and the CLI imports this package
        from toolbench.retrieval.bm25 import BM25Retriever

        return BM25Retriever(docs)
    if kind == "dense":
        from toolbench.retrieval.dense import DenseRetriever  # here: as bm25 above

        return DenseRetriever(docs, cache_dir)
    raise UserError(f"--retriever {kind!r}: choose bm25 or dense")


__all__ = ["RETRIEVERS", "Retriever", "make_retriever"]
