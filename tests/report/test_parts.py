"""The report's parts on their own: diffs (hypothesis: a text diff holds both texts), audits,
image embedding (only files inside the run folder, of a raster type, bounded), the packed
explorer payload and the page's safety properties without a browser."""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import re
import zlib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.report.runs import make_run, record
from toolbench.report import audits, diff, explorer, html
from toolbench.report.summary import LoadedRun


def tiny_png(width: int = 4, height: int = 3) -> bytes:
    """A valid RGB PNG written by hand (zlib + CRCs), so no imaging library is needed."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (len(body).to_bytes(4, "big") + kind + body
                + zlib.crc32(kind + body).to_bytes(4, "big"))  # fmt: skip

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    rows = b"".join(b"\x00" + b"\xd0\x30\x30" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))  # fmt: skip


def test_state_diff_names_each_kind_and_puts_differences_first() -> None:
    rows = diff.state_diff({"a": 1, "b": 2, "x": [1]}, {"a": 1, "b": 3, "g": "v"})
    kinds = {r["key"]: r["kind"] for r in rows}
    assert kinds == {"a": "same", "b": "changed", "x": "extra", "g": "missing"}
    assert rows[-1]["key"] == "a"
    assert diff.summary_line(rows) == "1 changed, 1 missing, 1 extra of 4 keys"


def test_state_diff_bounds_huge_and_nested_values() -> None:
    deep: object = "x"
    for _ in range(40):
        deep = [deep]
    rows = diff.state_diff({"k": "y" * 100_000, "d": deep}, {"k": "z"})
    assert all(len(r["predicted"]) <= diff.MAX_VALUE_CHARS for r in rows)


lines = st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
                 .map(lambda s: "".join(s.splitlines())), max_size=12)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(lines, lines)
def test_text_diff_holds_both_texts(gold: list[str], predicted: list[str]) -> None:
    out = diff.text_diff("\n".join(predicted), "\n".join(gold))
    assert [line for tag, line in out if tag in "=-"] == "\n".join(gold).splitlines()
    assert [line for tag, line in out if tag in "=+"] == "\n".join(predicted).splitlines()


def test_text_diff_of_a_huge_prediction_is_bounded() -> None:
    out = diff.text_diff("\n".join(["a" * 5000] * 5000), "gold")
    assert len(out) <= diff.MAX_LINES + 1
    assert all(len(line) <= diff.MAX_LINE_CHARS + 1 for _, line in out)


def test_audits_failed_by_all_flaky_and_crash_reasons(tmp_path: Path) -> None:
    def run(name: str, successes: dict[str, list[bool]]) -> LoadedRun:
        records = [
            record("t", i, ok, epoch=e) if ok or i != "3" else
            record("t", i, False, epoch=e, status="model_error",
                   message=f"error: NameError: name 'v{e}' is not defined at line {e + 7}")
            for i, outcomes in successes.items() for e, ok in enumerate(outcomes)
        ]  # fmt: skip
        return LoadedRun(make_run(tmp_path / name, records))

    a = run("a", {"1": [False, False], "2": [True, False], "3": [False, False]})
    b = run("b", {"1": [False, False], "2": [True, True], "3": [True, True]})
    failed = audits.failed_by_all([a, b])
    assert [(f.task, f.id, f.runs) for f in failed] == [("t", "1", 2)]
    flaky = audits.flaky([a, b])
    assert [(f.run, f.id, f.success_rate) for f in flaky] == [("a", "2", 0.5)]
    crashes = audits.crash_reasons([a, b])
    assert len(crashes) == 1 and crashes[0].count == 2  # two messages, one masked reason
    assert crashes[0].reason == "error: NameError: name '…' is not defined at line N"


def test_images_are_embedded_only_from_inside_the_run_folder(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "a.png").write_bytes(tiny_png())
    (folder / "images" / "fake.png").write_text("<svg onload=alert(1)>")
    (tmp_path / "secret.png").write_bytes(tiny_png())
    (folder / "images" / "link.png").symlink_to(tmp_path / "secret.png")
    uri, problem = explorer.embed_image(folder, "images/a.png")
    assert uri and uri.startswith("data:image/png;base64,") and not problem
    for bad, why in (
        ("../secret.png", "outside"),
        ("/etc/passwd", "outside"),
        ("images/link.png", "outside"),
        ("images/fake.png", "not a PNG"),
        ("images/none.png", "No such file"),
        (["not", "a", "path"], "not a relative path"),
    ):
        uri, problem = explorer.embed_image(folder, bad)
        assert uri is None and why in problem, (bad, problem)


def _payload(page: str) -> dict:
    packed = re.search(r'id="payload">([^<]*)</script>', page)
    assert packed is not None
    assert re.fullmatch(r"[A-Za-z0-9+/=]*", packed.group(1))  # nothing a parser could see
    return json.loads(gzip.decompress(base64.b64decode(packed.group(1))))


HOSTILE = (
    '</script><script>alert(1)</script><img src=x onerror="alert(2)">'
    '<a href="javascript:alert(3)">x</a>'
)


def test_page_escapes_hostile_text_and_allows_only_its_own_script(tmp_path: Path) -> None:
    records = [
        record("t<b>", "0", False, status="model_error", message=HOSTILE, prediction=HOSTILE),
        record("t<b>", "1", True, prediction="ok", images={"before": "images/a.png"}),
    ]
    folder = make_run(tmp_path / "run", records, model=HOSTILE)
    (folder / "images").mkdir()
    (folder / "images" / "a.png").write_bytes(tiny_png())
    page = html.render([LoadedRun(folder)], None)
    for raw in ("<script>alert", "<img src=x", 'href="javascript:', "<b>"):
        assert raw not in page, raw
    assert "&lt;img src=x onerror=" in page  # the crash reason, shown as text in the audits
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert len(scripts) == 1  # the explorer; the payload is a non-executable data block
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    csp = re.search(r'Content-Security-Policy" content="([^"]*)"', page)
    assert csp and f"script-src 'sha256-{digest}'" in csp.group(1)
    assert "default-src 'none'" in csp.group(1) and "img-src data:" in csp.group(1)
    data = _payload(page)
    by_id = {r["i"]: r for r in data["records"]}
    assert by_id["0"]["pred"] == HOSTILE and by_id["0"]["msg"] == HOSTILE
    assert by_id["1"]["img"]["before"].startswith("data:image/png;base64,")
    assert "task 't<b>' is not registered" in by_id["0"]["note"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**62), 2**62) | st.floats(allow_nan=False)
    | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip
hostile_records = st.fixed_dictionaries(
    {
        # Tasks with no data here: loading real data per example is the CLI tests' job.
        "task": st.sampled_from(["nope", "<b>x</b>"]),
        "id": st.one_of(st.text(max_size=12), st.integers(0, 10**6)),
        "epoch": st.integers(0, 3),
        "status": st.sampled_from(["scored", "model_error", "infra_error"]),
        "success": st.sampled_from([True, False, None]),
        "metrics": st.dictionaries(st.text(max_size=10), st.none() | st.floats(-1e9, 1e9)),
        "message": st.text(max_size=60),
        "details": st.dictionaries(st.sampled_from(["state", "closest_label", "images", "x"]),
                                   json_values, max_size=3),
        "prediction": json_values,
        "calls": json_values,
        "trace": json_values,
        "images": json_values,
    }
)  # fmt: skip


@settings(max_examples=20, deadline=None)
@given(st.lists(hostile_records, min_size=1, max_size=4))
def test_any_record_shape_reaches_the_explorer_and_show(records: list[dict]) -> None:
    """Whatever a record's unchecked fields hold (any JSON where a list, text or mapping is
    expected), the explorer data and ``show`` handle it: no exception, bounded output."""
    import tempfile

    from rich.console import Console

    from toolbench.cli.show import _print_record
    from toolbench.report import golds

    with tempfile.TemporaryDirectory() as folder:
        run = LoadedRun(make_run(Path(folder) / "run", records))
        data = explorer.explorer_data([run], None)
        explorer.pack(data)
        console = Console(file=io.StringIO(), width=100)
        for r in run.records:
            _print_record(r, golds.TaskSource(r["task"], problem="no data"), console, True)
    assert len(data["records"]) == len(records)
