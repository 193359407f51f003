"""The log key and the anchor's MAC (``runner/chain.py``): where the key lives and how it is
made, what the MAC covers, and that every anchor the store writes is sealed with it."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolbench.errors import UserError
from toolbench.package import key_dir
from toolbench.runner import chain, ledger
from toolbench.runner import lifecycle as lifecycle_module
from toolbench.runner.store import RUN_FILE, SAMPLES_FILE, RunStore, load_log, read_run_info

KEY = chain.LogKey(bytes(range(32)))


@pytest.fixture
def keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, not yet existing key folder for this test."""
    folder = tmp_path / "keys" / "toolbench"
    monkeypatch.setenv("TOOLBENCH_KEY_DIR", str(folder))
    return folder


def _record(sample_id: str, success: bool = True) -> dict[str, Any]:
    return {"task": "t", "id": sample_id, "epoch": 0, "status": "scored", "success": success}


def finished_run(folder: Path, n: int = 3, status: str = "complete") -> RunStore:
    store = RunStore(folder)
    store.write_info({"fingerprint": "f", "status": "running"})
    for index in range(n):
        store.append(_record(str(index), index % 2 == 0))
    store.close()
    store.write_info({"fingerprint": "f", "status": status})
    return store


def check(folder: Path) -> chain.LogCheck:
    return load_log(folder, read_run_info(folder))[1]


def edit_info(folder: Path, **changes: Any) -> dict[str, Any]:
    info = read_run_info(folder)
    info.update(changes)
    (folder / RUN_FILE).write_text(json.dumps(info))
    return info


# -- where the key lives ---------------------------------------------------------------


def test_key_dir_prefers_the_env_then_xdg_then_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLBENCH_KEY_DIR", str(tmp_path / "k"))
    assert key_dir() == tmp_path / "k"
    monkeypatch.delenv("TOOLBENCH_KEY_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert key_dir() == tmp_path / "xdg" / "toolbench"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")  # ignored, as XDG says
    assert key_dir() == tmp_path / "home" / ".config" / "toolbench"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert key_dir() == tmp_path / "home" / ".config" / "toolbench"


def test_the_tests_never_use_the_users_key_folder() -> None:
    """conftest points every test (and every process a test starts) at a session folder."""
    assert Path.home() / ".config" not in key_dir().parents


def test_the_key_is_made_once_0600_in_a_0700_folder(keys: Path) -> None:
    assert chain.find_key() is None and not keys.exists()  # looking makes nothing
    key = chain.ensure_key()
    path = keys / chain.KEY_FILE
    assert stat.S_IMODE(keys.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert chain.ensure_key() == key == chain.find_key()
    assert [p.name for p in keys.iterdir()] == [chain.KEY_FILE]  # no temporary file left
    assert key.secret.hex() not in repr(key) and key.id in repr(key)
    assert len(key.id) == chain.KEY_ID_LEN and key.id not in key.secret.hex()


def test_first_runs_at_once_agree_on_one_key(keys: Path) -> None:
    found: list[chain.LogKey] = []
    start = threading.Barrier(8)

    def make() -> None:
        start.wait()
        found.append(chain.ensure_key())

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({key.id for key in found}) == 1 and len(found) == 8
    assert [p.name for p in keys.iterdir()] == [chain.KEY_FILE]


def test_a_file_system_without_hard_links_still_gets_a_key(
    keys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(source: object, target: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("toolbench.runner.chain.os.link", no_links)
    key = chain.ensure_key()
    assert chain.find_key() == key
    assert [p.name for p in keys.iterdir()] == [chain.KEY_FILE]
    assert stat.S_IMODE((keys / chain.KEY_FILE).stat().st_mode) == 0o600


def test_a_damaged_key_or_an_unusable_folder_is_one_clear_error(
    keys: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys.mkdir(parents=True)
    (keys / chain.KEY_FILE).write_text("not a key\n")
    with pytest.raises(UserError, match="not a toolbench log key"):
        chain.ensure_key()
    with pytest.raises(UserError, match="not a toolbench log key"):
        chain.find_key()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("TOOLBENCH_KEY_DIR", str(blocker / "keys"))
    with pytest.raises(UserError, match=r"cannot be read or made.*TOOLBENCH_KEY_DIR"):
        chain.ensure_key()
    assert chain.find_key() is None  # a report there: the key is simply not here


# -- what the MAC covers ---------------------------------------------------------------

hexes = st.text("0123456789abcdef", min_size=1, max_size=64)
anchors = st.builds(
    chain.Anchor,
    seed=hexes,
    head=hexes,
    records=st.integers(0, 10**9),
    pending=st.none() | st.tuples(hexes, st.integers(0, 10**9)),
)
infos = st.fixed_dictionaries(
    {"fingerprint": hexes, "status": st.sampled_from(["running", "complete", "interrupted"])},
    optional={"metrics": st.dictionaries(st.text(max_size=5), st.floats(allow_nan=False))},
)


@given(anchors, infos)
def test_a_sealed_anchor_verifies_through_run_json(
    anchor: chain.Anchor, info: dict[str, Any]
) -> None:
    sealed = chain.seal(anchor, KEY, info)
    read = chain.Anchor.from_json(json.loads(json.dumps(sealed.to_json())))
    assert read == sealed and read.key_id == KEY.id
    assert chain.provenance(read, info, KEY) == chain.KEYED
    assert chain.provenance(read, info, None) == chain.OTHER_KEY
    assert chain.provenance(read, info, chain.LogKey(b"\x01" * 32)) == chain.OTHER_KEY
    bare = chain.Anchor.from_json({k: v for k, v in sealed.to_json().items()
                                   if k not in ("mac", "key_id")})  # fmt: skip
    assert bare is not None and chain.provenance(bare, info, KEY) == chain.UNKEYED
    assert chain.provenance(sealed, {**info, "metrics": {"x": 1.0}}, KEY) == chain.KEYED


@given(anchors, infos, st.sampled_from(["seed", "head", "records", "pending", "fingerprint",
                                        "status", "mac"]))  # fmt: skip
def test_changing_anything_the_mac_covers_is_forged(
    anchor: chain.Anchor, info: dict[str, Any], field: str
) -> None:
    sealed = chain.seal(anchor, KEY, info)
    if field in ("fingerprint", "status"):
        info = {**info, field: str(info[field]) + "x"}
    elif field == "records":
        sealed = chain.Anchor(sealed.seed, sealed.head, sealed.records + 1, sealed.pending,
                              sealed.key_id, sealed.mac)  # fmt: skip
    elif field == "pending":
        pending = None if sealed.pending else (sealed.head, sealed.records)
        sealed = chain.Anchor(sealed.seed, sealed.head, sealed.records, pending,
                              sealed.key_id, sealed.mac)  # fmt: skip
    elif field == "mac":
        assert sealed.mac is not None
        flipped = "0" if sealed.mac[0] != "0" else "1"
        sealed = chain.Anchor(sealed.seed, sealed.head, sealed.records, sealed.pending,
                              sealed.key_id, flipped + sealed.mac[1:])  # fmt: skip
    else:
        value = getattr(sealed, field) + "0"
        sealed = chain.Anchor(**{**sealed.__dict__, field: value})
    assert chain.provenance(sealed, info, KEY) == chain.FORGED


@pytest.mark.parametrize(
    "fields",
    [{"mac": "ab" * 32}, {"key_id": "ab" * 8}, {"mac": "AB" * 32, "key_id": "ab" * 8},
     {"mac": "ab" * 32, "key_id": "short"}, {"mac": 5, "key_id": "ab" * 8}],
)  # fmt: skip
def test_a_malformed_mac_or_key_id_is_a_malformed_anchor(fields: dict[str, Any]) -> None:
    assert chain.Anchor.from_json({"seed": "s", "head": "h", "records": 0, **fields}) is None


# -- every anchor the store writes is sealed ------------------------------------------


def test_every_write_of_run_json_is_sealed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Start, records, finish, and a resume's rewrite (pending anchor included)."""
    seen: list[dict[str, Any]] = []
    real = RunStore.write_info, RunStore._write_anchor

    def write_info(self: RunStore, info: dict[str, Any]) -> None:
        real[0](self, info)
        seen.append(read_run_info(self.folder))

    def write_anchor(self: RunStore, anchor: chain.Anchor) -> None:
        real[1](self, anchor)
        seen.append(read_run_info(self.folder))

    monkeypatch.setattr(RunStore, "write_info", write_info)
    monkeypatch.setattr(RunStore, "_write_anchor", write_anchor)
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "f", "status": "running"})
    store.append(_record("0"))
    store.append({**_record("1"), "status": "infra_error"})
    store.close()
    store.write_info({"fingerprint": "f", "status": "incomplete"})
    RunStore(tmp_path).prepare_resume()  # moves the infra error aside: two anchor writes
    assert len(seen) == 4 and "pending" in seen[2][chain.ANCHOR_KEY]
    key = chain.find_key()
    for info in seen:
        anchor = chain.Anchor.from_json(info[chain.ANCHOR_KEY])
        assert anchor is not None and chain.provenance(anchor, info, key) == chain.KEYED
    assert check(tmp_path).provenance == chain.KEYED


def test_a_checkpoint_anchor_is_sealed_and_later_records_are_not_keyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run killed after a checkpoint: the records after it are chained but the key says
    nothing about them, and the report line says how many."""
    monkeypatch.setattr(lifecycle_module, "PROGRESS_WRITE_EVERY_S", 0.0)
    store = RunStore(tmp_path)
    info = {"fingerprint": "f", "status": "running", "progress": {"done": 0, "planned": 5}}
    store.write_info(info)
    stats = lifecycle_module.SessionStats()
    checkpoint = lifecycle_module.ProgressCheckpoint(store, info, stats, 0)
    for index in range(5):
        store.append(_record(str(index)))
        if index == 2:
            checkpoint.advance()  # run.json now anchors 3 records
    store.close()  # then kill -9: run.json stays at the checkpoint
    result = check(tmp_path)
    assert result.ok and (result.records, result.anchored) == (5, 3)
    assert result.provenance == chain.KEYED
    assert "verified with this machine's key for its first 3 records (the 2 after" in (
        result.describe("x")
    )


def test_a_finished_run_turned_back_to_running_to_append_is_forged(tmp_path: Path) -> None:
    """A finished log must end at its anchor, a running one may go on past it: flipping the
    status to append re-chained records breaks the MAC, which covers the status."""
    finished_run(tmp_path)
    info = read_run_info(tmp_path)
    line, _ = chain.chained(json.dumps(_record("9")), info[chain.ANCHOR_KEY]["head"])
    with (tmp_path / SAMPLES_FILE).open("a") as handle:
        handle.write(line + "\n")
    assert check(tmp_path).reason == "records were added after the run finished"
    edit_info(tmp_path, status="running")
    result = check(tmp_path)
    assert (result.state, result.reason) == (chain.MODIFIED, chain.FORGED_REASON)


def test_a_run_json_from_before_keys_reports_as_unkeyed(tmp_path: Path) -> None:
    finished_run(tmp_path)
    info = read_run_info(tmp_path)
    for name in ("key_id", "mac"):
        del info[chain.ANCHOR_KEY][name]
    (tmp_path / RUN_FILE).write_text(json.dumps(info))
    ledger._note_path(tmp_path).unlink()  # made before keys: this machine noted no sealing
    result = check(tmp_path)
    assert result.ok and result.provenance == chain.UNKEYED
    assert result.describe("x") == (
        "x: log verified (3 records); log chain intact; no key MAC: made before keys "
        "(provenance not verified)"
    )
    with pytest.raises(UserError, match=r"no key MAC.*start a new run"):
        RunStore(tmp_path).prepare_resume()


def test_resume_refuses_a_folder_keyed_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    finished_run(tmp_path / "run", status="interrupted")
    monkeypatch.setenv("TOOLBENCH_KEY_DIR", str(tmp_path / "other-keys"))
    assert check(tmp_path / "run").provenance == chain.OTHER_KEY
    before = (tmp_path / "run" / RUN_FILE).read_bytes()
    with pytest.raises(UserError, match=r"sealed with another key \(id [0-9a-f]{16}\)"):
        RunStore(tmp_path / "run").prepare_resume()
    assert (tmp_path / "run" / RUN_FILE).read_bytes() == before  # not re-keyed


def test_resume_refuses_a_forged_mac_even_without_records(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.write_info({"fingerprint": "f", "status": "running"})  # then killed
    store.close()
    edit_info(tmp_path, fingerprint="g")
    before = (tmp_path / RUN_FILE).read_bytes()
    resumed = RunStore(tmp_path)
    resumed.prepare_resume()  # no log to read: the anchor is loaded at the first write
    with pytest.raises(UserError, match="does not verify with this machine's key"):
        resumed.write_info({"fingerprint": "g", "status": "running"})
    assert (tmp_path / RUN_FILE).read_bytes() == before


def test_a_stripped_mac_on_a_log_this_machine_sealed_is_forged(tmp_path: Path) -> None:
    """Removing the MAC is no way out where this machine noted it sealed the folder."""
    finished_run(tmp_path)
    info = read_run_info(tmp_path)
    for name in ("key_id", "mac"):
        del info[chain.ANCHOR_KEY][name]
    (tmp_path / RUN_FILE).write_text(json.dumps(info))
    result = check(tmp_path)
    assert (result.state, result.reason) == (chain.MODIFIED, chain.FORGED_REASON)
