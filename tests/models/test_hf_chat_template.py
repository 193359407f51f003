"""--hf-chat-template: a run's own chat template replaces the tokenizer's, and is part of the
name the response cache keys on (and of the run's fingerprint, as its digest)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from tests.models.test_hf import build_tiny_model
from toolbench.cli.main import main
from toolbench.models.base import ModelOptions
from toolbench.models.hf import HFModel
from toolbench.types import GenerationRequest

TEMPLATE = (
    "{% for m in messages %}<<{{ m['role'] }}>> {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<<assistant>>{% endif %}"
)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


def test_the_runs_template_renders_the_chat(model_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "chat.jinja"
    path.write_text(TEMPLATE, encoding="utf-8")
    model = HFModel(
        str(model_dir), ModelOptions(model_args={"device": "cpu", "chat_template": path})
    )
    request = GenerationRequest(messages=({"role": "user", "content": "find homes"},))
    shown = model.tokenizer.decode(model._encode(request))
    assert shown.startswith("<<user>> find homes") and shown.endswith("<<assistant>>")
    assert model.name.startswith(f"hf:{model_dir}+template-")
    plain = HFModel(str(model_dir), ModelOptions(model_args={"device": "cpu"}))
    assert plain.name == f"hf:{model_dir}"  # the cache never serves one template's answers


@pytest.mark.parametrize(
    ("content", "says"), [("", "the file is empty"), (b"\xff\xfe", "cannot be read")]
)
def test_an_unusable_template_file_is_one_line(
    model_dir: Path, tmp_path: Path, content: str | bytes, says: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path = tmp_path / "chat.jinja"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    argv = [
        "run", "home_search", "--model", f"hf:{model_dir}", "--limit", "1", "--mode", "chat",
        "--hf-chat-template", str(path), "--out", str(tmp_path / "run"),
    ]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--hf-chat-template {path}" in err and says in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()
