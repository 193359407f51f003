"""Reliability across trials: pass@k and pass^k per task, with 95% bootstrap intervals.

With ``--epochs n`` every sample is tried n times. The success rate says how often one trial
succeeds; it cannot tell a model that solves half the samples every time from one that solves
every sample half the time. Two numbers per k can:

- **pass@k**: the chance that at least one of k trials of a sample succeeds. Per sample with
  n counted trials of which c succeeded, the unbiased estimator is ``1 - C(n-c, k) / C(n, k)``
  (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", arXiv:2107.03374).
- **pass^k**: the chance that *all* k trials succeed, as tau-bench defines it (Yao et al.
  2024, arXiv:2406.12045): per sample ``C(c, k) / C(n, k)``, averaged over samples. This is the
  computation of ``display_metrics`` in sierra-research/tau-bench ``tau_bench/run.py``
  (``comb(c, k) / comb(num_trials, k)`` summed over tasks, divided by the number of tasks).
  tau-bench assumes every task ran ``num_trials`` times; here each sample uses its own n.

Both are unbiased only for k <= n: drawing k of the n trials without replacement. At k = 1
both equal the sample's success rate c / n, so pass^1 == pass@1 == the ``success_rate`` the
report shows (the same per-sample values, the same seed, hence the same interval).

What counts as a trial is what the report's denominators already count: every record that is
not an infra error (scored records, and model errors as failed trials); infra errors say
nothing about the model and are left out. A sample with fewer than k counted trials (an
infra error took one of its epochs) has no unbiased estimate at k: it is left out at that k,
and the interval's n says how many samples count; a note names how many were left out.

Intervals resample samples, as every other interval of the report does
(``toolbench.tables.bootstrap.bootstrap_mean``, seeded by the task name). The report streams
its log, so what this module reads is the per-sample ``(n, c)`` a ``TaskTally`` keeps
(``TaskTally.epochs``), nothing per record.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from toolbench.report.summary import LoadedRun, TaskTally, id_order
from toolbench.tables.bootstrap import Estimate, bootstrap_mean, seed_for
from toolbench.tables.grid import Cell, Grid
from toolbench.tables.runs import model_of

# At most this many trials per sample get every k shown; above it, powers of two and n.
ALL_K_UP_TO = 8


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k of one sample: the chance that k trials drawn from its n all succeeded,
    ``C(c, k) / C(n, k)`` (tau-bench). Integer binomials, one correctly rounded division."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one sample: the chance that at least one of k trials drawn from its n
    succeeded, ``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021), taken as
    ``(C(n, k) - C(n - c, k)) / C(n, k)``: integers until one correctly rounded division, so
    pass@1 is exactly c / n, the success rate."""
    _check(n, c, k)
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")


def ks_shown(n: int) -> list[int]:
    """The k a report shows for samples of up to n trials: every k up to 8 trials; else
    1, 2, 4, ... and n itself (pass^n, all trials succeeding, is always shown)."""
    if n <= ALL_K_UP_TO:
        return list(range(1, n + 1))
    out = [1 << i for i in range(n.bit_length()) if 1 << i < n]
    return [*out, n]


def max_trials(tally: TaskTally) -> int:
    """The most counted trials any sample of the task has (0: none)."""
    return max((seen[0] for seen in tally.epochs.values()), default=0)


def per_sample(counts: Mapping[str, Sequence[int]], k: int) -> tuple[list[float], list[float]]:
    """pass@k and pass^k of each sample with at least k counted trials, in id order (the
    bootstrap must see the same values in the same order)."""
    at, hat = [], []
    for key in sorted(counts, key=id_order):
        n, c = counts[key][0], counts[key][1]
        if n >= k:
            at.append(pass_at_k(n, c, k))
            hat.append(pass_hat_k(n, c, k))
    return at, hat


def reliability(task: str, tally: TaskTally) -> dict[int, dict[str, Estimate]]:
    """``k`` -> {"pass@k": Estimate, "pass^k": Estimate} for the k shown (empty when no sample
    has two counted trials: with one trial both are the success rate)."""
    top = max_trials(tally)
    if top < 2:
        return {}
    out = {}
    for k in ks_shown(top):
        at, hat = per_sample(tally.epochs, k)
        out[k] = {
            "pass@k": bootstrap_mean(at, seed=seed_for(task)),
            "pass^k": bootstrap_mean(hat, seed=seed_for(task)),
        }
    return out


def per_epoch_success(tally: TaskTally) -> dict[int, float]:
    """Epoch -> success rate over that epoch's counted trials (infra errors left out)."""
    return {e: c / n for e, (n, c) in sorted(tally.per_epoch.items()) if n}


def reliability_json(run: LoadedRun) -> dict[str, dict[str, Any]]:
    """Task -> {"trials": most per sample, "per_epoch_success_rate": {epoch: rate},
    "k": {k: {"pass@k": {...}, "pass^k": {...}}}, "left_out": {k: samples with < k trials}},
    for the tasks with more than one trial per sample."""
    out: dict[str, dict[str, Any]] = {}
    for task, tally in sorted(run.tallies.items()):
        table = reliability(task, tally)
        if not table:
            continue
        out[task] = {
            "trials": max_trials(tally),
            "per_epoch_success_rate": {str(e): r for e, r in per_epoch_success(tally).items()},
            "k": {str(k): {name: _est(e) for name, e in pair.items()} for k, pair in table.items()},
            "left_out": {str(k): n for k in table if (n := _short(tally, k))},
        }
    return out


def _est(e: Estimate) -> dict[str, float]:
    return {"mean": e.mean, "low": e.low, "high": e.high, "n": e.n}


def _short(tally: TaskTally, k: int) -> int:
    """Samples with fewer than k counted trials (left out at k)."""
    return sum(1 for seen in tally.epochs.values() if seen[0] < k)


def _epochs_text(tally: TaskTally) -> str:
    """Each epoch's success rate (up to 8 epochs), else their range."""
    rates = list(per_epoch_success(tally).values())
    if not rates:
        return "-"
    if len(rates) <= ALL_K_UP_TO:
        return " / ".join(f"{r:.3f}" for r in rates)
    return f"{min(rates):.3f} to {max(rates):.3f} over {len(rates)} epochs"


def reliability_grid(run: LoadedRun) -> Grid | None:
    """One run's reliability table: a row per task x k, next to the success rate of each
    epoch; None when no task has more than one trial per sample."""
    grid = Grid(
        title=f"reliability across trials: {run.label}  ({model_of(run)})",
        columns=["task", "k", "success rate per epoch", "pass@k [95% CI]", "pass^k [95% CI]"],
        key_columns=2,
    )
    for task, tally in sorted(run.tallies.items()):
        table = reliability(task, tally)
        for index, (k, pair) in enumerate(table.items()):
            epochs: Cell = _epochs_text(tally) if index == 0 else ""
            grid.rows.append([task, str(k), epochs, pair["pass@k"], pair["pass^k"]])
        short = [f"{n} at k = {k}" for k in table if (n := _short(tally, k))]
        if short:
            grid.notes.append(
                f"{task}: samples with fewer than k counted trials (infra errors) are left "
                f"out at that k: {', '.join(short)}"
            )
    if not grid.rows:
        return None
    grid.notes.insert(
        0,
        "pass@k: at least one of k trials succeeds; pass^k: all k succeed (tau-bench); "
        "unbiased over each sample's n trials, infra errors not counted as trials; "
        "k = 1 is the success rate",
    )
    return grid


def reliability_grids(runs: Sequence[LoadedRun]) -> list[Grid]:
    """A reliability table per run that has more than one trial per sample."""
    return [grid for run in runs if (grid := reliability_grid(run)) is not None]
