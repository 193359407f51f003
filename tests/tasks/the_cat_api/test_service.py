"""The simulated Cat API: response shapes, search filters, user state and its errors."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from tests.tasks.the_cat_api.helpers import get, send, world
from toolbench.tasks.the_cat_api import search
from toolbench.tasks.the_cat_api.breeds import BREEDS
from toolbench.tasks.the_cat_api.catalogue import (
    BUCKETS,
    IMAGES,
    MAX_LIMIT,
    OFFSETS,
    image_at,
    image_by_id,
    index_of,
)
from toolbench.tasks.the_cat_api.service import DUPLICATE, SERVICE, serve_app

URL = re.compile(r"^https://cdn2\.thecatapi\.com/images/[A-Za-z0-9]{3,9}\.(jpg|png|gif)$")
FAV_IMAGE = IMAGES[0].id
STATE: dict[str, Any] = {
    "favourites": [
        {"id": 2301, "image_id": FAV_IMAGE, "sub_id": None},
        {"id": 2302, "image_id": IMAGES[1].id, "sub_id": "maya"},
    ],
    "votes": [{"id": 5001, "image_id": IMAGES[2].id, "sub_id": "maya", "value": 0}],
}


def _body(data: dict[str, Any]) -> str:
    return json.dumps(data)


def test_service_contract() -> None:
    assert SERVICE.name == "the_cat_api"
    assert SERVICE.hosts == frozenset({"api.thecatapi.com"})
    assert SERVICE.app is not None
    assert SERVICE.snapshot(world()) == {"favourites": [], "votes": []}


def test_catalogue_shape() -> None:
    """Tens of thousands of images, ids decodable without a table, every bucket bigger than
    the largest page (so a limit is always visible)."""
    assert 100_000 <= len(IMAGES) <= 400_000
    sample = [IMAGES[i] for i in range(0, len(IMAGES), 97)]
    assert len({i.id for i in sample}) == len(sample)
    assert all(URL.match(i.url) for i in sample)
    assert all(index_of(image.id) == n * 97 for n, image in enumerate(sample))
    assert index_of("abc") is None and index_of("zzzzzzzzz") is None
    assert index_of("8nlzQdV!!") is None and image_by_id("tu") is None
    assert {b["id"] for b in BREEDS} <= {breed for breed, _, _ in BUCKETS}
    assert min(OFFSETS[k + 1] - OFFSETS[k] for k in range(len(BUCKETS))) > MAX_LIMIT
    assert len(BREEDS) == 67


async def test_search_default_and_limits() -> None:
    w = world()
    [image] = await get(w, "/v1/images/search")
    assert set(image) >= {"id", "url", "width", "height"} and URL.match(image["url"])
    assert len(await get(w, "/v1/images/search?limit=5")) == 5
    assert len(await get(w, "/v1/images/search?limit=500")) == 100
    response = await send(w, "GET", "/v1/images/search?limit=lots")
    assert response.status_code == 400 and "limit" in response.text
    assert (await send(w, "GET", "/v1/images/search?limit=1e999")).status_code == 400


async def test_search_filters() -> None:
    w = world()
    found = await get(w, "/v1/images/search?limit=100&breed_ids=beng,siam")
    assert found and {i["breeds"][0]["id"] for i in found} == {"beng", "siam"}
    alias = await get(w, "/v1/images/search?limit=100&breeds=siam,beng")
    assert alias == found
    gifs = await get(w, "/v1/images/search?limit=50&mime_types=gif")
    assert len(gifs) == 50 and all(i["url"].endswith(".gif") for i in gifs)
    mixed = await get(w, "/v1/images/search?limit=100&mime_types=jpg,png")
    assert {i["url"].rsplit(".", 1)[1] for i in mixed} == {"jpg", "png"}
    boxes = await get(w, "/v1/images/search?limit=100&category_ids=5")
    assert boxes and all(i["categories"] == [{"id": 5, "name": "boxes"}] for i in boxes)
    with_breeds = await get(w, "/v1/images/search?limit=100&has_breeds=1")
    assert len(with_breeds) == 100 and all(i["breeds"] for i in with_breeds)
    bare = await get(w, "/v1/images/search?limit=10&breed_ids=mcoo&include_breeds=0")
    assert bare and all("breeds" not in i for i in bare)
    response = await send(w, "GET", "/v1/images/search?mime_types=bmp")
    assert response.status_code == 400
    # The original data's style: a leading '&' and upper-case order.
    assert len(await get(w, "/v1/images/search?&order=DESC&breeds=khao,sing,ebur,sava")) == 1


async def test_search_order_and_pages() -> None:
    w = world()
    asc = await get(w, "/v1/images/search?limit=100&breed_ids=beng,pers,sphy&order=ASC")
    desc = await get(w, "/v1/images/search?limit=100&breed_ids=beng,pers,sphy&order=desc")
    assert not {i["id"] for i in desc} & {i["id"] for i in asc}  # far more than 200 images
    selection = search.select(frozenset({"beng", "pers", "sphy"}), None, None, False)
    everything = search.ordered(selection, False, 0, selection.total)
    assert search.ordered(selection, True, 0, selection.total) == everything[::-1]
    assert [image_at(i).id for i in everything[:100]] == [i["id"] for i in asc]
    assert [image_at(i).id for i in everything[-100:]] == [i["id"] for i in desc][::-1]
    first = await get(w, "/v1/images/search?limit=4&page=0&breed_ids=beng,pers,sphy&order=ASC")
    second = await get(w, "/v1/images/search?limit=4&page=1&breed_ids=beng,pers,sphy&order=ASC")
    assert first + second == asc[:8]
    assert await get(w, "/v1/images/search?limit=100&page=999999&order=ASC") == []
    oldest = await get(w, "/v1/images/search?order=ASC&limit=3")
    newest = await get(w, "/v1/images/search?order=DESC&limit=3")
    assert oldest[0]["id"] != newest[0]["id"] and len({i["id"] for i in oldest + newest}) == 6
    response = await send(w, "GET", "/v1/images/search?order=SIDEWAYS")
    assert response.status_code == 400


def test_deep_pages_agree_with_a_full_merge() -> None:
    """Pages past the cached prefix start from a bisected upload time instead of merging
    every earlier image (a hostile page number must stay cheap)."""
    selection = search.select(None, None, frozenset({"png"}), False)
    everything = search.ordered(selection, False, 0, selection.total)
    assert len(everything) == selection.total > 5000
    for start, stop in ((2500, 2600), (selection.total - 7, selection.total + 50), (4001, 4002)):
        assert search.ordered(selection, False, start, stop) == everything[start:stop]
        newest = everything[::-1]
        assert search.ordered(selection, True, start, stop) == newest[start:stop]


async def test_random_order_is_deterministic_per_world_seed() -> None:
    url = "/v1/images/search?limit=20&order=RANDOM&mime_types=jpg,png"
    one = await get(world(seed=1), url)
    assert one == await get(world(seed=1), url)
    assert one == await get(world(seed=1), "/v1/images/search?mime_types=png,jpg&limit=20")
    assert one != await get(world(seed=2), url)
    assert await get(world(), "/v1/images/search") == await get(world(), "/v1/images/search")


async def test_image_by_id() -> None:
    w = world()
    image = next(i for i in IMAGES if i.breed)
    found = await get(w, f"/v1/images/{image.id}")
    assert found["id"] == image.id and found["breeds"][0]["id"] == image.breed
    response = await send(w, "GET", "/v1/images/zzzzzzzzzz")
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == "Couldn't find an image matching the passed 'id' of zzzzzzzzzz"


async def test_breeds_and_categories() -> None:
    w = world()
    breeds = await get(w, "/v1/breeds")
    assert len(breeds) == 67 and breeds[0]["id"] == "abys"
    assert set(breeds[0]) >= {"id", "name", "temperament", "origin", "description", "life_span"}
    assert set(breeds[0]["weight"]) == {"imperial", "metric"}
    page = await get(w, "/v1/breeds/?limit=5&page=2")
    assert page == breeds[10:15]
    maine = await get(w, "/v1/breeds/mcoo")
    assert maine["name"] == "Maine Coon" and maine["reference_image_id"]
    assert (await send(w, "GET", "/v1/breeds/xxxx")).status_code == 404
    rex = await get(w, "/v1/breeds/search?q=REX")
    assert {b["id"] for b in rex} == {"crex", "drex", "srex"}
    assert (await send(w, "GET", "/v1/breeds/search")).status_code == 400
    categories = await get(w, "/v1/categories")
    assert [c["id"] for c in categories] == [1, 2, 4, 5, 7, 14, 15]
    assert categories[3] == {"id": 5, "name": "boxes"}


async def test_favourites() -> None:
    w = world(STATE)
    listed = await get(w, "/v1/favourites")
    assert [f["id"] for f in listed] == [2301, 2302]
    assert listed[0]["image"] == {"id": FAV_IMAGE, "url": IMAGES[0].url}
    assert set(listed[0]) >= {"id", "user_id", "image_id", "sub_id", "created_at", "image"}
    assert [f["id"] for f in await get(w, "/v1/favourites?sub_id=maya")] == [2302]
    assert (await get(w, "/v1/favourites/2301"))["image_id"] == FAV_IMAGE

    added = await send(w, "POST", "/v1/favourites", _body({"image_id": IMAGES[5].id}))
    assert added.status_code == 200
    assert added.json() == {"message": "SUCCESS", "id": added.json()["id"]}
    assert (await get(w, f"/v1/favourites/{added.json()['id']}"))["image_id"] == IMAGES[5].id
    again = await send(w, "POST", "/v1/favourites", _body({"image_id": IMAGES[5].id}))
    assert again.status_code == 400 and again.text == DUPLICATE
    other_sub = _body({"image_id": IMAGES[5].id, "sub_id": "maya"})
    assert (await send(w, "POST", "/v1/favourites", other_sub)).status_code == 200
    unknown = await send(w, "POST", "/v1/favourites", _body({"image_id": "nope-nope"}))
    assert unknown.status_code == 400 and "nope-nope" in unknown.text
    missing = await send(w, "POST", "/v1/favourites", _body({"sub_id": "x"}))
    assert missing.status_code == 400 and missing.text == '"image_id" is required'

    deleted = await send(w, "DELETE", "/v1/favourites/2301")
    assert deleted.status_code == 200 and deleted.json() == {"message": "SUCCESS"}
    gone = await send(w, "DELETE", "/v1/favourites/2301")
    assert gone.status_code == 400 and gone.text == "INVALID_ACCOUNT"
    assert (await send(w, "GET", "/v1/favourites/2301")).status_code == 400
    assert len(await get(w, "/v1/favourites")) == 3


async def test_votes() -> None:
    w = world(STATE)
    [vote] = await get(w, "/v1/votes")
    assert vote["id"] == 5001 and vote["value"] == 0 and vote["image"]["id"] == IMAGES[2].id
    body = _body({"image_id": IMAGES[7].id, "value": 1, "sub_id": "kid"})
    added = await send(w, "POST", "/v1/votes", body)
    assert added.status_code == 201
    data = added.json()
    assert data["message"] == "SUCCESS" and data["image_id"] == IMAGES[7].id
    assert data["value"] == 1 and data["sub_id"] == "kid" and data["country_code"]
    assert (await get(w, f"/v1/votes/{data['id']}"))["value"] == 1
    assert [v["id"] for v in await get(w, "/v1/votes?sub_id=kid")] == [data["id"]]
    assert [v["id"] for v in await get(w, "/v1/votes?order=DESC")] == [data["id"], 5001]
    no_value = await send(w, "POST", "/v1/votes", _body({"image_id": IMAGES[7].id}))
    assert no_value.status_code == 400 and no_value.text == '"value" is required'
    bad = await send(w, "POST", "/v1/votes", _body({"image_id": IMAGES[7].id, "value": "up"}))
    assert bad.status_code == 400
    inf = await send(w, "POST", "/v1/votes", f'{{"image_id":"{IMAGES[7].id}", "value":"inf"}}')
    assert inf.status_code == 400
    form = await send(w, "POST", "/v1/votes", f"image_id={IMAGES[8].id}&value=1")
    assert form.status_code == 201 and form.json()["value"] == 1
    assert (await send(w, "DELETE", "/v1/votes/5001")).json() == {"message": "SUCCESS"}
    assert (await send(w, "DELETE", "/v1/votes/5001")).status_code == 400
    assert (await send(w, "GET", "/v1/votes/5001")).status_code == 400


@pytest.mark.parametrize("value", [-1, 0, 1, "-1", -1.0])
async def test_vote_values_the_real_service_takes(value: object) -> None:
    """-1 is a down-vote (the original test set's 15 down-votes send it), 1 an up-vote, and 0
    (older documentation's down value) is kept as sent; each is stored as that integer."""
    w = world()
    sent = await send(w, "POST", "/v1/votes", _body({"image_id": IMAGES[3].id, "value": value}))
    assert sent.status_code == 201, sent.text
    assert sent.json()["value"] == int(float(str(value)))
    [stored] = SERVICE.snapshot(w)["votes"]
    assert stored["value"] == int(float(str(value))) and stored["image_id"] == IMAGES[3].id


@pytest.mark.parametrize("value", [2, -2, 100, 0.5, True])
async def test_other_vote_values_are_400s_and_store_nothing(value: object) -> None:
    w = world()
    sent = await send(w, "POST", "/v1/votes", _body({"image_id": IMAGES[3].id, "value": value}))
    assert sent.status_code == 400
    assert sent.text in ('"value" must be one of [-1, 0, 1]', '"value" must be an integer')
    assert SERVICE.snapshot(w)["votes"] == []


async def test_string_ids_from_original_data() -> None:
    w = world({"favourites": [{"id": "tu", "image_id": "tu"}], "images": ["tu"]})
    assert (await get(w, "/v1/images/tu"))["id"] == "tu"
    assert (await get(w, "/v1/favourites/tu"))["image"]["id"] == "tu"
    assert (await send(w, "DELETE", "/v1/favourites/tu")).status_code == 200


async def test_worlds_are_isolated() -> None:
    fields = {"state": STATE}
    one, two = SERVICE.new_state(fields), SERVICE.new_state(fields)
    assert (await send(one, "DELETE", "/v1/favourites/2301")).status_code == 200
    assert len(await get(one, "/v1/favourites")) == 1
    assert len(await get(two, "/v1/favourites")) == 2
    assert len(STATE["favourites"]) == 2 and SERVICE.snapshot(two) != SERVICE.snapshot(one)


async def test_snapshot_tells_images_apart() -> None:
    snaps = []
    for image in (IMAGES[10].id, IMAGES[11].id, IMAGES[10].id):
        w = world(STATE)
        await send(w, "POST", "/v1/favourites", _body({"image_id": image}))
        snaps.append(SERVICE.snapshot(w))
    assert snaps[0] == snaps[2] != snaps[1]
    assert [f["id"] for f in snaps[0]["favourites"]] == sorted(
        f["id"] for f in snaps[0]["favourites"]
    )


async def test_serve_app_and_trailing_slash() -> None:
    transport = httpx.ASGITransport(app=serve_app())
    async with httpx.AsyncClient(transport=transport, base_url="https://api.thecatapi.com") as c:
        assert (await c.get("/v1/favourites/")).json() == []
        assert (await c.post("/v1/favourites", content=_body({"image_id": FAV_IMAGE}))).is_success
        assert len((await c.get("/v1/favourites")).json()) == 1
