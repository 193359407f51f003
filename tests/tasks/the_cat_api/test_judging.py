"""The judge tells right from wrong: wrong requests fail, equivalent rewrites succeed.

Scored through the task's own path (golds executed, each prediction on a fresh world, the
response and the world compared, the endpoint checked), on our generated test set and on
records in the original data's shape (worlds derived from the gold lines).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CliResult, read_run
from tests.tasks.the_cat_api.judging import (
    ORIGINAL,
    V1,
    original_records,
    sample_of,
    score_pairs,
    v0_records,
)
from tests.tasks.the_cat_api.mutations import equivalent_requests, wrong_requests
from toolbench.types import Sample, Status


def _original_sample(gold: str) -> Sample:
    return sample_of(0, {"prompt": "q", "completion": [gold], "compare_string_only": False})


def _succeeds(gold: str, prediction: str) -> bool:
    [outcome] = score_pairs([(_original_sample(gold), prediction)])
    return outcome.success


def test_votes_listing_never_passes_for_favourites() -> None:
    gold = f"curl -X GET '{V1}/favourites'"
    assert _succeeds(gold, gold)
    assert not _succeeds(gold, f"curl -X GET '{V1}/votes'")
    assert not _succeeds(f"curl -X GET '{V1}/votes'", gold)


def test_size_outside_the_documented_set_is_a_400() -> None:
    gold = f"curl -X GET '{V1}/images/search?limit=3&size=full'"
    [outcome] = score_pairs([(_original_sample(gold), gold.replace("full", "fullx"))])
    assert outcome.status is Status.MODEL_ERROR and not outcome.success
    assert '"size" must be one of' in outcome.message


def test_nonexistent_breed_in_a_list_is_a_400() -> None:
    gold = f"curl -X GET '{V1}/images/search?&breeds=pers,abys,bomb,siam'"
    [outcome] = score_pairs([(_original_sample(gold), gold.replace("siam", "siamx"))])
    assert outcome.status is Status.MODEL_ERROR and "siamx" in outcome.message


def test_limit_off_by_one_is_visible() -> None:
    gold = f"curl -X GET '{V1}/images/search?limit=5&breeds=bomb&mime_types=gif'"
    assert _succeeds(gold, gold)
    assert not _succeeds(gold, gold.replace("limit=5", "limit=6"))
    assert not _succeeds(gold, gold.replace("limit=5", "limit=4"))


@pytest.mark.parametrize(
    "wrong",
    [
        "order=SHUFFLE",  # not a documented order
        "mime_types=jpeg2",
        "category_ids=3",  # no such category
        "has_breeds=maybe",
    ],
)
def test_other_undocumented_values_are_400s(wrong: str) -> None:
    gold = f"curl -X GET '{V1}/images/search?limit=2'"
    [outcome] = score_pairs([(_original_sample(gold), gold.replace("limit=2", f"limit=2&{wrong}"))])
    assert outcome.status is Status.MODEL_ERROR and "HTTP 400" in outcome.message


def test_rand_is_the_older_spelling_of_random_order() -> None:
    gold = f"curl -X GET '{V1}/images/search?limit=3&order=RANDOM&breed_ids=beng'"
    assert _succeeds(gold, gold.replace("order=RANDOM", "order=RAND"))
    assert _succeeds(gold, gold.replace("order=RANDOM", "order=Rand"))
    assert not _succeeds(gold, gold.replace("order=RANDOM", "order=ASC"))


def test_vote_value_outside_the_documented_set_is_a_400() -> None:
    gold = f"""curl -X POST '{V1}/votes' --data '{{"image_id":"p9z", "value":1}}'"""
    [outcome] = score_pairs([(_original_sample(gold), gold.replace('"value":1', '"value":2'))])
    assert outcome.status is Status.MODEL_ERROR and '"value" must be one of' in outcome.message


def _cases() -> list[tuple[Sample, str, str]]:
    """About 100 deliberately wrong requests, built from our gold labels (generated test set
    and original-shaped lines), spread over every kind of mistake."""
    records = original_records() + v0_records()
    cases = []
    for index, record in enumerate(records):
        sample = sample_of(index, record)
        wrongs = wrong_requests(record["completion"][0], record.get("state"))
        # One per gold, rotating through its mistakes so that every kind appears.
        what, line = wrongs[index % len(wrongs)]
        cases.append((sample, what, line))
    return cases


def test_wrong_requests_almost_never_succeed() -> None:
    cases = _cases()
    assert len(cases) >= 100
    outcomes = score_pairs([(sample, line) for sample, _, line in cases])
    passed = [(what, line) for (_, what, line), o in zip(cases, outcomes, strict=True) if o.success]
    kinds = Counter(what for _, what, _ in cases)
    assert {
        "wrong endpoint",
        "limit off by one",
        "another image on a write",
        "another id",
        "size typo",
        "nonexistent breed",
        "other vote value",
        "added filter",
    } <= set(kinds)
    assert len(passed) <= 2, passed
    print(f"{len(passed)} of {len(cases)} wrong requests scored success: {kinds}")


def test_equivalent_rewrites_always_succeed() -> None:
    records = original_records() + v0_records()
    pairs = []
    for index, record in enumerate(records):
        sample = sample_of(index, {**record, "compare_string_only": False})
        pairs += [(sample, line) for _, line in equivalent_requests(record["completion"][0])]
    outcomes = score_pairs(pairs)
    failed = [(p, o.message) for (_, p), o in zip(pairs, outcomes, strict=True) if not o.success]
    assert len(pairs) >= 300 and not failed, failed[:5]


def test_oracle_on_an_original_layout_folder(cli: CliResult, tmp_path: Path) -> None:
    import json

    folder = tmp_path / "toolbench_sambanova" / "the_cat_api" / "v0"
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"prompt": p, "completion": [g], "compare_string_only": s})
        for p, g, s in ORIGINAL
    ]
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    code, _, err = cli(  # type: ignore[operator]
        "run", "the_cat_api", "--model", "oracle",
        "--data-dir", str(tmp_path / "toolbench_sambanova"), "--out", str(out),
    )  # fmt: skip
    assert code == 0, err
    info, records = read_run(out)
    assert len(records) == len(ORIGINAL) and all(r["success"] for r in records)
    assert info["metrics"]["the_cat_api"]["success_rate"] == 1.0
    assert info["counts"]["the_cat_api"] == {"scored": len(ORIGINAL), "model_error": 0,
                                             "infra_error": 0, "context_overflow": 0}  # fmt: skip
