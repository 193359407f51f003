"""Digests of the files a model spec runs, for the run's fingerprint.

A spec names files: ``agent:python my_agent.py`` runs ``my_agent.py``, ``hf:./model`` loads the
weights in ``./model``, ``replay:preds.jsonl`` answers from that file. The spec's text alone
would let a fixed agent, rerun into its folder, keep the old agent's records as if they were
its own. So the fingerprint holds a digest of each such file, and a changed file is a changed
configuration: a resume into the folder is refused naming the file.

Nothing named is imported or run here: an agent's ``-m`` module is found on the path the way
the import system would find it, without executing any package's code.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["file_digest", "model_files"]

# Files at most this large are hashed whole; larger ones (model weights) by their size and
# their first and last MiB, so a run over multi-GB weights does not spend minutes hashing them
# at every start; a retrained or replaced checkpoint changes all three.
WHOLE_FILE_BYTES = 64 << 20
_EDGE_BYTES = 1 << 20
_MAX_FILES = 200  # per spec: enough for any model folder, bounded for a hostile command line

# What an hf: folder holds that can change a generation.
_MODEL_FOLDER_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "tokenizer.model",
    "special_tokens_map.json",
    "vocab.json",
    "merges.txt",
    "chat_template.jinja",
    "chat_template.json",
)
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


def model_files(spec: str, cwd: Path | None = None) -> dict[str, str]:
    """``{path as named: digest}`` for every file ``spec`` runs that exists; empty for specs
    that name none (``oracle``, ``openai:NAME``)."""
    kind, _, rest = spec.strip().partition(":")
    base = cwd or Path.cwd()
    if kind == "agent" and rest.startswith("replay:"):  # the harness's scripted agent
        kind, rest = "replay", rest.partition(":")[2]
    if kind == "agent":
        paths = _agent_files(rest, base)
    elif kind == "hf":
        paths = _model_folder_files(base / rest) if (base / rest).is_dir() else []
    elif kind == "replay":
        paths = [base / rest] if (base / rest).is_file() else []
    else:
        paths = []
    return {_shown(path, base): file_digest(path) for path in paths[:_MAX_FILES]}


def file_digest(path: Path) -> str:
    """sha256 of the file, or of its size and edges when it is larger than WHOLE_FILE_BYTES."""
    hasher = hashlib.sha256()
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            if size <= WHOLE_FILE_BYTES:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    hasher.update(block)
                return hasher.hexdigest()
            hasher.update(f"size {size}\0".encode())
            hasher.update(handle.read(_EDGE_BYTES))
            handle.seek(size - _EDGE_BYTES)
            hasher.update(handle.read(_EDGE_BYTES))
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    return "edges:" + hasher.hexdigest()


def _agent_files(command: str, base: Path) -> list[Path]:
    """The files an agent command names: its program when given as a path, each argument
    that is a file, and the module after ``-m`` (its ``__main__`` and ``__init__`` for a
    package)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return []  # the command itself is refused when the agent is built
    found: list[Path] = []
    for position, token in enumerate(argv):
        if position and argv[position - 1] == "-m":
            found.extend(_module_files(token, base))
        elif token.startswith("-"):
            continue
        elif (base / token).is_file() and (position or "/" in token):
            found.append(base / token)
    return list(dict.fromkeys(found))


def _module_files(name: str, base: Path) -> list[Path]:
    """Where ``python -m name`` run from ``base`` would find the module, found without
    importing anything (each package level looked up in the one above)."""
    search: list[str] = [str(base), *_python_path(), *sys.path]
    files: list[Path] = []
    parts = name.split(".")
    for depth in range(len(parts)):
        found = importlib.machinery.PathFinder.find_spec(".".join(parts[: depth + 1]), search)
        if found is None:
            return files
        if found.origin and os.path.isfile(found.origin):
            files.append(Path(found.origin))
        locations = found.submodule_search_locations
        if depth == len(parts) - 1 and locations:
            files.extend(Path(place) / "__main__.py" for place in locations)
        search = list(locations or [])
    return [path for path in files if path.is_file()]


def _python_path() -> Iterable[str]:
    return [part for part in os.environ.get("PYTHONPATH", "").split(os.pathsep) if part]


def _model_folder_files(folder: Path) -> list[Path]:
    named = [folder / name for name in _MODEL_FOLDER_FILES if (folder / name).is_file()]
    weights = sorted(
        path for path in folder.iterdir() if path.suffix in _WEIGHT_SUFFIXES and path.is_file()
    )
    return named + weights


def _shown(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)
