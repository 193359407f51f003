"""BM25 retrieval with ``bm25s`` (the original used haystack's in-memory BM25)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from toolbench.types import Doc

# bm25s.tokenize's defaults (scikit-learn's token pattern, lower-casing, English stopwords),
# applied to queries directly: the library call rebuilds its stopword set and a vocabulary per
# call, which was most of a web_shop turn's cost (a query per page). The query tests pin that
# the terms are the library's, token for token.
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = frozenset(STOPWORDS_EN)


def query_terms(text: str) -> list[str]:
    """The terms ``bm25s.tokenize(text, stopwords="en", return_ids=False)`` gives, in order."""
    return [token for token in _TOKEN.findall(text.lower()) if token not in _STOPWORDS]


# Corpora up to this many (docs x vocabulary) cells keep each queried term's score column
# (float32, <= 64 MB): summing columns costs a microsecond a term, where bm25s's np.add.at
# costs tens. API docs and demonstrations are such corpora, queried once per prompt.
_DENSE_CELLS = 1 << 24


class BM25Retriever:
    def __init__(self, docs: Sequence[Doc]) -> None:
        self._docs = list(docs)
        self._index: bm25s.BM25 | None = None
        self._columns: dict[str, np.ndarray] | None = None
        if self._docs:
            tokens = bm25s.tokenize(
                [doc.text for doc in self._docs], stopwords="en", show_progress=False
            )
            if tokens.vocab:  # docs of one-letter words and stopwords only have no terms
                self._index = bm25s.BM25()
                self._index.index(tokens, show_progress=False)
                dense = len(self._docs) * len(tokens.vocab) <= _DENSE_CELLS
                if dense and self._index.nonoccurrence_array is None:
                    self._columns = {}

    def search(self, queries: Sequence[str], k: int) -> list[list[Doc]]:
        k = min(k, len(self._docs))
        if k <= 0 or not queries:
            return [[] for _ in queries]
        if self._index is None:  # no indexable term in any doc: every doc scores the same
            return [self._docs[:k] for _ in queries]
        # Score every doc and sort ourselves: ties broken by file order keeps prompts stable.
        results: list[list[Doc]] = []
        for query in queries:
            # A query of stopwords only ("x", "is it?") has no term: every doc scores 0.
            terms = query_terms(query)
            scores = self._scores(self._index, terms)
            order = np.lexsort((np.arange(len(self._docs)), -np.asarray(scores)))[:k]
            results.append([self._docs[i] for i in order])
        return results

    def _scores(self, index: bm25s.BM25, terms: list[str]) -> np.ndarray:
        """bm25s's scores for the query terms, bit for bit.

        bm25s adds each term's stored scores into a float32 vector in query order; adding the
        same term columns in the same order gives the same floats (docs without the term add
        an exact 0), so rankings, ties included, do not move.
        """
        if self._columns is None:
            return index.get_scores(terms) if terms else np.zeros(len(self._docs))
        scores = np.zeros(len(self._docs), dtype=np.dtype(index.dtype))
        for term in terms:
            column = self._columns.get(term)
            if column is None:
                term_id = index.vocab_dict.get(term)
                if term_id is None:  # bm25s leaves out terms the corpus never uses
                    continue
                column = self._columns[term] = index.get_scores_from_ids([term_id])
            scores += column
        return scores
