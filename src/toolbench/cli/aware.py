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
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from toolbench.errors import UserError

EXIT_INCOMPLETE = 3


def add_aware_parser(sub: argparse._SubParsersAction[Any], parser_class: type) -> None:
    aware = sub.add_parser("aware", help="incomplete-condition awareness datasets")
    aware_sub = aware.add_subparsers(dest="aware_command", required=True, parser_class=parser_class)

    build = aware_sub.add_parser("build", help="build a dataset of complete/incomplete pairs")
    build.add_argument(
        "--source",
        action="append",
        required=True,
        help="apibank:PATH | toolbench:PATH | bfcl:PATH | task:NAME (repeat to mix)",
    )
    build.add_argument(
        "--manipulation",
        default="none",
        help="api_replacement, utterance_removal, slot_removal, tool_removal "
        "(comma-separated for several; default none = import as is)",
    )
    build.add_argument("--out", type=Path, required=True, help="dataset file to write (JSONL)")
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--model", help="rewriting model for utterance_removal (any model spec)")
    build.add_argument(
        "--removal-kind",
        choices=("missing_argument", "unclear_request"),
        default="missing_argument",
        help="utterance_removal: a clear request missing an argument, or a request made unclear",
    )
    build.add_argument(
        "--verify-model",
        help="api_replacement: a judge model asked whether an offered API still serves the "
        "request; twins it judges servable are rebuilt from the next-ranked candidate",
    )
    _model_flags(build)
    build.add_argument("--concurrency", type=int, default=4)
    build.add_argument(
        "--encoder", help="sentence-transformers model folder (default all-MiniLM-L6-v2)"
    )
    build.add_argument(
        "--pool",
        type=Path,
        action="append",
        default=[],
        help="extra StableToolBench-shaped file/folder whose APIs join the replacement pool",
    )
    build.add_argument("--rank", type=int, default=1, help="take the R-th most similar API")
    build.add_argument(
        "--choose-from", type=int, default=1, help="pick (seeded) among K ranks from --rank"
    )
    build.add_argument("--min-similarity", type=float)
    build.add_argument("--max-similarity", type=float)
    build.add_argument(
        "--similarity-ceiling",
        type=_ceiling,
        default=0.90,
        help="api_replacement pre-verification: turn down candidates at least this similar "
        "(default 0.90; 'none' turns the check off)",
    )

    verify = aware_sub.add_parser("verify", help="review incomplete instances in the terminal")
    verify.add_argument("dataset", type=Path)
    verify.add_argument("--reviewer", help="your name (default: the login name)")
    verify.add_argument("--db", type=Path, help="decision store (default: <dataset>.review.sqlite)")
    verify.add_argument("--all", action="store_true", help="also show auto-rejected instances")
    _web_flags(verify, 8765, "review in a browser instead (reviewers type their names there)")

    export = aware_sub.add_parser("export", help="write review decisions into the dataset")
    export.add_argument("dataset", type=Path)
    export.add_argument("--out", type=Path, help="write here instead of in place")
    export.add_argument("--db", type=Path)

    stats = aware_sub.add_parser("stats", help="dataset statistics (the paper's Table 1)")
    stats.add_argument("datasets", type=Path, nargs="+")
    add_evaluation_parsers(aware_sub)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text}: a port is 0 to 65535 (0: any free port)")
    return value


def _web_flags(p: argparse.ArgumentParser, port: int, what: str) -> None:
    p.add_argument("--web", action="store_true", help=f"{what}; Ctrl-C stops the server")
    p.add_argument("--port", type=_port, default=port, help="--web: port (0: any free port)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="--web: address to listen on (other machines can reach anything but loopback)",
    )


def _model_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--base-url", help="OpenAI-compatible server for --model openai:NAME")
    p.add_argument("--api-key", help="API key (default: $OPENAI_API_KEY)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the caches")
    p.add_argument("--cache-dir", type=Path, help="response and embedding cache folder")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per model request")
    p.add_argument("--max-retries", type=int, default=6)


def add_evaluation_parsers(aware_sub: argparse._SubParsersAction[Any]) -> None:
    run = aware_sub.add_parser("run", help="evaluate a model on an awareness dataset")
    run.add_argument("dataset", type=Path)
    run.add_argument(
        "--model",
        required=True,
        help="any model spec, or a baseline: always-yes, always-no, random[:SEED], similarity",
    )
    run.add_argument(
        "--mode",
        default="explicit",
        help="explicit, implicit, tools, feedback, explain (comma-separated for several)",
    )
    run.add_argument("--shots", default="0", help="explicit-mode demonstrations, e.g. 0,4")
    run.add_argument("--demos", type=Path, help="dataset to draw demonstrations from")
    run.add_argument("--judge", help="model spec that grades explanations (--mode explain)")
    run.add_argument("--judge-labels", type=Path, help='JSONL of {"id", "correct"} hand labels')
    run.add_argument(
        "--include-pending", action="store_true", help="also evaluate unreviewed instances"
    )
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--max-tokens", type=int, default=256)
    run.add_argument("--temperature", type=float, default=0.0)
    run.add_argument("--limit", type=int, help="only the first N complete/incomplete families")
    run.add_argument("--concurrency", type=int, default=8)
    run.add_argument("--encoder", help="sentence-transformers folder for --model similarity")
    run.add_argument("--out", type=Path, help="run folder (default: a new one under --runs-dir)")
    run.add_argument("--runs-dir", type=Path, default=Path("runs"))
    _model_flags(run)

    prompt = aware_sub.add_parser("prompt", help="show the exact messages a model is sent")
    prompt.add_argument("dataset", type=Path)
    prompt.add_argument("--id", help="instance id (default: the first instance)")
    prompt.add_argument("--mode", default="explicit")
    prompt.add_argument("--shots", default="0")
    prompt.add_argument("--demos", type=Path)
    prompt.add_argument("--seed", type=int, default=0)
    prompt.add_argument("--include-pending", action="store_true")

    human = aware_sub.add_parser("human", help="answer instances yourself: the human baseline")
    human.add_argument("dataset", type=Path)
    human.add_argument("--n", type=int, default=180, help="instances to present (default 180)")
    human.add_argument("--balanced", action="store_true", help="half complete, half incomplete")
    human.add_argument("--annotator", help="your name (default: the login name)")
    human.add_argument("--seed", type=int, default=0)
    human.add_argument("--db", type=Path, help="answer store (default: <dataset>.human.sqlite)")
    human.add_argument("--include-pending", action="store_true")
    human.add_argument("--report", action="store_true", help="only print the results so far")
    _web_flags(human, 8766, "ask in a browser instead (annotators type their names there)")


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
        from toolbench.cli.aware_eval import command_aware_eval

        return command_aware_eval(args, console, default_cache)
    return _stats(args, console)


def _model(args: argparse.Namespace, cache_dir: Path) -> Any:
    from toolbench.cli.run import model_options
    from toolbench.models.spec import make_model

    return make_model(args.model, model_options(args, cache_dir))


def _verify_model(args: argparse.Namespace, cache_dir: Path, manipulations: Any) -> Any:
    if not args.verify_model:
        return None
    if "api_replacement" not in manipulations:
        raise UserError("--verify-model judges api_replacement twins; add that --manipulation")
    from toolbench.cli.run import model_options
    from toolbench.models.spec import make_model

    return make_model(args.verify_model, model_options(args, cache_dir))


def _ceiling(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number or none") from None
    if not -1.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text}: a cosine similarity is between -1 and 1")
    return value


def _check_summary(checks: Any) -> list[str]:
    """One line per pre-verification check that turned a candidate down (see
    ``replacement_checks``): how many candidates, and how many twins took a lower-ranked one."""
    return [
        f"pre-verification {name}: turned down {checks.candidates[name]} candidates; "
        f"{checks.twins[name]} twins took the next-ranked candidate that passed"
        for name in sorted(checks.candidates, key=lambda n: -checks.candidates[n])
    ]


def _check_flags(args: argparse.Namespace) -> None:
    from toolbench.aware.manipulate.api_replacement import ReplacementOptions

    # The replacement options check themselves; building them here fails before slow work.
    ReplacementOptions(
        seed=args.seed,
        rank=args.rank,
        choose_from=args.choose_from,
        min_similarity=args.min_similarity,
        max_similarity=args.max_similarity,
    )
    if args.concurrency < 1:
        raise UserError(f"--concurrency {args.concurrency}: must be 1 or more")
    if args.out.exists() and args.out.is_dir():
        raise UserError(f"--out {args.out}: is a folder; give a file name such as aware.jsonl")


class RateColumn(ProgressColumn):
    """Items per second, once rich has measured a rate."""

    def render(self, task: Any) -> Text:
        return Text(f"{task.speed:.0f}/s" if task.speed else "")


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
    from toolbench.aware.build import (
        BuildSettings,
        build,
        load_source,
        parse_manipulations,
        parse_source,
        work_units,
    )
    from toolbench.aware.schema import write_instances

    _check_flags(args)
    manipulations = parse_manipulations(args.manipulation)
    for spec in args.source:
        parse_source(spec)  # every flag checked before any slow work
    if "utterance_removal" in manipulations and not args.model:
        raise UserError("--manipulation utterance_removal needs --model SPEC (the rewriter)")
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
    from toolbench.aware.review.export import export_decisions
    from toolbench.aware.review.terminal import run_review

    if args.web:
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
    run_review(
        args.dataset, reviewer=reviewer, db=args.db, console=console, only_pending=not args.all
    )
    summary = export_decisions(args.dataset, None, db=args.db)
    console.print(f"decisions written into {args.dataset}: {summary}")
    return 0


def _human_web(args: argparse.Namespace, console: Console) -> int:
    from toolbench.aware.evaluate.human import HumanSession
    from toolbench.aware.evaluate.human_web import serve_human

    _web_only(args, "--annotator", "--report")
    if args.n < 1:
        raise UserError(f"--n {args.n}: must be 1 or more")
    if not args.dataset.is_file():
        raise UserError(f"dataset {args.dataset}: no such file")
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
    from toolbench.aware.review.export import export_decisions

    summary = export_decisions(args.dataset, args.out, db=args.db)
    console.print(f"decisions written into {args.out or args.dataset}: {summary}")
    return 0


def _stats(args: argparse.Namespace, console: Console) -> int:
    from toolbench.aware.schema import read_instances
    from toolbench.aware.stats import render_table1, table1

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
