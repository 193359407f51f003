"""BM25 retrieval with ``bm25s`` (the original used haystack's in-memory BM25)."""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

from toolbench.types import Doc


class BM25Retriever:
    def __init__(self, docs: Sequence[Doc]) -> None:
        self._docs = list(docs)
        self._index: bm25s.BM25 | None = None
        if self._docs:
            tokens = bm25s.tokenize(
                [doc.text for doc in self._docs], stopwords="en", show_progress=False
            )
            if tokens.vocab:  # docs of one-letter words and stopwords only have no terms
                self._index = bm25s.BM25()
                self._index.index(tokens, show_progress=False)

    def search(self, queries: Sequence[str], k: int) -> list[list[Doc]]:
        k = min(k, len(self._docs))
        if k <= 0 or not queries:
            return [[] for _ in queries]
        if self._index is None:  # no indexable term in any doc: every doc scores the same
            return [self._docs[:k] for _ in queries]
        tokenized = bm25s.tokenize(
            list(queries), stopwords="en", return_ids=False, show_progress=False
        )
        # Score every doc and sort ourselves: ties broken by file order keeps prompts stable.
        results: list[list[Doc]] = []
        for query_tokens in tokenized:
            # A query of stopwords only ("x", "is it?") has no term: every doc scores 0.
            terms = list(query_tokens)
            scores = self._index.get_scores(terms) if terms else np.zeros(len(self._docs))
            order = np.lexsort((np.arange(len(self._docs)), -np.asarray(scores)))[:k]
            results.append([self._docs[i] for i in order])
        return results
