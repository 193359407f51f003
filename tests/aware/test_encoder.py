"""The cached API encoder: each text reaches the model once, identity is portable, bad paths say
how to fix them. A counting fake stands in for the model (the real one is used in
test_api_replacement.py)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from toolbench.aware import encoder as encoder_module
from toolbench.aware.encoder import DEFAULT_NAME, ApiEncoder, fingerprint
from toolbench.errors import UserError


class CountingModel:
    """Deterministic vectors from the text's bytes; counts calls and texts."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.max_seq_length = 256
        self.seen_lengths: list[int] = []

    def encode(self, sentences: list[str], /, **kwargs: Any) -> np.ndarray:
        self.calls.append(list(sentences))
        self.seen_lengths.append(self.max_seq_length)
        rows = []
        for text in sentences:
            rng = np.random.default_rng(list(text.encode()) or [0])
            rows.append(rng.normal(size=8) * 3)  # not unit length: ApiEncoder normalises
        return np.array(rows)

    @property
    def texts(self) -> int:
        return sum(len(call) for call in self.calls)


def _encoder(tmp_path: Path, model: CountingModel, **kwargs: Any) -> ApiEncoder:
    return ApiEncoder(model=model, name="counting", cache_dir=tmp_path / "cache", **kwargs)


def test_second_run_over_the_same_texts_makes_no_model_calls(tmp_path: Path) -> None:
    model = CountingModel()
    with _encoder(tmp_path, model) as first:
        cold = first.encode(["weather", "currency", "weather"])
    assert model.calls == [["currency", "weather"]]  # duplicates once, longest first
    assert first.encoded == 2 and first.model_calls == 1
    assert cold.dtype == np.float32 and cold.shape == (3, 8)
    assert np.allclose(np.linalg.norm(cold, axis=1), 1, atol=1e-6)
    assert np.array_equal(cold[0], cold[2])

    with _encoder(tmp_path, model) as second:  # a new process: nothing in memory
        warm = second.encode(["weather", "currency", "weather"])
        assert second.model_calls == 0 and second.cache_hits == 3
        assert np.array_equal(warm, cold)  # the very bits stored
        second.encode(["currency", "recipes"])
    assert model.calls[-1] == ["recipes"] and len(model.calls) == 2


def test_cache_is_sqlite_in_wal_mode_under_the_cli_cache_dir(tmp_path: Path) -> None:
    with _encoder(tmp_path, CountingModel()) as enc:
        enc.encode(["a"])
        assert enc.cache_path == tmp_path / "cache" / "embeddings" / "api_vectors.sqlite"
    with sqlite3.connect(tmp_path / "cache" / "embeddings" / "api_vectors.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 1


def test_default_cache_root_follows_toolbench_cache_dir(tmp_path: Path) -> None:
    # conftest points TOOLBENCH_CACHE_DIR at <tmp_path>/cache for every test
    enc = ApiEncoder(model=CountingModel(), name="counting")
    assert enc.cache_path == tmp_path / "cache" / "embeddings" / "api_vectors.sqlite"


def test_without_cache_nothing_is_written_and_memory_still_dedupes(tmp_path: Path) -> None:
    model = CountingModel()
    enc = _encoder(tmp_path, model, use_cache=False)
    enc.encode(["a", "b"])
    enc.encode(["b", "a"])
    assert model.texts == 2 and enc.cache_path is None
    assert not (tmp_path / "cache").exists()


def test_encoders_with_other_identities_do_not_share_vectors(tmp_path: Path) -> None:
    model = CountingModel()
    _encoder(tmp_path, model).encode(["a"])
    ApiEncoder(model=model, name="other", cache_dir=tmp_path / "cache").encode(["a"])
    _encoder(tmp_path, model, max_seq_length=64).encode(["a"])
    assert model.texts == 3


def test_misses_go_in_chunks_with_progress_and_each_chunk_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(encoder_module, "CHUNK", 3)
    model = CountingModel()
    done: list[int] = []
    texts = [f"api {i}" * (i + 1) for i in range(7)]
    out = _encoder(tmp_path, model).encode(texts, progress=done.append)
    assert [len(call) for call in model.calls] == [3, 3, 1] and done == [3, 3, 1]
    assert model.calls[0][0] == texts[-1]  # longest first: similar lengths share a batch
    assert np.array_equal(out, _encoder(tmp_path, CountingModel()).encode(texts))


def test_max_seq_length_is_set_for_the_call_and_restored(tmp_path: Path) -> None:
    model = CountingModel()
    enc = _encoder(tmp_path, model, max_seq_length=128)
    enc.encode(["a"])
    assert model.seen_lengths == [128] and model.max_seq_length == 256
    assert enc.identity.endswith(":max_seq_length=128")
    with pytest.raises(UserError, match="max_seq_length"):
        _encoder(tmp_path, model, max_seq_length=0)


def test_empty_input(tmp_path: Path) -> None:
    model = CountingModel()
    assert _encoder(tmp_path, model).encode([]).shape[0] == 0 and model.calls == []


def _fake_model_folder(root: Path) -> Path:
    folder = root / "my-encoder"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "modules.json").write_text("[]")
    (folder / "config.json").write_text('{"hidden_size": 8}')
    (folder / "1_Pooling" / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 100)
    (folder / "README.md").write_text("docs do not change the model")
    return folder


def test_identity_is_portable_and_tracks_configs_and_settings(tmp_path: Path) -> None:
    folder = _fake_model_folder(tmp_path / "a")
    copy = tmp_path / "b" / "my-encoder"
    shutil.copytree(folder, copy)
    model = CountingModel()
    here = ApiEncoder(folder, model=model, cache_dir=tmp_path)
    there = ApiEncoder(copy, model=model, cache_dir=tmp_path)
    assert here.identity == there.identity and here.identity.startswith("my-encoder@")
    assert len(here.identity.split("@")[1]) == 8
    # the cache namespace is local (path, mtimes): the copy does not read the original's rows
    here.encode(["x"])
    there.encode(["x"])
    assert model.texts == 2

    (copy / "README.md").write_text("edited")
    assert ApiEncoder(copy, model=model).identity == here.identity
    (copy / "config.json").write_text('{"hidden_size": 9}')
    assert ApiEncoder(copy, model=model).identity != here.identity
    portable, _ = fingerprint(folder, {"max_seq_length": None})
    assert portable != fingerprint(folder, {"max_seq_length": 128})[0]


def test_weights_are_identified_by_size_without_being_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _fake_model_folder(tmp_path)
    monkeypatch.setattr(encoder_module, "SMALL_FILE", 50)  # the 100-byte "weights" are large now
    read: list[str] = []
    real_read = Path.read_bytes

    def spy(path: Path) -> bytes:
        read.append(path.name)
        return real_read(path)

    monkeypatch.setattr(Path, "read_bytes", spy)
    before = fingerprint(folder, {})
    assert "model.safetensors" not in read
    (folder / "model.safetensors").write_bytes(b"\1" * 100)  # same size: same portable digest
    assert fingerprint(folder, {})[0] == before[0]
    (folder / "model.safetensors").write_bytes(b"\1" * 101)
    assert fingerprint(folder, {})[0] != before[0]


def test_default_encoder_identity_needs_no_model_load() -> None:
    enc = ApiEncoder()
    assert enc.identity.startswith(f"{DEFAULT_NAME}@") and enc.model_calls == 0


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda root: root / "nowhere", "no such folder"),
        (lambda root: (root / "file.bin").write_bytes(b"x") and root / "file.bin", "is a file"),
        (lambda root: (root / "empty").mkdir() or root / "empty", "no modules.json"),
    ],
)
def test_bad_encoder_path_names_the_path_and_the_fix(
    tmp_path: Path, make: Any, problem: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(UserError) as error:
        ApiEncoder(path)
    message = str(error.value)
    assert message.startswith(f"--encoder {path}: ") and problem in message
    assert "sentence-transformers model folder" in message and "leave --encoder out" in message


def test_a_folder_that_does_not_load_is_a_user_error(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "modules.json").write_text("not json")
    enc = ApiEncoder(folder, cache_dir=tmp_path)
    with pytest.raises(UserError, match=r"--encoder .*broken: cannot be loaded"):
        enc.encode(["a"])
