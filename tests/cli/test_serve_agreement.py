"""A real ``transformers serve`` and ``hf:`` run of one small model agree sample by sample.

A score must not depend on how a model is served (issue 28: the same greedy SmolLM2 scored a
crash rate of 0.0 under ``hf:`` and 1.0 behind ``transformers serve``, because the server hands
back the stop string and ``hf:`` did not stop at stops at all). Here one tiny Llama, built in
the test with seeded random weights and a real BPE tokenizer with a ChatML template
(``tests/tinylm.py``), is run twice through the whole ``toolbench run`` command: once behind a
real ``transformers serve`` started on 127.0.0.1 (``--model openai:DIR --base-url``), once
in-process (``--model hf:DIR --hf-batch-size 1``: one prompt per ``generate`` call, as the
server runs them, so no padding enters either side). Both run on the CPU in float32.

Greedy decoding of random weights picks between nearly equal logits, so the output projection
is scaled up (the best token wins by a margin far above float rounding) rather than the
comparison loosened; the ``--`` token is made likelier so that completion-mode replies meet
the ``------`` stop sequence mid-reply, the case where the backends used to disagree.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")
pytest.importorskip("fastapi")

from tests.conftest import CliResult, read_run
from tests.tinylm import build_tiny_lm

pytestmark = pytest.mark.slow

#: How long ``transformers serve`` may take to import, load the model and listen (a loaded
#: 2-core machine takes ~15 s).
START_TIMEOUT_S = 180
#: Runs ``transformers serve`` as ``transformers`` would, and ends it when the test process that
#: started it is gone (killed, say), so no server outlives its test.
LAUNCHER = """
import os, sys, threading, time
parent = int(sys.argv[1])
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
sys.argv = ["transformers", *sys.argv[2:]]
from transformers.cli.transformers import main
main()
"""
#: The record fields that must agree, sample by sample (what a score is made of).
SCORED = ("status", "success", "metrics", "prediction", "message")
#: The fields of each model call that must agree too: the reply as the harness keeps it, why
#: it ended and what it cost.
CALL = ("text", "finish_reason", "prompt_tokens", "completion_tokens")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_serving(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:]
            pytest.fail(f"transformers serve exited with {process.returncode}:\n{tail}")
        with (
            contextlib.suppress(urllib.error.URLError, OSError),
            urllib.request.urlopen(f"{url}/models", timeout=5) as response,
        ):
            if response.status == 200:
                return
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-3000:]
    pytest.fail(f"transformers serve did not answer in {START_TIMEOUT_S} s:\n{tail}")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-lm")
    return build_tiny_lm(folder, seed=0, lm_head_scale=10.0, boost={"--": 2.0})


@pytest.fixture(scope="module")
def served(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``transformers serve`` of the tiny model on 127.0.0.1; yields its base URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    args = [str(tiny_model), "--host", "127.0.0.1", "--port", str(port)]
    args += ["--device", "cpu", "--dtype", "float32", "--log-level", "warning"]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-c", LAUNCHER, str(os.getpid()), "serve", *args],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_serving(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_records(
    cli: Callable[..., CliResult], out: Path, mode: str, *model_args: str
) -> dict[str, dict[str, Any]]:
    """One ``toolbench run`` of three home_search samples; its records by sample id."""
    code, _, err = cli(
        "run",
        "home_search",
        *model_args,
        "--mode",
        mode,
        "--limit",
        "3",
        "--max-tokens",
        "24",
        "--no-cache",
        "--out",
        str(out),
    )
    assert code == 0, err
    info, records = read_run(out)
    assert info["status"] == "complete"
    assert info["counts"]["home_search"]["infra_error"] == 0
    return {record["id"]: record for record in records}


@pytest.mark.parametrize("mode", ["completion", "chat"])
def test_served_and_local_runs_agree_sample_by_sample(
    mode: str, tiny_model: Path, served: str, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    remote = run_records(
        cli, tmp_path / "served", mode, "--model", f"openai:{tiny_model}", "--base-url", served
    )
    local = run_records(
        cli,
        tmp_path / "local",
        mode,
        "--model",
        f"hf:{tiny_model}",
        "--hf-batch-size",
        "1",
        "--hf-device",
        "cpu",
        "--hf-dtype",
        "float32",
    )
    assert sorted(remote) == sorted(local) and len(local) == 3
    for sample_id, served_record in remote.items():
        local_record = local[sample_id]
        scored = {key: local_record[key] for key in SCORED}
        assert {key: served_record[key] for key in SCORED} == scored, sample_id
        calls = [{key: call[key] for key in CALL} for call in local_record["calls"]]
        served_calls = [{key: call[key] for key in CALL} for call in served_record["calls"]]
        assert served_calls == calls, sample_id
    replies = [call["text"] for record in local.values() for call in record["calls"]]
    assert any(reply.strip() for reply in replies), "the model wrote nothing: nothing compared"
    if mode == "completion":
        # The server hands the stop string back; the harness cut it where hf: stopped, and
        # kept what the server sent as raw_text.
        raw = [c.get("raw_text") for r in remote.values() for c in r["calls"]]
        assert any(text and "------" in text for text in raw), json.dumps(remote, indent=1)
    else:
        # Chat mode has no stop sequences: nothing is cut, on either side.
        for record in (*remote.values(), *local.values()):
            assert all("raw_text" not in call for call in record["calls"])
