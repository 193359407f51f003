"""Where and how an ``hf:`` model runs: its folder, its device, its weight dtype, its context
window.

Kept apart from the batching code because each answer is a small decision with its own reason:
``auto`` must take the GPU when there is one (a local model on a GPU box silently running on
the CPU is hours lost), a dtype that is not float32 changes the generated text (so it must reach
the response cache's key), and the context window must be known before generating so a prompt
that does not fit is the model's failure, counted in the score, not a silent truncation. And
``hf:`` reads a local folder only, never the network: a run fetches nothing (a download
could change the weights under a fingerprint, or hang a run on a hub's retries).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from toolbench.errors import UserError
from toolbench.models.args import ReplicaArgs, operational

#: The dtypes ``--hf-dtype`` offers besides ``auto``.
DTYPES = ("float32", "bfloat16", "float16")

#: Config attributes that hold a model's context window, by model family, in the order tried.
CONTEXT_ATTRIBUTES = (
    "max_position_embeddings",
    "n_positions",
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "n_ctx",
)

#: How a model of the Hugging Face hub gets into a local folder (before a run, not during one).
DOWNLOAD = "hf download {name} --local-dir {folder}"

#: Above this, ``tokenizer.model_max_length`` is transformers' "no limit" placeholder (1e30).
SANE_CONTEXT_LIMIT = 10**7


class HFArgs(ReplicaArgs):
    """The ``hf:`` backend's options (``--model-arg KEY=VALUE``; the ``--hf-*`` flags are
    aliases). The dtype and the chat template change the generated text, so they are part of
    the run's fingerprint (the template as its content's digest); batch size, device and
    replicas say how fast and where, and are not."""

    batch_size: int = operational(8, "prompts per generate call", ge=1)
    device: str = operational(
        "auto", "where the model runs: auto (a GPU when there is one), cpu, mps, cuda[:N]"
    )
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = Field(
        "auto", description="weight dtype (auto: the checkpoint's on a GPU, float32 on the CPU)"
    )
    chat_template: Path | None = Field(
        None, description="a Jinja chat template file to use instead of the tokenizer's own"
    )

    @field_validator("device")
    @classmethod
    def _known_device(cls, value: str) -> str:
        text = value.strip().lower()
        kind, colon, index = text.partition(":")
        if text in ("auto", "cpu", "mps", "cuda") or (kind == "cuda" and colon and index.isdigit()):
            return text
        raise ValueError("use auto, cpu, mps, cuda or cuda:N (e.g. cuda:1)")

    def fingerprint(self) -> dict[str, Any]:
        """The dtype, and the chat template as its content's digest: an edited template is a
        different run (the file is read, and refused in one line if it cannot be, here)."""
        template = read_chat_template(self.chat_template)
        return {"dtype": self.dtype, "chat_template": template.digest if template else None}


def resolve_device(requested: str, torch: Any) -> str:
    """``auto`` -> ``cuda`` when torch sees a CUDA GPU, else ``mps`` when available, else
    ``cpu``; an explicit device torch cannot use is the user's to fix, said before loading."""
    requested = requested.strip().lower()
    mps = getattr(torch.backends, "mps", None)
    has_mps = bool(mps is not None and mps.is_available())
    if requested == "auto":
        if torch.cuda.is_available():
            return "cuda"
        return "mps" if has_mps else "cpu"
    kind, _, index = requested.partition(":")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise UserError(
                f"--hf-device {requested}: torch sees no CUDA GPU on this machine; "
                "use --hf-device auto (or cpu), or install a CUDA build of torch"
            )
        count = torch.cuda.device_count()
        if index and int(index) >= count:
            raise UserError(
                f"--hf-device {requested}: torch sees {count} CUDA GPU(s) (cuda:0 to "
                f"cuda:{count - 1}); pick one of them or use --hf-device auto"
            )
        return requested
    if kind == "mps" and not has_mps:
        raise UserError(
            "--hf-device mps: torch has no Apple GPU (MPS) here; use --hf-device auto or cpu"
        )
    if kind not in ("cpu", "mps"):
        raise UserError(f"--hf-device {requested}: use auto, cpu, mps, cuda or cuda:N")
    return requested


def load_dtype(requested: str, device: str, torch: Any) -> Any:
    """The ``dtype`` argument for ``from_pretrained``: ``auto`` is the checkpoint's own dtype
    on a GPU (what it was meant to run in) and float32 on the CPU (half precision there is
    slow and, for bfloat16, less exact than the same model on a GPU)."""
    requested = requested.strip().lower()
    if requested == "auto":
        return torch.float32 if device == "cpu" else "auto"
    if requested not in DTYPES:
        raise UserError(f"--hf-dtype {requested}: use auto, {', '.join(DTYPES)}")
    return getattr(torch, requested)


def dtype_name(hf_model: Any) -> str:
    """The loaded weights' dtype as ``--hf-dtype`` writes it (``torch.bfloat16`` -> bfloat16)."""
    return str(getattr(hf_model, "dtype", "float32")).removeprefix("torch.")


def model_name(base: str, dtype: str, template_digest: str | None = None) -> str:
    """The name the response cache keys on: ``base`` for float32 weights (the CPU default, so
    caches written before dtypes were a choice stay valid), ``base@DTYPE`` otherwise, so a
    bfloat16 answer is never served for a float32 request or the other way round; and
    ``+template-DIGEST`` with a chat template of the run's own (the cache keys on the
    messages, not on the text the template makes of them)."""
    name = base if dtype == "float32" else f"{base}@{dtype}"
    return name if template_digest is None else f"{name}+template-{template_digest}"


@dataclass(frozen=True)
class ChatTemplate:
    text: str
    digest: str  # the first 12 hex of the text's sha256


def read_chat_template(path: Path | None) -> ChatTemplate | None:
    """The run's chat template file (``--hf-chat-template``), or None to keep the tokenizer's.
    A file that cannot be read as UTF-8 text is a ``UserError`` naming the flag."""
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise UserError(
            f"--hf-chat-template {path}: cannot be read ({reason}); give a Jinja template file"
        ) from None
    if not text.strip():
        raise UserError(f"--hf-chat-template {path}: the file is empty; give a Jinja template")
    return ChatTemplate(text, hashlib.sha256(text.encode()).hexdigest()[:12])


def context_length_of(config: Any, tokenizer: Any) -> int | None:
    """The model's context window in tokens: from its config (the text part of a multimodal
    one), else from ``tokenizer.model_max_length`` when that is a real number; None when
    neither says."""
    text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
    for source in (text_config, config):
        for attribute in CONTEXT_ATTRIBUTES:
            value = getattr(source, attribute, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < SANE_CONTEXT_LIMIT:
        return limit
    return None


def dtype_kwarg(version: str | None = None) -> str:
    """The name ``from_pretrained`` takes the dtype by: ``dtype`` since transformers 4.56
    (``torch_dtype``, which older releases need, is deprecated there)."""
    if version is None:
        import transformers  # deferred: transformers is the optional extra toolbench[hf]

        version = transformers.__version__
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:2]]
    major, minor = [*parts, 0, 0][:2]
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def model_folder(spec: str) -> Path:
    """The local folder ``hf:SPEC`` names, or a ``UserError`` saying how to give one: a name
    that is no folder here (a hub name such as ``gpt2``) is never looked up online."""
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return folder
    flag = f"--model hf:{spec}"
    if folder.exists():
        raise UserError(
            f"{flag}: {folder} is a file; give the model's folder (its config.json, weights "
            "and tokenizer files)"
        )
    why = f"{flag}: no model folder at {folder} (hf: loads a local folder, never the hub)"
    if spec.startswith(("/", ".", "~")) or spec.count("/") > 1:
        raise UserError(f"{why}; give the folder's path")
    local = f"models/{folder.name}"
    raise UserError(
        f"{why}; download it first ({DOWNLOAD.format(name=spec, folder=local)}) and give "
        f"--model hf:{local}"
    )


def go_offline() -> None:
    """Tell huggingface_hub and transformers, before they are imported, that there is no
    network (``HF_HUB_OFFLINE``; read once, at their import): whatever they would fetch for a
    folder that lacks a file is then an error, not a download. Loading also passes
    ``local_files_only``, which holds even when they were imported before."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")


def load_pretrained(spec: str, folder: Path, dtype: Any) -> tuple[Any, Any]:
    """The tokenizer and the model of ``hf:SPEC`` in ``folder``, read from it alone
    (``local_files_only``); a folder transformers cannot load is a ``UserError`` saying why."""
    go_offline()
    # deferred: transformers is the optional extra toolbench[hf]
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(
            str(folder), local_files_only=True, padding_side="left"
        )
        model = AutoModelForCausalLM.from_pretrained(
            str(folder), local_files_only=True, **{dtype_kwarg(): dtype}
        )
    except Exception as error:  # transformers raises many kinds for a bad model folder
        reason = " ".join(str(error).split())[:300]
        raise UserError(
            f"--model hf:{spec}: cannot load Hugging Face model from {folder}: {reason}"
        ) from None
    return tokenizer, model
