"""derive_state: original-style gold lines (no state in the data line) must succeed."""

from __future__ import annotations

from tests.tasks.the_cat_api.helpers import run_curl, world
from toolbench.tasks.the_cat_api.catalogue import IMAGE_BY_ID, IMAGES
from toolbench.tasks.the_cat_api.derive import derive_state, split_curl

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
    assert [f["id"] for f in state["favourites"]] == ["zq9", 4477]
    assert state["favourites"][0]["image_id"] == "zq9"
    assert [v["id"] for v in state["votes"]] == [31098, "ab1"]
    assert {"k2w", "p0x", "abc12", "zq9"} <= set(state["images"])
    known = IMAGES[3].id
    derived = derive_state(
        [f"""curl -X POST '{V1}/favourites' --data '{{"image_id":"{known}"}}'"""]
    )
    assert derived == {"favourites": [], "votes": [], "images": []}
    assert known in IMAGE_BY_ID


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
