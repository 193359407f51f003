"""The line/template code cache must behave exactly like compiling the whole program.

These tests run benign programs in-process (they test compilation, not containment).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbench.sandbox import policy
from toolbench.sandbox.codecache import CodeCache, compile_program


def _run(codes: tuple[Any, ...] | None, error: str | None) -> tuple[Any, ...]:
    if codes is None:
        return ("rejected", error)
    output = policy.OutputBuffer(10_000)
    scope = policy.make_globals({}, frozenset(), output)
    try:
        for code in codes:
            exec(code, scope)
    except Exception as exc:
        return ("error", policy.describe_exception(exc), output.text())
    plain = {
        key: value if type(value) in (int, float, str, bool, list, dict) else type(value).__name__
        for key, value in scope.items()
        if not key.startswith("_")
    }
    return ("ok", repr(plain), output.text())


def _whole(source: str) -> tuple[Any, ...]:
    code, error = compile_program(source)
    return _run((code,) if code is not None else None, error)


PROGRAMS = [
    'a = "x"\nb = \'y\'\nc = 3\nd = 2.5\ne = 0\nf = ""',
    "a = 2 * 3\nb = 'ab' * 2\nc = -5\nd = not 'x'\ne = 'a' 'b'",  # folding: no template
    "a = [1, 2, 3, 4]\nb = (5, 6, 7)\nc = 3 in {1, 2, 3}\nd = {'k': [8, 9, 10]}",  # nested consts
    "x = 'say \"hi\"'\ny = \"it's\"\nz = 'A#1'  # a comment with 'quotes' and 5 numbers",
    "x = 'São Paulo'\ny = '\t tab'\nz = 1.25\nw = 3.0",
    "x = 1 + \\\n 2",  # backslash: whole-program compile
    "x = [\n 1,\n 2,\n]\ny = 'two lines'",  # multi-line statement
    "def f(n):\n    return n * 2\nx = f(21)",
    "global g\ng = 1",
    "x = 1\ny = 007",  # syntax error on line 2
    "x = 1\ny = x._z",  # restricted on line 2
    "for i in range(3): print(i, 'ok')",
    "x = 1; y = 'two'; z = x + 2",
    "x = f'{1 + 2}!'\ny = f'{\"a\"}' 'b'",
    "x = 5\nx += 10\nprint(printed)",
    "x = 10 ** 3\ny = 1e3\nz = 0x10\nw = 1_000\nv = .5\nu = 5.",
    "if 0: x = 'dead'\ny = 'alive'",
    "if '': x = 'dead'\nif 0.0: y = 'dead'\nif 2: z = 'alive'\nwhile 0: w = 1",
    "x = 0 or 'y'\ny = '' and 1\nz = 5 if '' else 6\nw = [i for i in range(3) if 0.0]",
    "assert 0, 'zero'",
    "assert 1, 'one'\nx = 1",
    "x = 123456789012345678901234567890\ny = 0.1234567890123456789",
    "x = 1\n\n   \n# only a comment\ny = 2\r\nz = 3\rw = 4",
    "    x = 1",  # unexpected indent
    "x = 'a'\n  y = 'b'",
]


@pytest.mark.parametrize("source", PROGRAMS)
def test_cache_matches_whole_program_compile(source: str) -> None:
    cache = CodeCache()
    first = _run(*cache.get(source))
    assert first == _whole(source)
    assert _run(*cache.get(source)) == first  # exact-cache hit


def test_lines_of_one_shape_share_a_template() -> None:
    cache = CodeCache()
    states = [
        _run(*cache.get(f"API = 1\nx = 'City {i}'\ny = {i}\nz = {i}.5\nw = ['a', '{i}', 'c']"))
        for i in range(1, 21)
    ]
    assert len(cache.templates) == 5  # one per line shape, not per program
    for i, state in enumerate(states, start=1):
        expected = {"API": 1, "x": f"City {i}", "y": i, "z": i + 0.5, "w": ["a", str(i), "c"]}
        assert state[0] == "ok"
        assert state[1] == repr(expected)


def test_errors_carry_the_whole_program_line_number() -> None:
    codes, error = CodeCache().get("a = 1\nb = 2\nc = a._x")
    assert codes is None
    assert error is not None and error.startswith("SyntaxError: line 3:")


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(max_size=12),
    number=st.integers(min_value=0, max_value=10**15),
    real=st.floats(min_value=0, max_value=1e6, allow_nan=False),
)
def test_any_literal_values_round_trip(text: str, number: int, real: float) -> None:
    source = f"a = {text!r}\nb = {number}\nc = {real!r}\nd = [{text!r}, {number}, 'z']"
    cache = CodeCache()
    cache.get("a = 'warm'\nb = 1\nc = 1.5\nd = ['w', 2, 'z']")  # the shapes are now known
    assert _run(*cache.get(source)) == _whole(source)


def test_hostile_programs_compile_the_same_either_way() -> None:
    """Compile only (never run in-process): line mode accepts and rejects exactly as whole."""
    from tests.sandbox.hostile_programs import HOSTILE_PROGRAMS

    cache = CodeCache()
    for name, source in HOSTILE_PROGRAMS:
        codes, error = cache.get(source)
        code, whole_error = compile_program(source)
        assert (codes is None) == (code is None), name
        assert error == whole_error, name


def _values(codes: Any) -> dict[str, Any]:
    scope = policy.make_globals({}, frozenset(), policy.OutputBuffer(10_000), frozenset())
    for code in codes:
        exec(code, scope)
    return {k: v for k, v in scope.items() if k in ("a", "b", "total")}


def test_precompiled_code_installs_without_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a template precompiles for an answer, a program process installs and runs without
    compiling anything itself, with the same results."""
    template = CodeCache()
    sources = ["a = 2\nb = a * 3", "total = 0\nfor i in range(4):\n    total += i"]
    blob = template.precompile([*sources, sources[0]])  # duplicates sent once
    assert blob
    process = CodeCache()

    def refuse(source: str) -> Any:
        raise AssertionError(f"compiled in the program process: {source!r}")

    monkeypatch.setattr("toolbench.sandbox.codecache.compile_program", refuse)
    process.install(blob)
    for source in sources:
        codes, error = process.get(source)
        assert error is None
        assert _values(codes) == _values(template.get(source)[0])
    assert _values(process.get(sources[1])[0]) == {"total": 6}


def test_precompile_sends_only_what_the_process_lacks_and_can_use() -> None:
    template = CodeCache(max_source=100)
    assert template.precompile(["a = 1"])
    assert template.precompile(["a = 1"]) == b""  # cached before: a process forked since has it
    assert template.precompile(["b = ().__class__", "a = (", "a = 1 #" + "x" * 200]) == b""
    assert template.get("b = ().__class__")[1] is not None  # refused: left to the process


def test_precompiled_blob_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolbench.sandbox.codecache.MAX_PRECOMPILED_BYTES", 64)
    template = CodeCache()
    assert template.precompile(["total = 0\nfor i in range(4):\n    total += i"]) == b""
    assert template.get("total = 0\nfor i in range(4):\n    total += i")[0] is not None
