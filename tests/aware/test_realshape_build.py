"""The real-shape generator (``benchmarks/aware_realshape.py``) at its tiny size, built through
the CLI: on StableToolBench-shaped data every pre-verification filter fires with its reason in
provenance, and on API-Bank-shaped data the tool-searcher-only records are left out, a value
the user repeats is caught, and an assistant's "password" is not taken for the user's value.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from toolbench.aware.manipulate.replacement_checks import CHECKS
from toolbench.aware.schema import Instance, read_instances
from toolbench.aware.sources.apibank import IS_RETRIEVAL, NEEDS_RETRIEVAL, read_apibank
from toolbench.cli import main

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from aware_realshape import generate
    finally:
        sys.path.remove(str(BENCHMARKS))
    out = tmp_path_factory.mktemp("realshape")
    generate(out, seed=0, size="small")
    return out


def _build(out: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["aware", "build", "--seed", "0", "--cache-dir", str(out / "cache"), *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_generator_is_deterministic(generated: Path, tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from aware_realshape import generate
    finally:
        sys.path.remove(str(BENCHMARKS))
    generate(tmp_path, seed=0, size="small")
    for name in (
        "stabletoolbench/G1_instruction.json",
        "pool/pool.json",
        "apibank/level-1-api.json",
    ):
        assert (tmp_path / name).read_bytes() == (generated / name).read_bytes()
    first = json.loads((generated / "stabletoolbench/G2_category.json").read_text())[0]
    assert set(first) == {"query", "query_id", "api_list", "relevant APIs"}
    assert set(first["api_list"][0]) >= {
        "category_name", "tool_name", "api_name", "api_description",
        "required_parameters", "optional_parameters", "method",
    }  # fmt: skip


def test_every_filter_fires_with_its_reason_on_stabletoolbench_shaped_data(
    generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = generated / "aware-toolbench.jsonl"
    code, output = _build(
        generated, capsys, "--source", f"toolbench:{generated / 'stabletoolbench'}",
        "--pool", str(generated / "pool"), "--manipulation", "api_replacement",
        "--out", str(dataset),
    )  # fmt: skip
    assert code == 0, output
    notes: list[dict[str, Any]] = [
        note
        for twin in read_instances(dataset)
        if twin.manipulation == "api_replacement"
        for note in twin.provenance.notes["pre_verification"]
    ]
    for check in CHECKS:
        fired = [n for n in notes if n["why"].startswith(check + ": ")]
        assert fired, f"{check} never fired"
        assert f"pre-verification {check}: turned down {len(fired)} candidates" in output
    family = next(n for n in notes if n["why"].startswith("tool_family"))
    assert "is the same family as" in family["why"]
    ceiling = next(n for n in notes if n["why"].startswith("similarity_ceiling"))
    assert float(ceiling["why"].split()[1]) >= 0.9


def _twin(instances: list[Instance], record: str) -> Instance:
    """The utterance-removal twin of the first alarm dialogue's record 0 (sign-in) or 1."""
    return next(
        i
        for i in instances
        if i.manipulation == "utterance_removal"
        and (i.twin_id or "").startswith("apibank-AddAlarm-")
        and (i.twin_id or "").endswith(f"-{record}")
    )


def test_apibank_shaped_records_get_the_expected_verdicts(
    generated: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    loaded = read_apibank(generated / "apibank")
    reasons = [line.rsplit("; ", 1)[1] for line in loaded.skipped]
    assert reasons.count(IS_RETRIEVAL) == 4 and reasons.count(NEEDS_RETRIEVAL) == 8
    assert all("level-2-api.json" in line for line in loaded.skipped)
    dataset = generated / "aware-apibank.jsonl"
    caplog.set_level(logging.WARNING)
    code, output = _build(
        generated, capsys, "--source", f"apibank:{generated / 'apibank'}",
        "--manipulation", "api_replacement,utterance_removal",
        "--model", f"replay:{generated / 'rewrites.jsonl'}", "--out", str(dataset),
    )  # fmt: skip
    assert code == 0, output
    warned = [r.getMessage() for r in caplog.records]  # the loader's summary, once per reason
    assert sum(w.startswith("skipped 4 API-Bank records: it is tool retrieval") for w in warned)
    assert sum(w.startswith("skipped 8 API-Bank records: it needs tool retrieval") for w in warned)
    instances = list(read_instances(dataset))
    assert not [i for i in instances if "ToolSearcher" in i.relevant_apis]
    # The alarm time is said in user turn 1 and removed from the last one: rejected.
    repeated = _twin(instances, "1")
    assert repeated.verification.status == "rejected"
    [reason] = repeated.verification.reasons
    assert reason.startswith("values_still_present:") and "user turn 1 still says it" in reason
    # The assistant asks for a "password"; the rewrite drops the user's: not rejected for it.
    sign_in = _twin(instances, "0")
    assert any("password" in t.content for t in sign_in.dialogue if t.role == "assistant")
    assert sign_in.verification.status == "pending", sign_in.verification.reasons
    # Level 2 alone has nothing but tool retrieval: refused, not an empty file.
    code, output = _build(
        generated, capsys, "--source", f"apibank:{generated / 'apibank' / 'level-2-api.json'}",
        "--manipulation", "api_replacement", "--out", str(generated / "never.jsonl"),
    )  # fmt: skip
    assert code == 2 and not (generated / "never.jsonl").exists()
