"""Where an hf: model runs (device), in what precision (dtype) and with how much context."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

import torch

from toolbench.errors import UserError
from toolbench.models.hf_setup import (
    context_length_of,
    dtype_kwarg,
    load_dtype,
    model_name,
    resolve_device,
)


def fake_torch(cuda: int = 0, mps: bool = False) -> Any:
    """torch's device queries, answered as a machine with ``cuda`` GPUs (and MPS) would."""
    return SimpleNamespace(
        cuda=SimpleNamespace(is_available=lambda: cuda > 0, device_count=lambda: cuda),
        backends=SimpleNamespace(mps=SimpleNamespace(is_available=lambda: mps)),
    )


def test_auto_takes_a_gpu_when_there_is_one() -> None:
    assert resolve_device("auto", fake_torch(cuda=2)) == "cuda"
    assert resolve_device("auto", fake_torch(mps=True)) == "mps"
    assert resolve_device("auto", fake_torch()) == "cpu"
    assert resolve_device("cuda:1", fake_torch(cuda=2)) == "cuda:1"
    assert resolve_device("CPU", fake_torch(cuda=1)) == "cpu"


def test_auto_on_this_machine_matches_torch() -> None:
    expected = "cuda" if torch.cuda.is_available() else None
    device = resolve_device("auto", torch)
    assert device == expected or (expected is None and device in ("cpu", "mps"))


@pytest.mark.parametrize(
    ("device", "machine", "says"),
    [
        ("cuda", fake_torch(), "torch sees no CUDA GPU"),
        ("cuda:0", fake_torch(), "torch sees no CUDA GPU"),
        ("cuda:2", fake_torch(cuda=2), "torch sees 2 CUDA GPU(s) (cuda:0 to cuda:1)"),
        ("mps", fake_torch(cuda=1), "no Apple GPU"),
        ("tpu", fake_torch(), "use auto, cpu, mps, cuda or cuda:N"),
    ],
)
def test_a_device_torch_cannot_use_is_a_user_error(device: str, machine: Any, says: str) -> None:
    with pytest.raises(UserError, match="--hf-device") as caught:
        resolve_device(device, machine)
    assert says in str(caught.value)


def test_dtype_auto_is_float32_on_cpu_and_the_checkpoints_on_a_gpu() -> None:
    assert load_dtype("auto", "cpu", torch) is torch.float32
    assert load_dtype("auto", "cuda:0", torch) == "auto"
    assert load_dtype("bfloat16", "cpu", torch) is torch.bfloat16
    assert load_dtype("float16", "cuda", torch) is torch.float16
    with pytest.raises(UserError, match="--hf-dtype int8"):
        load_dtype("int8", "cpu", torch)


def test_dtype_enters_the_name_only_when_not_float32() -> None:
    assert model_name("hf:/m", "float32") == "hf:/m"
    assert model_name("hf:/m", "bfloat16") == "hf:/m@bfloat16"
    assert model_name("smollm2", "float16") == "smollm2@float16"


def test_dtype_keyword_follows_the_transformers_release() -> None:
    assert dtype_kwarg("5.24.0") == "dtype" and dtype_kwarg("4.56.1") == "dtype"
    assert dtype_kwarg("4.45.2") == "torch_dtype" and dtype_kwarg("4.9") == "torch_dtype"
    assert dtype_kwarg() == "dtype"  # the installed transformers


def test_context_length_from_the_config_of_each_family() -> None:
    from transformers import GPT2Config, LlamaConfig, PretrainedConfig

    no_limit = SimpleNamespace(model_max_length=int(1e30))
    assert context_length_of(LlamaConfig(max_position_embeddings=2048), no_limit) == 2048
    assert context_length_of(GPT2Config(n_positions=1024), no_limit) == 1024
    # Nothing in the config: the tokenizer's limit, when it is a real one.
    bare = PretrainedConfig()
    assert context_length_of(bare, SimpleNamespace(model_max_length=4096)) == 4096
    assert context_length_of(bare, no_limit) is None
    assert context_length_of(bare, SimpleNamespace()) is None
