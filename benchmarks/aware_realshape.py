"""Awareness datasets built from files in the real public shapes, at a realistic scale.

Writes a StableToolBench-shaped query set (G1/G2/G3 files, a few hundred queries) over a pool
of about two thousand APIs that holds the warning signs an audit of the real pool found
(several APIs of one tool, sibling tools, re-published clones with identical descriptions,
look-alike brands, near duplicates at cosine >= 0.9), and API-Bank-shaped level-1/level-2
files (tool-searcher-only level-2 records, an assistant asking for a password, a value the
user repeats). Everything is our own text (``aware_realshape_toolbench`` and
``aware_realshape_apibank``). Then it goes through the real CLI, as a user would:

* ``toolbench aware build --manipulation api_replacement`` for both sources (and API-Bank
  level 2 alone, which must be refused: every record needs tool retrieval);
* ``toolbench aware build --manipulation utterance_removal`` on level 1 with a scripted
  rewriter (``replay:``; a real build asks a model, which this machine does not have);
* ``toolbench aware stats`` (Table 1) and ``toolbench aware run --model similarity``;

and prints the pre-verification counts per filter, the loader's skips, Table 1, and the
similarity baseline's accuracy / balanced accuracy / MCC with its threshold fitted on the very
labels it is scored on ("before") and cross-fitted by source record ("after").

Run: ``python benchmarks/aware_realshape.py`` (a few minutes on 2 cores when the embedding
cache is cold, under a minute warm); ``--small`` for the tiny size the test uses.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from aware_realshape_apibank import write_apibank  # noqa: E402
from aware_realshape_toolbench import make_pool, write_pool, write_queries  # noqa: E402

from toolbench.aware.manipulate.replacement_checks import CHECKS, check_name  # noqa: E402
from toolbench.aware.schema import Instance, read_instances  # noqa: E402

SIZES = {
    # tools per category (8 categories), queries, API-Bank level-1 dialogues
    "full": (50, 300, 90),
    "small": (6, 40, 12),
}


def generate(out: Path, seed: int, size: str) -> dict[str, Any]:
    """Write every input file; returns what was written (counts) for the report."""
    tools_per_category, queries, dialogues = SIZES[size]
    tools = make_pool(seed, tools_per_category)
    facts: dict[str, Any] = {
        "pool APIs": write_pool(out / "pool" / "pool.json", tools),
        "tools": dict(Counter(t.kind for t in tools)),
    }
    facts.update(write_queries(out / "stabletoolbench", tools, queries, seed))
    facts.update(write_apibank(out / "apibank", dialogues, seed))
    return facts


def cli(*args: str, expect: int = 0) -> str:
    """Run ``toolbench`` as a user would (its own process); fail loudly on another exit code."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), HF_HUB_OFFLINE="1", COLUMNS="160")
    command = [sys.executable, "-c", "import sys; from toolbench.cli import main; sys.exit(main())"]
    done = subprocess.run([*command, *args], capture_output=True, text=True, env=env)
    lines = (done.stdout + done.stderr).splitlines()
    # The encoder library's own load bar is noise here; everything else is kept.
    text = "\n".join(line for line in lines if not line.startswith("Loading weights")).strip()
    if done.returncode != expect:
        raise SystemExit(f"toolbench {' '.join(args)}: exit {done.returncode}\n{text}")
    return text


def pre_verification(path: Path) -> tuple[Counter[str], Counter[str], int]:
    """(candidates turned down per check, twins whose first choice each check turned down,
    twins) read back from the dataset's provenance: what a reviewer will see."""
    candidates: Counter[str] = Counter()
    twins: Counter[str] = Counter()
    made = 0
    for instance in read_instances(path):
        if instance.manipulation != "api_replacement":
            continue
        made += 1
        reasons = instance.provenance.notes.get("pre_verification", [])
        names = [check_name(note["why"]) for note in reasons]
        candidates.update(names)
        twins.update(set(names))
    return candidates, twins, made


def similarity_before_after(path: Path, cache: Path) -> dict[str, dict[str, float]]:
    """The similarity floor fitted on the evaluated labels themselves, and cross-fitted."""
    from toolbench.aware.encoder import ApiEncoder
    from toolbench.aware.evaluate.baselines import (
        best_api_similarity,
        cross_fitted_thresholds,
        fit_threshold,
    )
    from toolbench.aware.evaluate.items import evaluated

    instances = evaluated(list(read_instances(path)), include_pending=True)
    with ApiEncoder(None, cache_dir=cache) as encoder:
        scores = best_api_similarity(encoder, instances)
    labels = [i.label for i in instances]
    same = fit_threshold([scores[i.id] for i in instances], labels)
    crossed, _ = cross_fitted_thresholds(scores, instances)
    return {
        "before": _scores(instances, scores, dict.fromkeys(scores, same)),
        "after": _scores(instances, scores, crossed),
    }


def _scores(
    instances: list[Instance], scores: dict[str, float], thresholds: dict[str, float]
) -> dict[str, float]:
    from toolbench.aware.evaluate.metrics import Judged, binary_metrics

    judged = [
        Judged(i.id, i.label, "yes" if scores[i.id] >= thresholds[i.id] else "no")
        for i in instances
    ]
    estimates = binary_metrics(judged)
    return {
        "n": len(judged),
        **{k: estimates[k].mean for k in ("accuracy", "balanced_accuracy", "mcc", "f1")},
    }


def run_similarity(path: Path, cache: Path, runs: Path) -> dict[str, Any]:
    """``toolbench aware run --model similarity --include-pending``: the CLI's cross-fitted
    numbers, read from run.json (all of a dataset's groups pooled is not what run.json keeps,
    so the per-group rows are returned as they are)."""
    folder = runs / path.stem
    shutil.rmtree(folder, ignore_errors=True)  # a run of earlier data would be refused
    cli("aware", "run", str(path), "--model", "similarity", "--include-pending",
        "--cache-dir", str(cache), "--out", str(folder))  # fmt: skip
    info = json.loads((folder / "run.json").read_text())
    return info["metrics"]


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def report_filters(name: str, path: Path, build_output: str) -> dict[str, Any]:
    candidates, twins, made = pre_verification(path)
    print(f"\n== pre-verification on {name}: {made} api_replacement twins ==")
    print(f"{'check':28} {'candidates turned down':>24} {'twins took next-ranked':>24}")
    for check in CHECKS:
        print(f"{check:28} {candidates[check]:>24} {twins[check]:>24}")
    took = sum(1 for line in build_output.splitlines() if line.startswith("pre-verification"))
    print(f"(the build summary printed {took} pre-verification lines)")
    return {"twins": made, "candidates": candidates, "first_choice": twins}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "aware-realshape")
    parser.add_argument("--cache-dir", type=Path, help="embedding cache (default: OUT/cache)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--small", action="store_true", help="the tiny size the test runs")
    parser.add_argument("--no-run", action="store_true", help="skip `aware run` (faster)")
    args = parser.parse_args(argv)
    out: Path = args.out
    cache = args.cache_dir or out / "cache"
    started = time.monotonic()
    facts = generate(out, args.seed, "small" if args.small else "full")
    print("written:", json.dumps(facts))
    results = build_all(out, cache, args.seed)
    print("\n== loader skips (API-Bank) ==")
    from toolbench.aware.sources.apibank import read_apibank, skip_summary

    for line in skip_summary(read_apibank(out / "apibank").skipped):
        print(line)
    print("\n== toolbench aware stats ==")
    print(cli("aware", "stats", *(str(p) for p in results["datasets"].values())))
    baseline = {}
    for name in ("toolbench", "apibank"):
        baseline[name] = similarity_before_after(results["datasets"][name], cache)
        if not args.no_run:
            metrics = run_similarity(results["datasets"][name], cache, out / "runs")
            baseline[name]["cli"] = metrics
    summarise(results, baseline)
    print(f"\ntotal {time.monotonic() - started:.0f} s; files in {out}")
    return 0


def build_all(out: Path, cache: Path, seed: int) -> dict[str, Any]:
    """Every build, through the CLI; the outputs are printed as they come."""
    common = ("--seed", str(seed), "--cache-dir", str(cache))
    datasets = {
        "toolbench": out / "aware-toolbench.jsonl",
        "apibank": out / "aware-apibank.jsonl",
    }
    outputs: dict[str, str] = {}
    started = time.monotonic()
    outputs["toolbench"] = cli(
        "aware", "build", "--source", f"toolbench:{out / 'stabletoolbench'}",
        "--pool", str(out / "pool"), "--manipulation", "api_replacement",
        "--out", str(datasets["toolbench"]), *common,
    )  # fmt: skip
    print(f"\n== aware build (StableToolBench shape), {time.monotonic() - started:.0f} s ==")
    print(outputs["toolbench"])
    outputs["apibank"] = cli(
        "aware", "build", "--source", f"apibank:{out / 'apibank'}",
        "--manipulation", "api_replacement,utterance_removal",
        "--model", f"replay:{out / 'rewrites.jsonl'}", "--out", str(datasets["apibank"]), *common,
    )  # fmt: skip
    print("\n== aware build (API-Bank shape, level 1 + level 2; utterance removal by a scripted")
    print("   rewriter, replay:, since no model is served on this machine) ==")
    print(outputs["apibank"])
    refused = cli(
        "aware", "build", "--source", f"apibank:{out / 'apibank' / 'level-2-api.json'}",
        "--manipulation", "api_replacement", "--out", str(out / "never.jsonl"), *common,
        expect=2,
    )  # fmt: skip
    print("\n== aware build (API-Bank level 2 alone: refused, exit 2) ==")
    print(refused)
    return {"datasets": datasets, "outputs": outputs}


def summarise(results: dict[str, Any], baseline: dict[str, Any]) -> None:
    filters = {
        name: report_filters(name, results["datasets"][name], results["outputs"][name])
        for name in ("toolbench", "apibank")
    }
    removal = Counter(
        reason.partition(":")[0]
        for instance in read_instances(results["datasets"]["apibank"])
        if instance.label == "incomplete"
        for reason in instance.verification.reasons
    )
    print("\n== utterance removal: automatic verdicts on the API-Bank-shaped level 1 ==")
    print(dict(sorted(removal.items())))
    print("\n== summary ==")
    header = f"{'source':10} {'twins':>6} " + " ".join(f"{c[:14]:>15}" for c in CHECKS)
    print(header + "   (candidates / twins)")
    for name, found in filters.items():
        cells = " ".join(
            f"{found['candidates'][c]:>7} / {found['first_choice'][c]:<5}" for c in CHECKS
        )
        print(f"{name:10} {found['twins']:>6} {cells}")
    print(f"\n{'similarity':28} {'n':>5} {'accuracy':>9} {'bal.acc':>8} {'MCC':>7} {'F1':>7}")
    for name, result in baseline.items():
        for when in ("before", "after"):
            row = result[when]
            label = f"{name} {when}"
            print(
                f"{label:28} {row['n']:>5} {_fmt(row['accuracy']):>9} "
                f"{_fmt(row['balanced_accuracy']):>8} {_fmt(row['mcc']):>7} {_fmt(row['f1']):>7}"
            )
        rows = result.get("cli", {}).get("aware-explicit-0shot", {})
        for group, row in sorted((g, r) for g, r in rows.items() if g.startswith(name + "/")):
            label = f"  `aware run` {group.partition('/')[2]}"
            print(
                f"{label:28} {row.get('n', ''):>5} {_fmt(row['accuracy']):>9} "
                f"{_fmt(row['balanced_accuracy']):>8} {_fmt(row['mcc']):>7} {_fmt(row['f1']):>7}"
            )


if __name__ == "__main__":
    raise SystemExit(main())
