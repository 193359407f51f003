"""``--executor ray`` / ``--model-replicas`` without an address: join the cluster ``ray start``
named in Ray's current-cluster file when it is up, else start a private one
(``ray_setup.choose_local``), found where Ray looks for that file."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from toolbench.models.ray_setup import PRIVATE, choose_local, current_cluster_file, reachable


def _file(tmp_path: Path, text: str) -> Path:
    file = tmp_path / "ray" / "ray_current_cluster"
    file.parent.mkdir(parents=True)
    file.write_text(text)
    return file


def test_no_file_starts_a_private_cluster(tmp_path: Path) -> None:
    choice = choose_local(tmp_path / "ray" / "ray_current_cluster", lambda _: True)
    assert choice.address == PRIVATE
    assert (
        choice.line == "started a private local cluster for this run (it stops when the run ends)"
    )


def test_an_empty_file_starts_a_private_cluster(tmp_path: Path) -> None:
    assert choose_local(_file(tmp_path, "\n"), lambda _: True).address == PRIVATE


def test_a_running_cluster_is_joined(tmp_path: Path) -> None:
    file = _file(tmp_path, "127.0.0.1:6379\n")
    asked: list[str] = []
    choice = choose_local(file, lambda address: asked.append(address) or True)
    assert asked == ["127.0.0.1:6379"] and choice.address == "127.0.0.1:6379"
    assert choice.line == (
        f"joined the running local cluster at 127.0.0.1:6379 (named in {file}); "
        "--ray-address picks another"
    )


def test_a_dead_clusters_file_starts_a_private_cluster(tmp_path: Path) -> None:
    file = _file(tmp_path, "127.0.0.1:6379")
    choice = choose_local(file, lambda _: False)
    assert choice.address == PRIVATE
    assert choice.line.endswith(f"; the cluster {file} names (127.0.0.1:6379) is not running")


def test_reachable_is_a_connect() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        assert reachable(f"127.0.0.1:{port}")
    assert not reachable(f"127.0.0.1:{port}", timeout_s=1)
    assert not reachable("auto")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Ray's Linux lookup")
def test_the_file_is_where_ray_looks() -> None:
    assert current_cluster_file({}) == Path("/tmp/ray/ray_current_cluster")
    assert current_cluster_file({"TMPDIR": "/t"}) == Path("/t/ray/ray_current_cluster")
    env = {"TMPDIR": "/t", "RAY_TMPDIR": "/r"}
    assert current_cluster_file(env) == Path("/r/ray/ray_current_cluster")


def test_the_lookup_agrees_with_rays_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ray")
    from ray._common.utils import get_ray_address_file

    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    assert current_cluster_file({"RAY_TMPDIR": str(tmp_path)}) == Path(get_ray_address_file(None))
