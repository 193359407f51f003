"""``toolbench show RUN``: one sample at a time, as a person debugging a failure wants it:
query, prompt, prediction, closest gold, a per-key diff of the two world states, the message,
and for multi-step samples each model call and what the world answered.

Records hold no query, gold or prompt text (see ``report/golds.py``): they are recovered from
the task data the run names. Everything printed from a record is model-made text, so control
characters (terminal escape sequences) are shown escaped, never sent to the terminal.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from rich.console import Console

from toolbench.errors import UserError
from toolbench.report import diff, golds
from toolbench.report.summary import id_order, load_runs

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
MAX_SHOWN_CHARS = 20_000
# An agent's stderr tail: at most this many lines, each cut at this many characters.
STDERR_LINES = 20
MAX_STDERR_LINE = 300


def clean(text: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """Model text made safe for a terminal: controls escaped, length bounded."""
    text = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[:limit] + f"… ({len(text) - limit} more characters)"
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _select(run: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    records = run.records
    if args.task is not None:
        if args.task not in run.by_task:
            raise UserError(
                f"--task {args.task}: no such task in {run.folder} "
                f"(it has {', '.join(sorted(run.by_task))})"
            )
        records = run.by_task[args.task]
    if args.sample_id is not None:
        records = [r for r in records if str(r["id"]) == args.sample_id]
        if not records:
            raise UserError(
                f"--id {args.sample_id}: no such sample in {run.folder}"
                + (f" for task {args.task}" if args.task else "")
                + "; `toolbench show RUN --limit 0` lists them all"
            )
    if args.epoch is not None:
        records = [r for r in records if r["epoch"] == args.epoch]
    if args.failed:
        records = [r for r in records if r["status"] != "infra_error" and not r.get("success")]
    return sorted(records, key=lambda r: (r["task"], _id_key(str(r["id"])), r["epoch"]))


def _id_key(key: str) -> tuple[int, int, str]:
    return id_order(key)


def command_show(args: argparse.Namespace, console: Console, cache_dir: Path) -> int:
    if args.limit < 0:
        raise UserError(f"--limit {args.limit}: must be 0 (all) or more")
    run = load_runs([args.run], args.allow_modified)[0]
    status = run.status
    console.print(status.line(), style="dim" if status.finished else "bold yellow",
                  markup=False, soft_wrap=True)  # fmt: skip
    records = _select(run, args)
    if not records:
        console.out("no sample matches", highlight=False)
        return 0
    shown = records if args.limit == 0 else records[: args.limit]
    sources: dict[str, golds.TaskSource] = {}
    for task in dict.fromkeys(r["task"] for r in shown):
        source = golds.load_source(run, task, cache_dir)
        stateful = [r for r in shown if r["task"] == task and _has_state(r)]
        if stateful and not source.problem:
            golds.execute_golds(source, [str(r["id"]) for r in stateful])
        sources[task] = source
    for record in shown:
        _print_record(record, sources[record["task"]], console, not args.no_prompt)
    if len(shown) < len(records):
        console.out(
            f"... {len(records) - len(shown)} more; narrow with --task/--id or raise --limit",
            highlight=False,
        )
    return 0


def _has_state(record: dict[str, Any]) -> bool:
    details = record.get("details")
    return isinstance(details, dict) and isinstance(details.get("state"), dict)


def _section(console: Console, title: str, body: str = "") -> None:
    console.rule(clean(title, 200), style="dim")
    if body:
        console.out(body, highlight=False)


def _print_record(record: dict[str, Any], source: Any, console: Console, with_prompt: bool) -> None:
    sample_id = str(record["id"])
    status = record["status"] + (
        ""
        if record["status"] == "infra_error"
        else (", success" if record.get("success") else ", failed")
    )
    console.rule(clean(f"{record['task']} #{sample_id} epoch {record['epoch']}: {status}", 300))
    view = golds.view_of(source, sample_id, record)
    for note in (source.problem, source.warning):
        if note:
            console.out(clean(f"note: {note}"), highlight=False)
    if view is not None:
        _section(console, "query", clean(view.query))
        if with_prompt:
            said = {
                True: "rebuilt; matches the record's prompt hash",
                False: "rebuilt; DIFFERS from what the model was shown (hash mismatch)",
                None: "rebuilt",
            }
            _section(console, f"prompt ({said[view.prompt_matches]})", clean(view.prompt))
    _section(console, "prediction", clean(record.get("prediction") or "(none)"))
    if record.get("message"):
        _section(console, "message", clean(record["message"]))
    console.out(clean(numbers_line(record)), highlight=False)
    _print_stderr(record, console)
    if view is not None:
        _print_gold(record, view, console)
    _print_steps(record, console)


def numbers_line(record: dict[str, Any]) -> str:
    """``success 0, f1 0.667; tokens 812 in / 40 out; latency 207.9 s``: the parts the record
    holds. Tokens a model did not report (both 0 or absent) and an unknown latency are left
    out, not printed as ``0`` or ``None``."""
    found = record.get("metrics")
    metrics: dict[str, Any] = found if isinstance(found, dict) else {}
    parts = [
        ", ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items()
        )
    ]
    prompt, completion = record.get("prompt_tokens"), record.get("completion_tokens")
    if _positive(prompt) or _positive(completion):
        parts.append(f"tokens {prompt or 0} in / {completion or 0} out")
    latency = record.get("latency_s")
    if isinstance(latency, int | float) and _positive(latency):
        parts.append(f"latency {seconds_text(float(latency))}")
    return "; ".join(part for part in parts if part) or "(no metrics recorded)"


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def seconds_text(seconds: float) -> str:
    """``207.9 s``, ``3.2 s``, ``45 ms``: rounded to what a person compares."""
    return f"{seconds:.1f} s" if seconds >= 1 else f"{seconds * 1000:.0f} ms"


def stderr_tail(record: dict[str, Any], lines: int = STDERR_LINES) -> tuple[list[str], int]:
    """The last ``lines`` non-empty lines of an agent's stderr (``details.agent.stderr_tail``,
    kept by the run when an agent failed) and how many earlier lines were left out."""
    details = record.get("details")
    agent = details.get("agent") if isinstance(details, dict) else None
    tail = agent.get("stderr_tail") if isinstance(agent, dict) else None
    if not isinstance(tail, str):
        return [], 0
    kept = [line for line in tail.splitlines() if line.strip()]
    return kept[-lines:], max(0, len(kept) - lines)


def _print_stderr(record: dict[str, Any], console: Console) -> None:
    """Why an agent failed is usually in its last words on stderr: shown, bounded."""
    lines, earlier = stderr_tail(record)
    if not lines:
        return
    title = f"agent stderr (last {len(lines)} lines" + (
        f", {earlier} earlier left out)" if earlier else ")"
    )
    _section(console, title, "\n".join(clean(line, MAX_STDERR_LINE) for line in lines))


def _print_gold(record: dict[str, Any], view: Any, console: Console) -> None:
    index = golds.closest_label(record, view.labels)
    if index is None:
        return
    _section(
        console,
        f"closest gold (label {index + 1} of {len(view.labels)})",
        clean(view.labels[index]),
    )
    predicted = golds.state_of((record.get("details") or {}).get("state"))
    gold_state = golds.state_of(view.gold_states[index]) if view.gold_states else None
    if predicted is not None and gold_state is not None:
        rows = diff.state_diff(predicted, gold_state)
        lines = [
            f"{'=' if r['kind'] == 'same' else '!'} {r['key']}: {r['kind']}"
            + (
                ""
                if r["kind"] == "same"
                else f"  predicted {r['predicted'] or '-'}  gold {r['gold'] or '-'}"
            )
            for r in rows
        ]
        _section(console, f"world state diff ({diff.summary_line(rows)})", clean("\n".join(lines)))
    else:
        lines = [
            f"{tag} {line}"
            for tag, line in diff.text_diff(str(record.get("prediction") or ""), view.labels[index])
        ]
        _section(console, "diff (- gold, + prediction)", clean("\n".join(lines)))


def _print_steps(record: dict[str, Any], console: Console) -> None:
    calls = golds.as_list(record.get("calls"))
    trace = golds.as_list(record.get("trace"))
    if (
        len(calls) <= 1
        and not trace
        and not any(isinstance(c, dict) and c.get("tool_calls") for c in calls)
    ):
        return
    for number, call in enumerate(calls[:200], start=1):
        if not isinstance(call, dict):
            continue
        role = "" if call.get("role", "model") == "model" else f" ({call.get('role')})"
        body = clean(call.get("text") or "")
        if call.get("tool_calls"):
            body += "\ntool calls: " + clean(call["tool_calls"], 4000)
        _section(console, f"call {number}{role}: {call.get('step', '?')}", body)
    for number, step in enumerate(trace[:200], start=1):
        _section(console, f"trace {number}", clean(step, 4000))
