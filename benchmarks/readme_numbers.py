"""The docs' measured numbers, regenerated: the built-in models' scores and the HTML page sizes.

Runs ``toolbench run`` (in this process, through the CLI) with the built-in models ``oracle``
and ``baseline`` on every built-in tool task's full v0 test set (one epoch, no response
cache), reads the scores with ``toolbench report --json`` (means and 95% bootstrap
intervals, seeded per task, so the numbers are deterministic), and writes the HTML report of
those runs to measure its size. The numbers go to ``benchmarks/readme_numbers.json``; the
sections between ``<!-- readme-numbers:NAME:begin -->`` and ``<!-- readme-numbers:NAME:end -->``
of the pages in ``DOCS`` (the scores in docs/tasks.md, the page sizes in docs/reports.md; they
were the README's before the manual moved to docs/, hence the name) are rendered from that file.

    python benchmarks/readme_numbers.py            # measure, write the JSON, rewrite the docs
    python benchmarks/readme_numbers.py --check    # measure, compare; exit 1 on a difference
    python benchmarks/readme_numbers.py --render   # no runs: the docs from the JSON as it is
    python benchmarks/readme_numbers.py --no-pages # the scores only; the page sizes kept
    python benchmarks/readme_numbers.py --check --tasks home_search --no-pages   # a subset

``--check`` writes nothing: it lists every measured number that differs from the JSON and
every marked section that differs from what the JSON renders. Scores must be equal to the
digits shown (three decimals); page sizes within 10% (a page holds paths and times). A whole
regeneration takes about a minute on 2 cores (the runs ~35 s, the pages ~20 s);
``tests/test_readme_numbers.py`` checks the docs against the JSON and re-measures two tasks.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from toolbench.cli import main as toolbench_main  # noqa: E402
from toolbench.tasks import registry  # noqa: E402

NUMBERS = ROOT / "benchmarks" / "readme_numbers.json"
#: The pages holding the marked sections (every renderer's section is in one of them).
DOCS = (ROOT / "docs" / "tasks.md", ROOT / "docs" / "reports.md")
MODELS = ("oracle", "baseline")
#: Every built-in tool task, in the registry's order ("aware" is the awareness evaluation).
TASKS = tuple(name for name in registry.BUILTIN if name != "aware")
#: Metrics left out of the table: F1 sums them up; ``toolbench report`` shows them.
LEFT_OUT = {"precision", "recall"}
#: How far a page's size may move before --check calls it changed.
PAGE_TOLERANCE = 0.10
#: The pages measured: name -> (model runs in it, tasks of its runs).
PAGES = {
    "baseline": (("baseline",), TASKS),
    "oracle+baseline": (("oracle", "baseline"), TASKS),
    "baseline tabletop": (("baseline",), ("tabletop",)),
}


def toolbench(*args: str) -> str:
    """Run the toolbench CLI in this process; its stdout. A non-zero exit is an error."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = toolbench_main(list(args))
    if code != 0:
        raise SystemExit(f"toolbench {' '.join(args)} exited {code}")
    return out.getvalue()


def _run(root: Path, model: str, tasks: tuple[str, ...]) -> Path:
    out = root / f"{model}-{'+'.join(tasks) if len(tasks) < len(TASKS) else 'all'}"
    if not (out / "run.json").exists():
        cache = str(root / "cache")
        toolbench("run", ",".join(tasks), "--model", model, "--no-cache", "--cache-dir", cache,
                  "--out", str(out))  # fmt: skip
    return out


def _scores(folder: Path) -> dict[str, Any]:
    report = json.loads(toolbench("report", str(folder), "--json"))
    (by_task,) = report["runs"].values()
    scores = {}
    for task, entry in by_task.items():
        counts = entry["counts"]
        metrics = {
            name: {key: round(value[key], 6) for key in ("mean", "low", "high")}
            for name, value in entry.items()
            if name != "counts"
        }
        scores[task] = {
            "samples": counts["scored"] + counts["model_error"] + counts["infra_error"],
            "model_errors": counts["model_error"],
            "infra_errors": counts["infra_error"],
            "metrics": metrics,
        }
    return scores


def measure(
    tasks: tuple[str, ...] = TASKS,
    models: tuple[str, ...] = MODELS,
    root: Path | None = None,
    *,
    pages: bool = True,
) -> dict[str, Any]:
    """Run ``models`` on ``tasks`` (under ``root``, a temporary folder by default) and
    measure; the numbers in the JSON file's shape."""
    root = root or Path(tempfile.mkdtemp(prefix="tb-readme-numbers-"))
    root.mkdir(parents=True, exist_ok=True)
    numbers: dict[str, Any] = {"data_version": "v0", "epochs": 1, "scores": {}}
    for model in models:
        start = time.perf_counter()
        folder = _run(root, model, tasks)
        numbers["scores"][model] = _scores(folder)
        print(
            f"{model}: {len(tasks)} tasks in {time.perf_counter() - start:.1f} s", file=sys.stderr
        )
    if pages:
        numbers["html_pages"] = {}
        for name, (page_models, page_tasks) in PAGES.items():
            start = time.perf_counter()
            folders = [_run(root, model, page_tasks) for model in page_models]
            page = root / f"{name.replace(' ', '-')}.html"
            toolbench("report", *map(str, folders), "--html", str(page))
            records = sum(
                len((folder / "samples.jsonl").read_text().splitlines()) for folder in folders
            )
            numbers["html_pages"][name] = {"records": records, "bytes": page.stat().st_size}
            print(f"page {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return numbers


# --------------------------------------------------------------------------- rendering


def _value(metric: dict[str, float]) -> str:
    mean, low, high = (f"{metric[key]:.3f}" for key in ("mean", "low", "high"))
    return mean if low == high == mean else f"{mean} [{low}, {high}]"


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def render_scores(numbers: dict[str, Any]) -> str:
    scores = numbers["scores"]
    models = list(scores)
    lines = [
        "| task | metric | " + " | ".join(f"`{m}`" for m in models) + " |",
        "|---|---|" + "---|" * len(models),
    ]
    for task in TASKS:
        entries = [scores[m].get(task) for m in models]
        if not any(entries):
            continue
        first = next(e for e in entries if e)
        names = [name for name in first["metrics"] if name not in LEFT_OUT]
        for number, name in enumerate(names):
            label = f"`{task}` ({first['samples']})" if number == 0 else ""
            cells = [_value(e["metrics"][name]) if e else "-" for e in entries]
            lines.append(f"| {label} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_pages(numbers: dict[str, Any]) -> str:
    pages = numbers["html_pages"]
    one, both, tabletop = (pages[n] for n in ("baseline", "oracle+baseline", "baseline tabletop"))
    return (
        f"One run of every task ({one['records']:,} records) makes a {_mb(one['bytes'])} page, "
        f"most of it tabletop's before/after pictures (a page of the {tabletop['records']} "
        f"tabletop records alone is {_mb(tabletop['bytes'])}); the oracle's and the baseline's "
        f"runs together ({both['records']:,} records) make {_mb(both['bytes'])}"
    )


RENDERERS = {"scores": render_scores, "html-pages": render_pages}
_SECTION = re.compile(
    r"(<!-- readme-numbers:(?P<name>[\w-]+):begin -->)(?P<body>.*?)"
    r"(<!-- readme-numbers:(?P=name):end -->)",
    re.DOTALL,
)


def sections(text: str) -> dict[str, str]:
    """The marked sections of ``text``: name -> content, without surrounding newlines."""
    return {m["name"]: m["body"].strip("\n") for m in _SECTION.finditer(text)}


def rewrite(text: str, numbers: dict[str, Any]) -> str:
    """``text`` with every marked section rendered from ``numbers`` (a section on lines of
    its own stays so; one inside a paragraph stays inline)."""

    def fill(match: re.Match[str]) -> str:
        body = RENDERERS[match["name"]](numbers)
        if match["body"].startswith("\n"):
            body = f"\n{body}\n"
        return match.group(1) + body + match.group(4)

    return _SECTION.sub(fill, text)


# --------------------------------------------------------------------------- comparing


def differences(measured: dict[str, Any], committed: dict[str, Any]) -> list[str]:
    """What ``measured`` (possibly a subset) says that ``committed`` does not, one line each."""
    found = []
    for model, by_task in measured["scores"].items():
        for task, entry in by_task.items():
            known = committed["scores"].get(model, {}).get(task)
            if known is None:
                found.append(f"{model} {task}: not in {NUMBERS.name}")
                continue
            for key in ("samples", "model_errors", "infra_errors"):
                if entry[key] != known[key]:
                    found.append(f"{model} {task} {key}: {entry[key]} (was {known[key]})")
            for name in sorted(set(entry["metrics"]) | set(known["metrics"])):
                now, was = entry["metrics"].get(name), known["metrics"].get(name)
                shown = _value(now) if now else "-", _value(was) if was else "-"
                if shown[0] != shown[1]:
                    found.append(f"{model} {task} {name}: {shown[0]} (was {shown[1]})")
    for name, page in measured.get("html_pages", {}).items():
        known = committed.get("html_pages", {}).get(name)
        if known is None or abs(page["bytes"] - known["bytes"]) > PAGE_TOLERANCE * known["bytes"]:
            was = _mb(known["bytes"]) if known else "-"
            found.append(f"page {name}: {_mb(page['bytes'])} (was {was})")
    return found


def stale_sections(numbers: dict[str, Any], files: tuple[Path, ...] = DOCS) -> list[str]:
    """The marked sections of ``files`` that differ from what ``numbers`` renders."""
    found = []
    for file in files:
        text = file.read_text(encoding="utf-8")
        want = sections(rewrite(text, numbers))
        for name, body in sections(text).items():
            if body != want[name]:
                found.append(
                    f"{file.relative_to(ROOT)}: section {name} differs from {NUMBERS.name}"
                )
    return found


def dump(numbers: dict[str, Any]) -> str:
    """The JSON file's text: one line per metric."""
    text = json.dumps(numbers, indent=1)
    one_line = r'\{\n\s*"mean": ([^,]+),\n\s*"low": ([^,]+),\n\s*"high": ([^\n]+)\n\s*\}'
    return re.sub(one_line, r'{"mean": \1, "low": \2, "high": \3}', text) + "\n"


def load() -> dict[str, Any]:
    return json.loads(NUMBERS.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="compare, write nothing")
    mode.add_argument("--render", action="store_true", help="no runs: the docs from the JSON")
    parser.add_argument("--tasks", help="comma-separated subset of the tasks (with --check)")
    parser.add_argument("--models", help="comma-separated subset of oracle,baseline")
    parser.add_argument(
        "--no-pages",
        action="store_true",
        help="do not measure the HTML pages (when writing: keep the JSON's page sizes)",
    )
    parser.add_argument("--keep", type=Path, help="make the runs here and keep them")
    args = parser.parse_args(argv)
    tasks = tuple(args.tasks.split(",")) if args.tasks else TASKS
    models = tuple(args.models.split(",")) if args.models else MODELS
    if (tasks != TASKS or models != MODELS) and not args.check:
        parser.error("--tasks and --models measure a part: use them with --check")
    if args.render:
        numbers = load()
    else:
        start = time.perf_counter()
        numbers = measure(tasks, models, args.keep, pages=not args.no_pages)
        print(f"measured in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if args.check:
        problems = differences(numbers, load()) + stale_sections(load())
        for line in problems:
            print(line)
        if problems:
            print("regenerate with: python benchmarks/readme_numbers.py")
        return 1 if problems else 0
    if not args.render:
        if args.no_pages:  # the scores remeasured, the pages as they were
            numbers["html_pages"] = load()["html_pages"]
        NUMBERS.write_text(dump(numbers), encoding="utf-8")
    for page in DOCS:
        page.write_text(rewrite(page.read_text(encoding="utf-8"), numbers), encoding="utf-8")
    names = ", ".join(str(page.relative_to(ROOT)) for page in DOCS)
    print(f"wrote {NUMBERS.relative_to(ROOT)} and the marked sections of {names}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
