"""Sentence embeddings of API texts, cached on disk so each text is embedded once per encoder.

API replacement compares every relevant API with every API of a pool (16k for ToolBench). On a
2-core CPU the encoder is nearly all of the cost (~25-30 descriptions/s for all-MiniLM-L6-v2 at
~150 wordpieces), so vectors are kept in SQLite (WAL, shareable between processes) under
``<cache dir>/embeddings/api_vectors.sqlite`` and a rerun (another seed, rank or window) does no
model calls at all: the model is not even loaded until a text misses the cache.

Rows are keyed by the encoder's cache namespace and the sha256 of the text. The namespace
identifies the model folder without reading its weights: the resolved path, each file's
relative name, size and mtime, the content of the small (config and tokenizer) files, and the
encoder settings (``max_seq_length``). The ``identity`` recorded in provenance leaves out the
machine-specific parts (path, mtimes) so the same model gives the same dataset bytes anywhere.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from toolbench.errors import UserError
from toolbench.package import default_cache_dir
from toolbench.retrieval.dense import default_encoder_path, load_encoder

#: The bundled model's name (its package folder is just ``model``).
DEFAULT_NAME = "all-MiniLM-L6-v2"
#: Bump when what a stored vector means changes; old rows then just miss.
KEY_VERSION = 1
#: Files up to this size (configs, tokenizer) are hashed by content; larger ones by size only.
SMALL_FILE = 1 << 20
#: Texts per model call: the unit of cache writes and progress reports (the model batches inside).
CHUNK = 512
_SQL_VARIABLES = 500  # well under SQLite's default limit of host parameters per statement
_IGNORED = {"README.md", ".gitattributes"}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    encoder TEXT NOT NULL,
    text_sha TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (encoder, text_sha)
) WITHOUT ROWID
"""


class TextEncoder(Protocol):
    """What ``ApiEncoder`` needs of a model: sentence-transformers' ``encode``.

    It is called as ``encode(texts, batch_size=..., normalize_embeddings=True,
    show_progress_bar=False, convert_to_numpy=True)`` and must return one row per text.
    """

    def encode(self, sentences: list[str], /, **kwargs: Any) -> Any: ...


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _model_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and path.name not in _IGNORED and not relative.parts[0].startswith("."):
            yield path


def fingerprint(folder: Path, settings: dict[str, Any]) -> tuple[str, str]:
    """(portable, local) sha256 hex digests of a model folder and the encoder settings.

    Portable: relative names, sizes, small files' content, settings; the same for the same model
    on any machine. Local adds the resolved path and mtimes, so a model rewritten in place with
    files of the same sizes (a fine-tuned checkpoint) cannot be served stale vectors.
    """
    portable = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    local = hashlib.sha256(str(folder.resolve()).encode())
    for path in _model_files(folder):
        stat = path.stat()
        entry = f"{path.relative_to(folder).as_posix()}\0{stat.st_size}\0".encode()
        portable.update(entry)
        if stat.st_size <= SMALL_FILE:
            portable.update(hashlib.sha256(path.read_bytes()).digest())
        local.update(entry + str(stat.st_mtime_ns).encode() + b"\0")
    local.update(portable.digest())
    return portable.hexdigest(), local.hexdigest()


def _bad_encoder(path: Path, problem: str) -> UserError:
    return UserError(
        f"--encoder {path}: {problem}; give a local sentence-transformers model folder (one "
        f"with modules.json or config.json; nothing is downloaded), or leave --encoder out to "
        f"use the bundled {DEFAULT_NAME}"
    )


def check_model_folder(path: Path) -> Path:
    """The folder, if it looks like a model sentence-transformers can load offline."""
    if not path.exists():
        raise _bad_encoder(path, "no such folder")
    if not path.is_dir():
        raise _bad_encoder(path, "is a file, not a model folder")
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise _bad_encoder(
            path, "not a sentence-transformers model (no modules.json or config.json)"
        )
    return path


def _normalised(vectors: Any, count: int) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != count:
        raise ValueError(f"the encoder returned shape {matrix.shape} for {count} texts")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector stays zero (similarity 0 to everything) rather than becoming NaN.
    return np.ascontiguousarray(matrix / np.where(norms == 0, 1, norms), dtype=np.float32)


class ApiEncoder:
    """Embeds texts with a sentence encoder, through the on-disk cache.

    ``path``: a local sentence-transformers folder (default: the bundled all-MiniLM-L6-v2).
    ``cache_dir``: the toolbench cache root, as the CLI's ``--cache-dir`` (vectors go to
    ``<cache_dir>/embeddings/api_vectors.sqlite``); ``use_cache=False`` keeps them in memory only.
    ``max_seq_length``: wordpieces the model reads per text (None: the model's own, 256 for
    MiniLM). Fewer is faster but changes the vectors, so it is part of ``identity``.
    ``model``: any object with sentence-transformers' ``encode`` (tests); ``name`` then
    identifies it and ``path`` is not needed.

    Counters: ``model_calls`` (calls to the model's ``encode``), ``encoded`` (texts the model
    embedded), ``cache_hits`` (texts served from memory or disk).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        max_seq_length: int | None = None,
        batch_size: int = 32,
        model: TextEncoder | None = None,
        name: str | None = None,
    ) -> None:
        if max_seq_length is not None and max_seq_length < 1:
            raise UserError(f"max_seq_length must be at least 1, not {max_seq_length}")
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.model_calls = 0
        self.encoded = 0
        self.cache_hits = 0
        self._model = model
        self._path, name = self._locate(path, model, name)
        settings: dict[str, Any] = {"v": KEY_VERSION, "max_seq_length": max_seq_length}
        if self._path is None:
            material = json.dumps({"injected": name, **settings}, sort_keys=True).encode()
            portable = local = hashlib.sha256(material).hexdigest()
        else:
            portable, local = fingerprint(self._path, settings)
        suffix = f":max_seq_length={max_seq_length}" if max_seq_length is not None else ""
        self._identity = f"{name}@{portable[:8]}{suffix}"
        self._namespace = local
        self._memory: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        root = cache_dir if cache_dir is not None else default_cache_dir()
        self.cache_path: Path | None = (
            root / "embeddings" / "api_vectors.sqlite" if use_cache else None
        )
        self._db: sqlite3.Connection | None = None

    @staticmethod
    def _locate(
        path: str | Path | None, model: TextEncoder | None, name: str | None
    ) -> tuple[Path | None, str]:
        if model is not None and path is None:
            if not name:
                raise ValueError("an injected model needs a name (it identifies its vectors)")
            return None, name
        if path is None:
            folder = check_model_folder(Path(default_encoder_path()))
            return folder, name or DEFAULT_NAME
        folder = check_model_folder(Path(path).expanduser())
        return folder, name or folder.resolve().name

    @property
    def identity(self) -> str:
        """Short and portable, for provenance: ``all-MiniLM-L6-v2@1a2b3c4d``."""
        return self._identity

    # ---- the cache ----

    def _connection(self) -> sqlite3.Connection | None:
        if self.cache_path is None:
            return None
        if self._db is None:
            try:
                self.cache_path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(
                    self.cache_path, timeout=30.0, isolation_level=None, check_same_thread=False
                )
                db.execute("PRAGMA busy_timeout = 30000")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")  # enough for a cache in WAL mode
                db.execute(_SCHEMA)
            except (OSError, sqlite3.Error) as error:
                raise UserError(
                    f"cannot open the embedding cache {self.cache_path}: {error} (choose another "
                    "folder with --cache-dir)"
                ) from None
            self._db = db
        return self._db

    def _load_stored(self, keys: list[str]) -> None:
        """Move stored vectors for ``keys`` into memory."""
        db = self._connection()
        if db is None:
            return
        for start in range(0, len(keys), _SQL_VARIABLES):
            chunk = keys[start : start + _SQL_VARIABLES]
            marks = ",".join("?" * len(chunk))
            rows = db.execute(
                f"SELECT text_sha, vector FROM vectors WHERE encoder = ? AND text_sha IN ({marks})",
                [self._namespace, *chunk],
            ).fetchall()
            for key, blob in rows:
                self._memory[key] = np.frombuffer(blob, dtype=np.float32)

    def _store(self, keys: list[str], matrix: np.ndarray) -> None:
        db = self._connection()
        if db is None:
            return
        rows = [
            (self._namespace, key, row.tobytes()) for key, row in zip(keys, matrix, strict=True)
        ]
        try:
            db.execute("BEGIN IMMEDIATE")
            db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            db.execute("COMMIT")
        except sqlite3.Error as error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise UserError(
                f"cannot write the embedding cache {self.cache_path}: {error}"
            ) from None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> ApiEncoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- the model ----

    def load(self) -> None:
        """Load the model now (it is otherwise loaded at the first cache miss), to fail early
        on a bad folder or to time the load on its own."""
        self._loaded_model()

    def _loaded_model(self) -> TextEncoder:
        if self._model is None:
            assert self._path is not None
            try:
                self._model = load_encoder(str(self._path))
            except UserError:
                raise
            except Exception as error:  # any loader failure is a bad folder, said in one line
                raise _bad_encoder(self._path, f"cannot be loaded ({error})") from None
        return self._model

    def _embed(self, texts: list[str]) -> np.ndarray:
        module = self._loaded_model()
        # The model may be shared with dense retrieval in this process (one instance per path),
        # so a non-default max_seq_length is set around the call and restored after it.
        previous = getattr(module, "max_seq_length", None)
        override = self.max_seq_length is not None and previous is not None
        if override:
            module.max_seq_length = self.max_seq_length  # type: ignore[attr-defined]
        try:
            vectors = module.encode(
                texts,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        finally:
            if override:
                module.max_seq_length = previous  # type: ignore[attr-defined]
        self.model_calls += 1
        self.encoded += len(texts)
        return _normalised(vectors, len(texts))

    # ---- the one public operation ----

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray:
        """(len(texts), dim) float32 unit rows; only texts never seen before reach the model.

        Missing texts are embedded longest first in chunks of ``CHUNK`` (similar lengths share
        a chunk, so little padding), and each chunk is written to the cache as soon as it is
        done, so an interrupted cold run keeps its work. ``progress(n)``: n texts embedded.
        The rows returned are exactly the stored ones, so a warm run sees the same bits.
        """
        keys = [text_key(text) for text in texts]
        with self._lock:
            wanted = list(dict.fromkeys(key for key in keys if key not in self._memory))
            self._load_stored(wanted)
            first = dict(zip(keys, texts, strict=True))
            missing = [key for key in wanted if key not in self._memory]
            self.cache_hits += len(keys) - len(missing)
            missing.sort(key=lambda key: -len(first[key]))
            for start in range(0, len(missing), CHUNK):
                chunk = missing[start : start + CHUNK]
                matrix = self._embed([first[key] for key in chunk])
                self._store(chunk, matrix)
                self._memory.update(zip(chunk, matrix, strict=True))
                if progress is not None:
                    progress(len(chunk))
            if not keys:
                return np.zeros((0, 0), dtype=np.float32)
            return np.stack([self._memory[key] for key in keys])
