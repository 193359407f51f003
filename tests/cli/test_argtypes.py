"""The flag value types: every valid value is read back as itself (hypothesis draws only valid
values); the refusals are the option sweep's job (test_option_sweep.py) plus the few cases
the issue named, written out here."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import CliResult
from toolbench.cli import argtypes
from toolbench.errors import UserError


@given(st.integers(min_value=0, max_value=argtypes.SEED_MAX))
def test_every_seed_in_range_is_read_as_itself(value: int) -> None:
    assert argtypes.seed(str(value)) == value


@given(st.integers(min_value=0, max_value=65535))
def test_every_port_is_read_as_itself(value: int) -> None:
    assert argtypes.port(str(value)) == value


@given(st.floats(min_value=1e-9, max_value=1e9, allow_nan=False, allow_infinity=False))
def test_every_positive_number_of_seconds_is_read_as_itself(value: float) -> None:
    assert argtypes.seconds(repr(value)) == value


@given(st.floats(min_value=0.0, max_value=2.0))
def test_every_temperature_is_read_as_itself(value: float) -> None:
    assert argtypes.temperature(repr(value)) == value


@given(
    st.from_regex(
        r"https?://[a-z][a-z0-9.-]{0,20}(:[1-9][0-9]{0,3})?(/[a-z0-9]{0,8})?", fullmatch=True
    )
)
def test_http_urls_with_a_host_are_accepted(value: str) -> None:
    assert argtypes.url(value) == value


@given(st.text(min_size=1).filter(lambda t: t.strip() != ""))
def test_any_non_blank_text_is_accepted(value: str) -> None:
    assert argtypes.text(value) == value


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        (argtypes.seconds, "0"),  # --timeout 0 used to mean "no timeout"
        (argtypes.seconds, "-2"),
        (argtypes.seconds, "nan"),
        (argtypes.seconds, "inf"),
        (argtypes.temperature, "nan"),
        (argtypes.seed, "-1"),
        (argtypes.port, "65536"),
        (argtypes.positive_int, "0"),
        (argtypes.non_negative_int, "1.0"),
    ],
)
def test_the_named_refusals(kind: object, value: str) -> None:
    assert callable(kind)
    with pytest.raises(argparse.ArgumentTypeError):
        kind(value)


def test_paths_to_write(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    new_folder, new_file = argtypes.PathArg("new_folder"), argtypes.PathArg("new_file")
    assert new_folder(str(tmp_path / "a" / "b")) == tmp_path / "a" / "b"
    assert not (tmp_path / "a").exists(), "checking a path must not create it"
    assert new_file(str(afile)) == afile and afile.read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["afile"], "no probe file is left"
    for kind, value, why in [
        (new_folder, str(afile), "is a file"),
        (new_folder, f"{afile}/x/y", "is a file"),
        (new_file, str(tmp_path), "is a folder"),
        (new_folder, "/proc/1", "cannot write there"),
        (new_file, "", "empty path"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=why):
            kind(value)


def test_paths_to_read(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert argtypes.PathArg("file")(str(afile)) == afile
    assert argtypes.PathArg("folder")(str(tmp_path)) == tmp_path
    for kind, value, why in [
        ("file", str(tmp_path), "is a folder"),
        ("folder", str(afile), "is not a folder"),
        ("path", str(tmp_path / "nope"), "no such file or folder"),
        ("file", f"{afile}/x", r"no such file \(.*afile is a file\)"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=why):
            argtypes.PathArg(kind)(value)  # type: ignore[arg-type]


def test_the_cache_folder_is_created_or_refused_in_one_line(tmp_path: Path) -> None:
    made = argtypes.writable_folder(tmp_path / "c" / "d", "--cache-dir")
    assert made.is_dir() and not list(made.iterdir())
    (tmp_path / "f").write_text("")
    for path in (tmp_path / "f", tmp_path / "f" / "below", Path("/proc/1")):
        with pytest.raises(UserError) as caught:
            argtypes.writable_folder(path, "$TOOLBENCH_CACHE_DIR")
        assert str(caught.value).startswith(f"$TOOLBENCH_CACHE_DIR {path}: ")
        assert "\n" not in str(caught.value)


def test_isolation_setting_is_checked_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbench.sandbox import isolation

    for value, wanted in (("", "auto"), (" None ", "none"), ("FULL", "full")):
        monkeypatch.setenv(isolation.ENV_VAR, value)
        assert isolation.requested() == wanted
    monkeypatch.setenv(isolation.ENV_VAR, "strict")
    with pytest.raises(UserError, match=r"TOOLBENCH_ISOLATION='strict' is not a setting"):
        isolation.requested()


def test_full_isolation_that_cannot_be_had_is_refused_before_the_run(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """TOOLBENCH_ISOLATION=full on a machine without bubblewrap: one line before any work
    (it used to surface as a traceback when run.json was finalised)."""
    from toolbench.sandbox import isolation

    monkeypatch.setenv(isolation.ENV_VAR, "full")
    monkeypatch.setattr(isolation.shutil, "which", lambda name: None)
    isolation.detect.cache_clear()
    try:
        out = tmp_path / "run"
        code, _, err = cli("run", "home_search", "--model", "baseline", "--out", str(out))
    finally:
        isolation.detect.cache_clear()
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "TOOLBENCH_ISOLATION=full" in err and "bubblewrap" in err
    assert not out.exists()
