"""Table pictures are deterministic PNGs: the same snapshot gives the same bytes (in this
process and in a fresh one), no time or software stamps, and hostile titles are only text."""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

from toolbench.tasks.tabletop import images
from toolbench.tasks.tabletop.images import render_png
from toolbench.tasks.tabletop.scenes import read_records
from toolbench.tasks.tabletop.world import Table

DATA = Path(__file__).parents[3] / "src/toolbench/tasks/tabletop/data/v0/test.jsonl"
RECORD = read_records(DATA)[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _chunks(png: bytes) -> list[bytes]:
    """The chunk types of a PNG, checking each chunk's CRC on the way."""
    assert png.startswith(PNG_MAGIC)
    at, kinds = len(PNG_MAGIC), []
    while at < len(png):
        length = int.from_bytes(png[at : at + 4], "big")
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        crc = int.from_bytes(png[at + 8 + length : at + 12 + length], "big")
        assert zlib.crc32(kind + data) == crc
        kinds.append(kind)
        at += 12 + length
    return kinds


def _final() -> dict:
    table = Table(RECORD["configs"])
    blocks = [n for n, k in table.kinds.items() if k == "block"]
    for name in blocks[1:]:
        table.put_first_on_second(name, blocks[0])
    return table.snapshot()


def test_same_snapshot_same_bytes_and_no_stamps() -> None:
    final = _final()
    first = render_png(final, RECORD["configs"]["instruction"])
    assert first == render_png(final, RECORD["configs"]["instruction"])
    assert set(_chunks(first)) <= {b"IHDR", b"pHYs", b"IDAT", b"IEND", b"tEXt", b"iTXt"}
    assert b"tIME" not in first and b"Software" not in first and b"matplotlib" not in first
    assert RECORD["configs"]["instruction"].encode() in first  # the title, as PNG text
    initial = render_png(Table(RECORD["configs"]).snapshot(), RECORD["configs"]["instruction"])
    assert initial != first


def test_bytes_are_identical_in_a_fresh_process(tmp_path: Path) -> None:
    final = _final()
    out = tmp_path / "fresh.png"
    script = (
        "import json, sys; from toolbench.tasks.tabletop.images import render_png;"
        "open(sys.argv[2], 'wb').write(render_png(json.loads(sys.argv[1]), 'x'))"
    )
    subprocess.run([sys.executable, "-c", script, json.dumps(final), str(out)], check=True)
    assert out.read_bytes() == render_png(final, "x")


def test_hostile_titles_and_states_render() -> None:
    snap = _final()
    snap["objects"].append({"name": "$\\frac{1}{0}$ \u202e\U0001f600 block", "kind": "block",
                            "pos": [0.0, -0.5, 0.02]})  # fmt: skip
    for title in ("$x^{$", "\\" * 500, "line\nbreak " * 200, "\U0001f600" * 300, "",
                  "nul\x00 and \ud800 lone surrogate", "é" * 10**6):  # fmt: skip
        assert render_png(snap, title).startswith(PNG_MAGIC)


def test_pillow_reads_the_picture_and_its_title() -> None:
    """Our PNG writer against an independent decoder: size, mode, the pixels Agg drew (the
    tower's staircase differs from the scene) and the title in both text chunk kinds."""
    import io

    import numpy as np
    from PIL import Image

    final, initial = _final(), Table(RECORD["configs"]).snapshot()
    for title, kind in (("plain title", b"tEXt"), ("caf\u00e9", b"tEXt"), ("\u2603 snow", b"iTXt")):
        png = render_png(final, title)
        assert kind in _chunks(png)
        image = Image.open(io.BytesIO(png))
        assert image.size == (images.WIDTH, images.HEIGHT) and image.mode == "RGB"
        assert image.text["Title"] == title
    before = np.asarray(Image.open(io.BytesIO(render_png(initial))))
    after = np.asarray(Image.open(io.BytesIO(render_png(final))))
    assert before.shape == after.shape and (before != after).any()
    corner = before[: images.MARGIN, : images.MARGIN]
    assert (corner == 255).all()  # the white margin around the table
