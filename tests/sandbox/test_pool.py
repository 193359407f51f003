"""Pool mechanics: concurrency, asyncio, replacing dead or stuck workers, clean shutdown, and
how each worker process is locked down."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import pytest

from tests.sandbox.conftest import FAST_LIMITS
from tests.sandbox.worlds import broken_world, probe_world, trouble_world
from toolbench.sandbox import ExecResult, Limits, SandboxError, SandboxPool
from toolbench.sandbox.pool import MAX_PROGRAM_CHARS
from toolbench.tasks.booking.world import make_world as booking_world
from toolbench.tasks.home_search.world import make_world as home_world


def _program(i: int) -> str:
    return f"API.set_location('City {i}')\nAPI.set_buy_or_rent('rent')\nAPI.set_num_beds({i})"


def _check(i: int, result: ExecResult) -> None:
    assert result.ok, result
    assert result.state == {"location": f"City {i}", "buy_or_rent": "rent", "num_beds": i}


def _worker_pids(pool: SandboxPool) -> set[int]:
    """Host pids of the pool's worker processes (their templates' sandboxes)."""
    assert pool.run(probe_world, "").ok
    return {worker.proc.pid for worker in pool._res.live}


def _descendants(pid: int) -> list[int]:
    """Host pids of every process below ``pid`` (the template inside the namespaces)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def test_threads_get_their_own_results(pool: SandboxPool) -> None:
    results: dict[int, ExecResult] = {}

    def work(offset: int) -> None:
        for i in range(offset, 200, 8):
            results[i] = pool.run(home_world, _program(i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == list(range(200))
    for i, result in results.items():
        _check(i, result)


async def test_arun_from_asyncio(pool: SandboxPool) -> None:
    results = await asyncio.gather(*(pool.arun(home_world, _program(i)) for i in range(50)))
    for i, result in enumerate(results):
        _check(i, result)


def test_workers_start_lazily_and_close_reaps_them() -> None:
    sandbox = SandboxPool(workers=2, limits=FAST_LIMITS)
    assert not sandbox._res.live
    _check(1, sandbox.run(home_world, _program(1)))
    workers = list(sandbox._res.live)
    assert len(workers) == 1
    workdir = sandbox._res.workdir
    assert workdir is not None and Path(workdir).is_dir()
    sandbox.close()
    sandbox.close()  # idempotent
    for worker in workers:
        assert worker.proc.returncode is not None  # reaped: not a zombie
        assert not Path(f"/proc/{worker.proc.pid}").exists()
    assert not Path(workdir).exists()
    with pytest.raises(SandboxError):
        sandbox.run(home_world, _program(1))


def test_context_manager_closes() -> None:
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        assert sandbox.run(booking_world, "API.select_booking_type('hotels')").ok
        _check(2, sandbox.run(home_world, _program(2)))
        workers = list(sandbox._res.live)
    assert workers and all(w.proc.returncode is not None for w in workers)


def test_timeout_in_python_keeps_the_worker() -> None:
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        before = _worker_pids(sandbox)
        result = sandbox.run(home_world, "while True:\n    pass")
        assert (result.kind, result.error) == ("timeout", "timeout: program ran longer than 0.5 s")
        assert 0.4 < result.duration_s < 1.5
        assert _worker_pids(sandbox) == before


def test_cpu_limit_is_separate_from_wall_limit() -> None:
    with SandboxPool(workers=1, limits=Limits(wall_s=5.0, cpu_s=0.3, memory_mb=256)) as sandbox:
        result = sandbox.run(home_world, "while True:\n    pass")
        assert (result.kind, result.error) == (
            "timeout",
            "timeout: program used more than 0.3 s of CPU time",
        )


def test_program_stuck_in_c_code_is_killed_by_its_template() -> None:
    """Its program process is killed at the deadline; the worker (template) stays."""
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        before = _worker_pids(sandbox)
        result = sandbox.run(trouble_world, "hang()")
        assert (result.ok, result.kind) == (False, "timeout")
        assert result.error == "timeout: program ran longer than 0.5 s"
        assert result.duration_s < 1.5
        assert _worker_pids(sandbox) == before
        _check(3, sandbox.run(home_world, _program(3)))


def test_stuck_worker_is_killed_and_replaced() -> None:
    """A worker that stops answering altogether is killed and replaced by the parent."""
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        before = _worker_pids(sandbox)
        (worker,) = sandbox._res.live
        for pid in _descendants(worker.proc.pid):
            os.kill(pid, signal.SIGSTOP)
        result = sandbox.run(home_world, _program(3))
        assert (result.ok, result.kind) == (False, "timeout")
        assert not Path(f"/proc/{next(iter(before))}").exists()  # killed and reaped
        assert _worker_pids(sandbox) != before
        _check(3, sandbox.run(home_world, _program(3)))


@pytest.mark.parametrize(
    ("call", "reason"), [("exit()", "exited with status 3"), ("segfault()", "SIGSEGV")]
)
def test_dead_program_process_is_reported(call: str, reason: str) -> None:
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        before = _worker_pids(sandbox)
        result = sandbox.run(trouble_world, call)
        assert (result.ok, result.kind) == (False, "worker_died")
        assert reason in (result.error or "")
        assert "program process" in (result.error or "")
        assert _worker_pids(sandbox) == before
        _check(4, sandbox.run(home_world, _program(4)))


def test_worker_is_locked_down(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBENCH_FAKE_API_KEY", "sk-do-not-leak")
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        facts = sandbox.run(probe_world, "").state
    assert set(facts["env"]) <= {
        *("LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING"),
        *("HOME", "TMPDIR", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"),
    }
    assert facts["cwd"] != os.getcwd()
    assert facts["cwd_entries"] == []
    assert facts["cwd_writable"] is False or os.geteuid() == 0  # root ignores permissions
    assert facts["limits"] == {"as": 256 * 1024 * 1024, "fsize": 0, "core": 0, "nofile": 32}
    assert facts["pid"] != os.getpid()
    assert facts["sid"] != os.getsid(0)  # own session: the terminal's Ctrl-C is ours alone


def test_infrastructure_failures_raise(pool: SandboxPool) -> None:
    with pytest.raises(SandboxError, match="this factory is broken"):
        pool.run(broken_world, "")
    with pytest.raises(ValueError, match="module-level"):
        pool.run(lambda: home_world(), "")  # type: ignore[arg-type,return-value]
    _check(5, pool.run(home_world, _program(5)))


def test_oversized_program_is_rejected(pool: SandboxPool) -> None:
    result = pool.run(home_world, "#" * (MAX_PROGRAM_CHARS + 1))
    assert (result.ok, result.kind) == (False, "rejected")


def test_limits_are_validated() -> None:
    with pytest.raises(ValueError):
        Limits(wall_s=0)
    with pytest.raises(ValueError):
        Limits(memory_mb=1)
    with pytest.raises(ValueError):
        SandboxPool(workers=0)


def test_worker_that_cannot_start_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolbench.sandbox import _process

    monkeypatch.setattr(_process, "_BOOT", "raise SystemExit(7)")
    with SandboxPool(workers=1, limits=FAST_LIMITS) as sandbox:
        with pytest.raises(SandboxError, match="exited with status 7"):
            sandbox.run(home_world, _program(1))
        assert not sandbox._res.live and sandbox._starting == 0


def test_orphaned_workdirs_of_dead_processes_are_removed(tmp_path: Path) -> None:
    import tempfile

    from toolbench.sandbox.pool import WORKDIR_PREFIX, _process_alive

    dead = next(pid for pid in range(4_000_000, 4_100_000) if not _process_alive(pid))
    root = Path(tempfile.gettempdir())
    orphan = root / f"{WORKDIR_PREFIX}{dead}-test"
    mine = root / f"{WORKDIR_PREFIX}{os.getpid()}-test"
    orphan.mkdir()
    mine.mkdir()
    try:
        with SandboxPool(workers=1) as pool:
            assert pool.run(home_world, "API.search()").ok
        assert not orphan.exists()
        assert mine.exists()  # a live process's dir is never touched
    finally:
        for folder in (orphan, mine):
            if folder.exists():
                folder.rmdir()
