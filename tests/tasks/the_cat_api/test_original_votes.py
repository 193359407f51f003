"""The original test set's votes: up-votes send ``"value":1`` and down-votes ``"value":-1``.

The simulator once refused -1 (HTTP 400), so a folder holding the original test set stopped at
its first down-vote and could not be run at all. Here a folder in the original layout (records,
docs and demonstrations written for this test, in the original's shape) runs through the real
CLI: the oracle scores 1.000, and the same requests with the vote direction swapped 0.000.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult, read_run

V1 = "https://api.thecatapi.com/v1"


def _vote(image_id: str, value: int) -> str:
    return f'curl -X POST \'{V1}/votes\' --data \'{{"image_id":"{image_id}", "value":{value}}}\''


# (query, image id, value, compare_string_only): down-votes phrased as the original phrases
# them (an imperative "down-vote the image with id X", "image X deserves a negative vote"),
# in our own words, beside up-votes.
VOTES: list[tuple[str, str, int, bool]] = [
    ("Cast a down-vote on the image with id q4t.", "q4t", -1, False),
    ("Picture 7hb deserves a negative vote.", "7hb", -1, False),
    ("Vote down the cat image whose id is mk2.", "mk2", -1, False),
    ("I dislike image e0w; give it a thumbs down.", "e0w", -1, True),
    ("Put an up-vote on the image with id 3zc.", "3zc", 1, False),
    ("The picture r5a deserves a positive vote.", "r5a", 1, False),
]
DOCS = {
    "vote_up": "# Vote up the image with id {image_id}\n" + _vote("{image_id}", 1),
    "vote_down": "# Vote down the image with id {image_id}\n" + _vote("{image_id}", -1),
    "get_favorite_cat_images": f"# List my favourite cat images.\ncurl -X GET '{V1}/favourites'",
}
DEMOS = [
    ("Thumbs up for picture kk1, please.", _vote("kk1", 1)),
    ("Image w2p has earned a thumbs down.", _vote("w2p", -1)),
]


def _original_folder(root: Path) -> Path:
    """``root/the_cat_api/v0`` as the original lays it out: test.jsonl, functions/, examples/."""
    folder = root / "the_cat_api" / "v0"
    (folder / "functions").mkdir(parents=True)
    (folder / "examples").mkdir()
    lines = [
        json.dumps({"prompt": q, "completion": [_vote(image, value)], "compare_string_only": s})
        for q, image, value, s in VOTES
    ]
    (folder / "test.jsonl").write_text("\n".join(lines) + "\n")
    for name, text in DOCS.items():
        (folder / "functions" / name).write_text(text + "\n")
    for index, (query, line) in enumerate(DEMOS):
        (folder / "examples" / f"{index}.txt").write_text(f"Task: {query}\nAction:\n{line}\n")
    return root


def _swapped(prediction: str) -> str:
    """The same request voting the other way."""
    if '"value":-1' in prediction:
        return prediction.replace('"value":-1', '"value":1')
    assert '"value":1' in prediction, prediction
    return prediction.replace('"value":1', '"value":-1')


def test_down_votes_of_the_original_set_load_and_the_judge_tells_directions_apart(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    root = _original_folder(tmp_path / "original")
    oracle = tmp_path / "oracle"
    code, _, err = cli(
        "run", "the_cat_api", "--model", "oracle", "--data-dir", str(root), "--out", str(oracle)
    )  # fmt: skip
    assert code == 0, err
    info, records = read_run(oracle)
    assert len(records) == len(VOTES) and all(r["success"] for r in records), records
    assert info["metrics"]["the_cat_api"]["success_rate"] == 1.0
    assert info["counts"]["the_cat_api"]["model_error"] == 0

    replay = tmp_path / "swapped.jsonl"
    replay.write_text(
        "".join(
            json.dumps({"task": r["task"], "id": r["id"], "prediction": _swapped(r["prediction"])})
            + "\n"
            for r in records
        )
    )
    swapped = tmp_path / "swapped"
    code, _, err = cli(
        "run", "the_cat_api", "--model", f"replay:{replay}", "--data-dir", str(root),
        "--out", str(swapped),
    )  # fmt: skip
    assert code == 0, err
    info, records = read_run(swapped)
    assert len(records) == len(VOTES) and not any(r["success"] for r in records), records
    assert info["metrics"]["the_cat_api"]["success_rate"] == 0.0
    # Judged by the world, not the text: a swapped vote is a scored failure, not a crash,
    # except on the compare_string_only line, where (as in the original) a mismatch is one.
    statuses = [r["status"] for r in records]
    assert statuses.count("scored") == sum(not s for *_, s in VOTES), statuses
