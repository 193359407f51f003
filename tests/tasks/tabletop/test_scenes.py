"""Layouts follow the original's rules, the generator is a pure function that reproduces v0
byte for byte, every record is well posed, and bad data folders fail with file:line."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolbench.data.layout import write_task_folder
from toolbench.errors import UserError
from toolbench.tasks.tabletop import generator
from toolbench.tasks.tabletop.checks import holds
from toolbench.tasks.tabletop.scenes import EDGE_POINTS, layouts, read_records
from toolbench.tasks.tabletop.templates import DIRECTION_XY, NTH, TEMPLATES
from toolbench.tasks.tabletop.world import Table

DATA = Path(generator.__file__).parent / "data" / "v0" / "test.jsonl"


def test_layouts_follow_the_original_rules() -> None:
    table = layouts()
    assert len(table) == 20 and sum(len(v) for v in table.values()) == 400
    for (n_blocks, n_bowls), options in table.items():
        assert 1 <= n_blocks <= 4 and 0 <= n_bowls <= 4 and len(options) == 20
        for layout in options:
            assert len(layout["block_pos"]) == n_blocks and len(layout["bowl_pos"]) == n_bowls
            points = [tuple(float(v) for v in p) for p in layout["block_pos"] + layout["bowl_pos"]]
            assert all(isinstance(v, str) for p in layout["block_pos"] for v in p)
            for x, y, _ in points:
                assert -0.2 <= x <= 0.2 and -0.7 <= y <= -0.3
            for a, b in itertools.combinations(points, 2):
                assert math.dist(a[:2], b[:2]) >= 0.15
            if n_blocks + n_bowls <= 7:
                assert all(math.dist(p, e) >= 0.15 for p in points for e in EDGE_POINTS)


def test_generator_reproduces_v0_byte_for_byte(tmp_path: Path) -> None:
    records = generator.generate("test", generator.DEFAULT_TEST_SIZE, generator.DEFAULT_SEED)
    write_task_folder(tmp_path, records)
    assert (tmp_path / "test.jsonl").read_bytes() == DATA.read_bytes()
    assert generator.generate("test", 30, 1) == generator.generate("test", 30, 1)
    assert generator.generate("test", 30, 1) != generator.generate("test", 30, 2)
    assert generator.generate("train", 30, 0) != records[:30]
    with pytest.raises(ValueError):
        generator.generate("dev", 1, 0)


def test_v0_covers_every_template_and_is_well_posed() -> None:
    records = read_records(DATA)
    counts = Counter(r["tester_id"] for r in records)
    assert len(records) >= 300 and set(counts) == set(TEMPLATES)
    assert min(counts.values()) >= 20
    for record in records:
        tid, cfg = record["tester_id"], record["configs"]
        template = TEMPLATES[tid]
        assert template.blocks[0] <= len(cfg["block_list"]) <= template.blocks[1]
        assert template.bowls[0] <= len(cfg["bowl_list"]) <= template.bowls[1]
        assert cfg["instruction"] == template.text.format(**cfg["instruction_vars_dict"])
        initial = Table(cfg).snapshot()
        assert not holds(tid, cfg, initial, strict=True)  # an empty program never passes
        _check_targets(tid, cfg, Table(cfg))


def _check_targets(tid: str, cfg: dict[str, Any], table: Table) -> None:
    """The stored targets are what the instruction means on the initial table."""
    v = cfg["instruction_vars_dict"]
    blocks = cfg["block_list"]
    if tid == "SI_6":
        bowl = table.pos[v["bowl"]]
        pick = min if v["distance"] == "closest" else max
        assert v["target_block"] == pick(blocks, key=lambda b: math.dist(table.pos[b], bowl))
    if tid == "SI_7":
        dx, dy = DIRECTION_XY[v["direction"]]
        order = sorted(blocks, key=lambda b: -(table.pos[b][0] * dx + table.pos[b][1] * dy))
        assert v["target_block"] == order[NTH.index(v["nth"])]
    if tid == "SI_5":
        dx, dy = DIRECTION_XY[v["direction"]]
        bowl = table.pos[v["bowl"]]
        side = {
            b: (table.pos[b][0] - bowl[0]) * dx + (table.pos[b][1] - bowl[1]) * dy for b in blocks
        }
        expected = [b for b in blocks if side[b] > 0]
        assert v["target_blocks"] == expected and expected
        for b in blocks:
            assert v[f"{b}_initial_pos"][:2] == pytest.approx(table.pos[b][:2].tolist())


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


GOOD = DATA.read_text(encoding="utf-8").splitlines()[0]


def test_original_shape_lines_load_as_json_or_python_literals(tmp_path: Path) -> None:
    record = json.loads(GOOD)
    record["configs"]["position_dict"]["block_pos"] = [
        [float(v) for v in p] for p in record["configs"]["position_dict"]["block_pos"]
    ]
    python_literal = repr(record)  # single quotes: the original's tests read lines with eval
    loaded = read_records(_write(tmp_path, [GOOD, "", python_literal]))
    assert len(loaded) == 2 and loaded[1] == record


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.update(tester_id="SI_9"), "tester_id"),
        (lambda r: r["configs"].pop("block_list"), "block_list"),
        (lambda r: r["configs"]["instruction_vars_dict"].clear(), "lacks"),
        (lambda r: r["configs"]["position_dict"]["block_pos"].pop(), "names but"),
        (lambda r: r["configs"]["position_dict"]["block_pos"][0].__setitem__(0, "x"), "number"),
        (lambda r: r["configs"]["instruction_vars_dict"].update(block="purple block"), "scene"),
        (lambda r: r.pop("configs_id"), "configs_id"),
        (lambda r: r["configs"]["position_dict"]["bowl_pos"][0].__setitem__(1, 10**400), "number"),
        (lambda r: r["configs"]["position_dict"]["bowl_pos"][0].__setitem__(1, "1e999"), "finite"),
        (lambda r: r["configs"]["position_dict"].pop("bowl_pos"), "position_dict"),
        (lambda r: r["configs"]["instruction_vars_dict"].update(direction="up"), "direction"),
    ],
)
def test_bad_records_name_the_file_and_line(tmp_path: Path, mutate: Any, message: str) -> None:
    record = json.loads(GOOD)
    mutate(record)
    path = _write(tmp_path, [GOOD, json.dumps(record)])
    with pytest.raises(UserError, match=rf"test\.jsonl:2: .*{message}") as info:
        read_records(path)
    assert "\n" not in str(info.value)


def test_unreadable_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot read"):
        read_records(tmp_path / "missing.jsonl")
    with pytest.raises(UserError, match="no records"):
        read_records(_write(tmp_path, [""]))
    bad = tmp_path / "bin.jsonl"
    bad.write_bytes(b"\xff\xfe{}\n")
    with pytest.raises(UserError, match=r"bin\.jsonl:1: not UTF-8"):
        read_records(bad)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.one_of(st.text(max_size=400), st.just("[" * 5000), st.just("{'a': " * 400)))
def test_garbage_lines_are_user_errors(tmp_path: Path, line: str) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(
        line.replace("\n", " ").replace("\r", " ") + "\n", encoding="utf-8", errors="surrogatepass"
    )
    try:
        read_records(path)
    except UserError as exc:
        assert "g.jsonl" in str(exc)


def test_a_huge_line_is_refused_without_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_text(GOOD + "\n" + "[" * 2_000_000 + "\n", encoding="utf-8")
    with pytest.raises(UserError, match=r"huge\.jsonl:2: line longer"):
        read_records(path)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


RECORD_PATHS = _paths(json.loads(GOOD))[1:]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(RECORD_PATHS), _JSON)
def test_any_value_anywhere_in_a_record_loads_or_is_a_user_error(
    tmp_path: Path, path: tuple[Any, ...], value: Any
) -> None:
    record = json.loads(GOOD)
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    file = tmp_path / "m.jsonl"
    file.write_text(json.dumps(record) + "\n", encoding="utf-8")
    try:
        loaded = read_records(file)
    except UserError as exc:
        assert str(exc).startswith(f"{file}:1: ") and "\n" not in str(exc)
    else:
        Table(loaded[0]["configs"])  # what loads, builds a table
