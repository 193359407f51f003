"""derive_state: original-style gold lines (no state in the data line) must succeed."""

from __future__ import annotations

from tests.tasks.the_cat_api.helpers import run_curl, world
from toolbench.tasks.the_cat_api.catalogue import IMAGES, image_by_id
from toolbench.tasks.the_cat_api.derive import FILLER_RECORDS, derive_state, split_curl

V1 = "https://api.thecatapi.com/v1"
# Lines written in the original task's style (ids made up for these tests).
LABELS = [
    f"curl -X DELETE '{V1}/favourites/zq9'",
    f"""curl -X POST '{V1}/votes' --data '{{"image_id":"k2w", "value":1}}'""",
    f"""curl -X POST '{V1}/favourites' --data '{{"image_id":"p0x"}}'""",
    f"curl -X GET '{V1}/images/abc12'",
    f"curl -X GET '{V1}/votes/31098'",
    f"curl -X DELETE '{V1}/votes/ab1'",
    f"curl -X GET '{V1}/favourites/4477'",
    f"curl -X GET '{V1}/images/search?&order=DESC&breeds=khao,sing'",
    f"curl -X GET '{V1}/favourites'",
]


def test_split_curl() -> None:
    method, url, body = split_curl(LABELS[1])
    assert (method, url, body) == ("POST", f"{V1}/votes", '{"image_id":"k2w", "value":1}')
    assert split_curl(f"curl '{V1}/breeds'") == ("GET", f"{V1}/breeds", None)
    assert split_curl(f"curl {V1}/favourites -d '{{}}'")[0] == "POST"


async def test_every_original_style_label_succeeds() -> None:
    for label in LABELS:
        response = await run_curl(world(derive_state([label])), label)
        assert response.is_success, (label, response.status_code, response.text)
    # One state for all labels at once works too (each label runs on a fresh copy).
    state = derive_state(LABELS)
    for label in LABELS:
        assert (await run_curl(world(state), label)).is_success, label


def test_derived_state_contents() -> None:
    state = derive_state(LABELS)
    assert state == derive_state(list(LABELS))
    favourites = [f["id"] for f in state["favourites"]]
    assert favourites[:2] == ["zq9", 4477] and len(favourites) == 2 + FILLER_RECORDS
    assert state["favourites"][0]["image_id"] == "zq9"
    votes = [v["id"] for v in state["votes"]]
    assert votes[:2] == [31098, "ab1"] and len(votes) == 2 + FILLER_RECORDS
    assert {"k2w", "p0x", "abc12", "zq9"} <= set(state["images"])
    known = IMAGES[3].id
    derived = derive_state(
        [f"""curl -X POST '{V1}/favourites' --data '{{"image_id":"{known}"}}'"""]
    )
    assert derived["images"] == [] and image_by_id(known) is not None
    assert known not in {f["image_id"] for f in derived["favourites"]}


def test_derived_worlds_never_hold_empty_lists() -> None:
    """An empty list would answer like any other empty list (votes like favourites)."""
    for labels in ([], [f"curl -X GET '{V1}/breeds'"], LABELS):
        state = derive_state(labels)
        assert len(state["favourites"]) >= FILLER_RECORDS
        assert len(state["votes"]) >= FILLER_RECORDS
        assert {v["value"] for v in state["votes"]} == {-1, 1}
    listed = derive_state([f"curl -X GET '{V1}/votes?sub_id=kit-9'"])
    assert sum(v["sub_id"] == "kit-9" for v in listed["votes"]) >= 2


async def test_delete_and_post_of_the_same_id_both_succeed() -> None:
    labels = [
        f"curl -X DELETE '{V1}/favourites/q1'",
        f"""curl -X POST '{V1}/favourites' --data '{{"image_id":"q1"}}'""",
    ]
    state = derive_state(labels)
    for label in labels:
        assert (await run_curl(world(state), label)).is_success, label


async def test_wrong_image_still_fails_on_a_derived_world() -> None:
    label = f"""curl -X POST '{V1}/favourites' --data '{{"image_id":"p0x"}}'"""
    wrong = f"""curl -X POST '{V1}/favourites' --data '{{"image_id":"p0y"}}'"""
    assert (await run_curl(world(derive_state([label])), wrong)).status_code == 400
