"""``toolbench aware ...``: build, review and describe incomplete-condition datasets."""

from __future__ import annotations

import argparse
import dataclasses
import getpass
import os
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from toolbench.aware.build import (
    BuildSettings,
    build,
    load_source,
    parse_manipulations,
    parse_source,
    work_units,
)
from toolbench.aware.evaluate.human import HumanSession
from toolbench.aware.manipulate.api_replacement import ReplacementOptions
from toolbench.aware.review import terminal
from toolbench.aware.review.export import export_decisions
from toolbench.aware.schema import read_instances, write_instances
from toolbench.aware.stats import render_table1, table1
from toolbench.cli.aware_eval import command_aware_eval
from toolbench.cli.run import model_options
from toolbench.errors import UserError
from toolbench.models.spec import FREE_TEXT, make_model, require
from toolbench.runner.lifecycle import RateColumn

EXIT_INCOMPLETE = 3


def command_aware(args: argparse.Namespace, console: Console, default_cache: Path) -> int:
    if args.aware_command == "build":
        return _build(args, console, default_cache)
    if args.aware_command == "verify":
        return _verify(args, console)
    if args.aware_command == "export":
        return _export(args, console)
    if args.aware_command == "human" and args.web:
        return _human_web(args, console)
    if args.aware_command in ("run", "prompt", "human"):
        return command_aware_eval(args, console, default_cache)
    return _stats(args, console)


def _model(args: argparse.Namespace, cache_dir: Path) -> Any:
    return make_model(args.model, model_options(args, cache_dir))


def _verify_model(args: argparse.Namespace, cache_dir: Path, manipulations: Any) -> Any:
    if not args.verify_model:
        return None
    if "api_replacement" not in manipulations:
        raise UserError("--verify-model judges api_replacement twins; add that --manipulation")
    return make_model(args.verify_model, model_options(args, cache_dir))


def _check_summary(checks: Any) -> list[str]:
    """One line per pre-verification check that turned a candidate down (see
    ``replacement_checks``): how many candidates, and how many twins took a lower-ranked one."""
    return [
        f"pre-verification {name}: turned down {checks.candidates[name]} candidates; "
        f"{checks.twins[name]} twins took the next-ranked candidate that passed"
        for name in sorted(checks.candidates, key=lambda n: -checks.candidates[n])
    ]


def _check_flags(args: argparse.Namespace) -> None:
    # The replacement options check themselves; building them here fails before slow work.
    ReplacementOptions(
        seed=args.seed,
        rank=args.rank,
        choose_from=args.choose_from,
        min_similarity=args.min_similarity,
        max_similarity=args.max_similarity,
    )


class EncodingProgress:
    """Embedding texts can take minutes on a cold cache, before the first twin: a bar with the
    rate and time left on a terminal, else a line every ``every_s`` seconds (and at the end)."""

    def __init__(self, console: Console, bar: Progress, every_s: float = 15.0) -> None:
        self.console, self.bar, self.every_s = console, bar, every_s
        self.done = 0
        self.task: Any = None
        self.started = self.last_line = time.monotonic()

    def __call__(self, n: int, total: int) -> None:
        self.done += n
        if self.console.is_terminal:
            if self.task is None:
                self.task = self.bar.add_task("encoding API texts", total=total)
            self.bar.advance(self.task, n)
            return
        now = time.monotonic()
        if now - self.last_line >= self.every_s or self.done >= total:
            self.last_line = now
            self.console.print(self.line(total, now - self.started))

    def line(self, total: int, elapsed: float) -> str:
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = f", about {(total - self.done) / rate:.0f} s left" if rate > 0 else ""
        return f"encoding: {self.done}/{total} texts, {rate:.0f} texts/s{left}"


def _skip_summary(skipped: Sequence[tuple[str, str, str]]) -> list[str]:
    """One line per manipulation and kind of reason, with a count and one example: reasons
    name the record's API ("no replacement for 'ToolSearcher'"), so the quoted names are
    left out of the grouping rather than printing a line per record."""
    groups: dict[tuple[str, str], list[str]] = {}
    for _, manipulation, why in skipped:
        kind = re.sub(r"'[^']*'", "'…'", why)
        groups.setdefault((manipulation, kind), []).append(why)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [
        f"skipped {len(whys)} for {manipulation}: "
        + (kind if whys[0] == kind else f"{kind} (e.g. {whys[0]})")
        for (manipulation, kind), whys in ordered
    ]


def _build(args: argparse.Namespace, console: Console, default_cache: Path) -> int:
    _check_flags(args)
    manipulations = parse_manipulations(args.manipulation)
    for spec in args.source:
        parse_source(spec)  # every flag checked before any slow work
    if "utterance_removal" in manipulations and not args.model:
        raise UserError("--manipulation utterance_removal needs --model SPEC (the rewriter)")
    for flag, spec in (("--model", args.model), ("--verify-model", args.verify_model)):
        if spec:  # both are sent free-form requests: a floor or 'baseline' cannot answer them
            require(spec, FREE_TEXT, flag)
    cache_dir = args.cache_dir or default_cache
    loaded = [instance for spec in args.source for instance in load_source(spec)]
    ids = Counter(instance.id for instance in loaded)
    dupes = [iid for iid, n in ids.items() if n > 1]
    if dupes:
        raise UserError(f"the sources share instance ids (e.g. '{dupes[0]}'); give each once")
    settings = BuildSettings(
        manipulations=manipulations,
        seed=args.seed,
        model=_model(args, cache_dir) if args.model else None,
        encoder_path=args.encoder,
        cache_dir=cache_dir,
        use_cache=not args.no_cache,
        pool_paths=tuple(args.pool),
        rank=args.rank,
        choose_from=args.choose_from,
        min_similarity=args.min_similarity,
        max_similarity=args.max_similarity,
        similarity_ceiling=args.similarity_ceiling,
        verify_model=_verify_model(args, cache_dir, manipulations),
        removal_kind=args.removal_kind,
        concurrency=args.concurrency,
    )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("building", total=work_units(loaded, settings) or None)
        encoding = EncodingProgress(console, bar)
        settings = dataclasses.replace(settings, encoding_progress=encoding)
        outcome = build(loaded, settings, progress=lambda n: bar.advance(task, n))
    skips = _skip_summary(outcome.skipped)
    labels = Counter(i.label for i in outcome.instances)
    if not labels["incomplete"]:
        for line in skips:
            console.print(line)
        raise UserError(
            f"nothing written to {args.out}: no incomplete instance could be built from "
            f"{len(loaded)} instances loaded, {len(outcome.skipped)} skipped while building "
            "(the loader's and the build's reasons are above); "
            "try another --manipulation or --source"
        )
    written = write_instances(args.out, outcome.instances)
    rejected = sum(1 for i in outcome.instances if i.verification.status == "rejected")
    console.print(
        f"wrote {written} instances to {args.out}: {labels['complete']} complete, "
        f"{labels['incomplete']} incomplete ({rejected} rejected automatically)"
    )
    for line in [*skips, *_check_summary(outcome.checks)]:
        console.print(line)
    if outcome.failed:
        console.print(
            f"[red]{len(outcome.failed)} model calls failed[/red] (first: {outcome.failed[0][1]}); "
            "run the same command again to fill them in"
        )
        return EXIT_INCOMPLETE
    return 0


def _web_only(args: argparse.Namespace, *flags: str) -> None:
    """A flag that --web ignores is refused rather than silently dropped."""
    for flag in flags:
        if getattr(args, flag.lstrip("-").replace("-", "_"), None):
            raise UserError(f"{flag} does nothing with --web (names are typed in the browser)")


def _verify(args: argparse.Namespace, console: Console) -> int:
    if args.web:
        # deferred: --web only; the review site loads Starlette and the annotation web kit
        from toolbench.aware.review.web import serve_review

        _web_only(args, "--reviewer")
        serve_review(
            args.dataset,
            db=args.db,
            only_pending=not args.all,
            host=args.host,
            port=args.port,
            console=console,
        )
        summary = export_decisions(args.dataset, None, db=args.db)
        console.print(f"server stopped; decisions written into {args.dataset}: {summary}")
        return 0
    reviewer = args.reviewer or os.environ.get("TOOLBENCH_REVIEWER") or getpass.getuser()
    terminal.run_review(
        args.dataset, reviewer=reviewer, db=args.db, console=console, only_pending=not args.all
    )
    summary = export_decisions(args.dataset, None, db=args.db)
    console.print(f"decisions written into {args.dataset}: {summary}")
    return 0


def _human_web(args: argparse.Namespace, console: Console) -> int:
    # deferred: --web only; the annotation site loads Starlette and the annotation web kit
    from toolbench.aware.evaluate.human_web import serve_human

    _web_only(args, "--annotator", "--report")
    session = HumanSession(
        dataset=args.dataset,
        db=args.db,
        n=args.n,
        balanced=args.balanced,
        seed=args.seed,
        include_pending=args.include_pending,
    )
    serve_human(session, host=args.host, port=args.port, console=console)
    console.print("server stopped; every answer is saved ('--report' prints the results)")
    return 0


def _export(args: argparse.Namespace, console: Console) -> int:
    summary = export_decisions(args.dataset, args.out, db=args.db)
    console.print(f"decisions written into {args.out or args.dataset}: {summary}")
    return 0


def _stats(args: argparse.Namespace, console: Console) -> int:
    instances = []
    where: dict[str, Path] = {}
    for path in args.datasets:
        for instance in read_instances(path):
            if instance.id in where:
                raise UserError(
                    f"{path}: instance '{instance.id}' is also in {where[instance.id]}; "
                    "give each dataset once"
                )
            where[instance.id] = path
            instances.append(instance)
    if not instances:
        raise UserError(f"{args.datasets[0]}: the dataset is empty")
    render_table1(table1(instances), console)
    return 0
