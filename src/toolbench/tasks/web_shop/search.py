"""Product search: BM25 (``bm25s``) over each product's text, in process, deterministic.

WebShop searched a Lucene index through pyserini (Java). Here each product's title, bullet
points, description, attributes and option values are indexed once with bm25s's default
tokenisation (lower case, words of two or more letters or digits, English stopwords removed).
A query returns the products with a positive score, best first, ties broken by catalogue
order, at most ``SEARCH_RETURN_N`` (50) of them. Rankings differ from Lucene's; they are fixed
by the catalogue and the tokeniser, nothing else. WebShop's hidden ``<r>``/``<a>``/``<c>``/
``<q>`` keyword prefixes are not implemented: the tokeniser reads them as the one-letter words
they contain, which it drops.
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

from toolbench.tasks.web_shop.catalogue import Product

SEARCH_RETURN_N = 50
MAX_QUERY_CHARS = 2_000  # a longer query is cut: the index holds no word that long anyway


def product_text(product: Product) -> str:
    parts = [product.title, *product.bullets, product.description, *product.attributes]
    for name, values in product.options.items():
        parts.append(name)
        parts.extend(values)
    return "\n".join(parts)


class ProductIndex:
    """A bm25s index of the catalogue; ``search`` returns catalogue positions."""

    def __init__(self, products: Sequence[Product]) -> None:
        self._count = len(products)
        corpus = bm25s.tokenize(
            [product_text(p) for p in products], stopwords="en", show_progress=False
        )
        self._vocab: dict[str, int] = dict(corpus.vocab)
        self._index = bm25s.BM25()
        self._index.index(corpus, show_progress=False)
        self._order = np.arange(self._count)

    def search(self, query: str) -> list[int]:
        """Catalogue positions of the top matches (score > 0), best first."""
        tokens = bm25s.tokenize(
            [query[:MAX_QUERY_CHARS]], stopwords="en", return_ids=False, show_progress=False
        )[0]
        terms = [t for t in tokens if t in self._vocab]
        if not terms:
            return []
        scores = np.asarray(self._index.get_scores(terms))
        order = np.lexsort((self._order, -scores))[:SEARCH_RETURN_N]
        return [int(i) for i in order if scores[i] > 0]
