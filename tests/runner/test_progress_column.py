"""The terminal bar's time left follows the plain lines' rule: no estimate until a whole wave
of this session's samples has finished (rich's own column extrapolated from the first sample
of a wave: "about 1040 s left" 10 s before the end)."""

from __future__ import annotations

from rich.progress import Progress

from toolbench.runner.progress import WaveRemainingColumn


def test_no_estimate_before_a_wave_then_this_sessions_rate() -> None:
    column = WaveRemainingColumn()
    with Progress(column, disable=True) as bar:
        task_id = bar.add_task("t", total=10, completed=2, done_before=2, needs=3)
        task = bar.tasks[0]
        assert str(column.render(task)) == "ETA unknown"
        bar.advance(task_id, 2)
        assert str(column.render(task)) == "ETA unknown"  # 2 of a wave of 3
        task.start_time = (task.start_time or 0) - 30  # 30 s in, 3 done this session
        bar.advance(task_id, 1)
        assert str(column.render(task)) == "about 50 s left"  # 5 left at 10 s each
        bar.update(task_id, completed=10)
        assert str(column.render(task)) == "done"
