"""BM25 retrieval: ranking, stable ties, and corpora with nothing to index."""

from __future__ import annotations

import bm25s
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.retrieval.bm25 import BM25Retriever, query_terms
from toolbench.types import Doc


def test_ranks_the_matching_doc_first_and_breaks_ties_by_file_order() -> None:
    docs = [Doc("a", "set the rent budget"), Doc("b", "sort rows by price"), Doc("c", "bold")]
    retriever = BM25Retriever(docs)
    assert [d.name for d in retriever.search(["sort by price"], 2)[0]] == ["b", "a"]
    assert retriever.search([], 2) == []
    assert retriever.search(["anything"], 0) == [[]]


def test_docs_without_indexable_terms_fall_back_to_file_order() -> None:
    # one-letter words and stopwords give bm25s an empty vocabulary; that must not crash
    docs = [Doc("0.txt", "x"), Doc("1.txt", "a to")]
    assert [d.name for d in BM25Retriever(docs).search(["what", "x"], 5)[0]] == ["0.txt", "1.txt"]
    assert BM25Retriever([]).search(["q"], 3) == [[]]


def test_a_query_without_terms_ranks_docs_in_file_order() -> None:
    """A query of stopwords or one letter ('x', 'is it?') has no BM25 term; bm25s itself
    raises IndexError on it, which once ended a whole run."""
    docs = [Doc(f"d{i}", f"set the price to {i} dollars") for i in range(3)]
    results = BM25Retriever(docs).search(["x", "is it?", "price"], 2)
    assert [[d.name for d in r] for r in results[:2]] == [["d0", "d1"], ["d0", "d1"]]
    assert len(results[2]) == 2


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_query_terms_are_the_librarys(text: str) -> None:
    """Our query tokenizer gives bm25s.tokenize's terms (the fast path must not move ranks)."""
    expected = bm25s.tokenize([text], stopwords="en", return_ids=False, show_progress=False)
    assert query_terms(text) == list(expected[0])


def test_query_terms_on_shop_text() -> None:
    page = (
        "Back to Search [SEP] Page 1 (Total results: 50) [SEP] Next > [SEP] B09XYZ [SEP] "
        "It's a 32GB USB-C flash drive, $12.99 ÉTÉ Straße"
    )
    expected = bm25s.tokenize([page], stopwords="en", return_ids=False, show_progress=False)
    assert query_terms(page) == list(expected[0])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet="abcdefgh ", max_size=40), min_size=1, max_size=12),
    st.lists(st.text(alphabet="abcdefghxyz ", max_size=30), min_size=1, max_size=5),
)
def test_column_scores_equal_the_librarys(texts: list[str], queries: list[str]) -> None:
    """The cached term columns give bm25s's float32 scores exactly (rankings cannot move)."""
    retriever = BM25Retriever([Doc(str(i), text) for i, text in enumerate(texts)])
    index = retriever._index
    if index is None:
        return
    for query in queries * 2:  # the second pass reads cached columns
        terms = query_terms(query)
        expected = index.get_scores(terms) if terms else np.zeros(len(texts))
        assert np.array_equal(retriever._scores(index, terms), expected)
