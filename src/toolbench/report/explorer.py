"""The sample explorer's data: the records of every run's samples (per sample its first epochs
and its first failure: ``Shown``) with what a person needs to judge them
(query, prompt, prediction, closest gold and a diff, message, metrics, tokens, latency, steps,
before/after images), as one gzip-compressed, base64-encoded JSON document.

Why compressed: prompts repeat the same API docs and demonstrations, so 5 runs x 1,000 samples
of raw text is tens of megabytes but a few after deflate; base64 is also the safest payload
there is inside ``<script>``: its alphabet holds no ``<``, quote or ``&``. The page inflates it
with the browser's own ``DecompressionStream`` and renders every string as text.

Long texts (prompts, queries, gold programs) are interned: each distinct text is stored once
and records point at it, so runs of one configuration share their prompts.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbench.report import diff, golds
from toolbench.report.summary import LoadedRun, id_order
from toolbench.runner.store import iter_records

MAX_TEXT = 20_000
# Per sample, the explorer embeds the records of its first epochs and of its first failure.
EPOCHS_SHOWN = 3
MAX_MESSAGE = 2_000
MAX_CALLS = 50
MAX_IMAGE_BYTES = 2_000_000
IMAGE_TYPES = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}


def _cut(value: Any, limit: int = MAX_TEXT) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


class Texts:
    """Each distinct long text once; records hold its index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def add(self, text: str) -> int:
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(text)
        return self._index[text]


def embed_image(folder: Path, reference: Any) -> tuple[str | None, str]:
    """(data URI, problem) for an image a record names relative to its run folder. Only
    files inside the folder, of a known raster type and bounded size, are embedded."""
    if (
        not isinstance(reference, str)
        or not reference
        or len(reference) > 500
        or "\x00" in reference  # the OS cannot name it (Path.resolve raises)
    ):
        return None, "not a relative path"
    relative = Path(reference)
    if relative.is_absolute() or ".." in relative.parts:
        return None, f"{reference[:100]}: outside the run folder"
    root = folder.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root):
        return None, f"{reference[:100]}: outside the run folder"
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        return None, f"{reference[:100]}: {exc.strerror or 'unreadable'}"
    if len(data) > MAX_IMAGE_BYTES:
        return None, f"{reference[:100]}: larger than {MAX_IMAGE_BYTES // 1_000_000} MB"
    mime = next((m for magic, m in IMAGE_TYPES.items() if data.startswith(magic)), None)
    if mime is None:
        return None, f"{reference[:100]}: not a PNG, JPEG or GIF image"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}", ""


def _images(run: LoadedRun, record: dict[str, Any]) -> dict[str, str]:
    """``images: {"before": path, "after": path}`` on the record (or in its details)."""
    details = record.get("details") if isinstance(record.get("details"), dict) else {}
    raw = record.get("images", details.get("images") if details else None)
    if not isinstance(raw, dict):
        return {}
    out = {}
    for name, reference in list(raw.items())[:8]:
        uri, problem = embed_image(run.folder, reference)
        out[_cut(name, 40)] = uri if uri is not None else "!" + problem
    return out


def _steps(record: dict[str, Any]) -> dict[str, Any]:
    """Each model call and the trace, for samples with more than one step or tool calls."""
    calls = golds.as_list(record.get("calls"))
    trace = golds.as_list(record.get("trace"))
    tools = any(isinstance(c, dict) and c.get("tool_calls") for c in calls)
    if len(calls) <= 1 and not trace and not tools:
        return {}
    shown = []
    for call in calls[:MAX_CALLS]:
        if isinstance(call, dict):
            entry = {"step": _cut(call.get("step", "?"), 200), "text": _cut(call.get("text") or "")}
            if call.get("tool_calls"):
                entry["tools"] = _cut(call["tool_calls"], 4000)
            if call.get("role") not in (None, "model"):
                entry["role"] = _cut(call["role"], 40)
            shown.append(entry)
    return {"calls": shown, "trace": [_cut(step, 4000) for step in trace[:MAX_CALLS]]}


def _diff(record: dict[str, Any], view: golds.SampleView, index: int) -> dict[str, Any]:
    predicted = golds.state_of((record.get("details") or {}).get("state"))
    gold = golds.state_of(view.gold_states[index]) if view.gold_states else None
    if predicted is not None and gold is not None:
        rows = diff.state_diff(predicted, gold)
        return {"kind": "state", "summary": diff.summary_line(rows), "rows": rows}
    lines = diff.text_diff(str(record.get("prediction") or ""), view.labels[index])
    return {"kind": "text", "lines": lines}


class SourceCache:
    """Task data loaded once per (task, data, prompt settings), shared by runs that match."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.cache_dir = cache_dir
        self._sources: dict[tuple[str, str], golds.TaskSource] = {}
        self._stateful: dict[tuple[str, str], set[str]] = defaultdict(set)

    @staticmethod
    def key(run: LoadedRun, task: str) -> tuple[str, str]:
        config = golds.as_dict(run.info.get("config"))
        wanted = ("version", "data_dir", "mode", "retriever", "top_k_api", "top_k_example")
        return task, json.dumps([config.get(k) for k in wanted], default=str)

    def get(self, run: LoadedRun, task: str) -> golds.TaskSource:
        key = self.key(run, task)
        if key not in self._sources:
            self._sources[key] = golds.load_source(run, task, self.cache_dir)
        return self._sources[key]

    def want_states(self, runs: Sequence[LoadedRun], shown: Sequence[list[Any]]) -> None:
        """Execute the golds of every shown sample whose record holds a world state, once
        each (``shown``: per run, the records the explorer embeds)."""
        for run, records in zip(runs, shown, strict=True):
            for r in records:
                details = r.get("details")
                if isinstance(details, dict) and isinstance(details.get("state"), dict):
                    self._stateful[self.key(run, r["task"])].add(str(r["id"]))
                    self.get(run, r["task"])
        for key, ids in self._stateful.items():
            source = self._sources[key]
            if not source.problem:
                golds.execute_golds(source, sorted(ids))


class Shown:
    """The records of one sample the explorer embeds, chosen as the log streams by: its
    first ``EPOCHS_SHOWN`` epochs and its first failure (by epoch), with how many epochs it
    has of each status. A run of 10,000 epochs shows 4 records per sample, not 10,000."""

    __slots__ = ("counts", "failure", "first", "successes")

    def __init__(self) -> None:
        self.first: list[dict[str, Any]] = []  # the lowest epochs, sorted
        self.failure: dict[str, Any] | None = None
        self.counts = {"scored": 0, "model_error": 0, "infra_error": 0}
        self.successes = 0

    def add(self, r: dict[str, Any]) -> None:
        self.counts[r["status"]] = self.counts.get(r["status"], 0) + 1
        self.successes += bool(r.get("success"))
        failed = r["status"] != "infra_error" and not r.get("success")
        if failed and (self.failure is None or r["epoch"] < self.failure["epoch"]):
            self.failure = r
        if len(self.first) < EPOCHS_SHOWN or r["epoch"] < self.first[-1]["epoch"]:
            self.first.append(r)
            self.first.sort(key=lambda x: x["epoch"])
            del self.first[EPOCHS_SHOWN:]

    def records(self) -> list[dict[str, Any]]:
        out = list(self.first)
        if self.failure is not None and all(r is not self.failure for r in out):
            out.append(self.failure)
        return sorted(out, key=lambda r: r["epoch"])

    def note(self) -> str | None:
        """What was left out, for a sample with more epochs than are shown (None: all)."""
        total = sum(self.counts.values())
        shown = self.records()
        if total <= len(shown):
            return None
        c = self.counts
        return (
            f"{total} epochs ({c['scored']} scored, {c['model_error']} model errors, "
            f"{c['infra_error']} infra errors; {self.successes} succeeded); shown: epochs "
            + ", ".join(str(r["epoch"]) for r in shown)
            + " (the first ones and the first failure)"
        )


def shown_records(run: LoadedRun) -> tuple[list[dict[str, Any]], dict[tuple[str, str], str]]:
    """The records of ``run`` the explorer embeds, in (task, id, epoch) order, and the note of
    each sample with epochs left out; read from the log again as it streams."""
    samples: dict[tuple[str, str], Shown] = {}
    for r in iter_records(run.folder):
        key = (r["task"], str(r["id"]))
        entry = samples.get(key)
        if entry is None:
            entry = samples[key] = Shown()
        entry.add(r)
    records, notes = [], {}
    for key in sorted(samples, key=lambda k: (k[0], id_order(k[1]))):
        records += samples[key].records()
        note = samples[key].note()
        if note is not None:
            notes[key] = note
    return records, notes


def _record(
    index: int, run: LoadedRun, r: dict[str, Any], source: golds.TaskSource, texts: Texts
) -> dict[str, Any]:
    metrics = golds.as_dict(r.get("metrics"))
    entry: dict[str, Any] = {
        "r": index,
        "t": r["task"],
        "i": _cut(str(r["id"]), 200),
        "e": r["epoch"],
        "s": r["status"],
        "ok": r.get("success"),
        "m": {
            _cut(k, 60): (round(v, 4) if isinstance(v, float) else v) for k, v in metrics.items()
        },
        "msg": _cut(r.get("message") or "", MAX_MESSAGE),
        "pred": _cut(r.get("prediction") or ""),
        "tok": [r.get("prompt_tokens") or 0, r.get("completion_tokens") or 0],
        "lat": r.get("latency_s") or 0,
        **_steps(r),
    }
    images = _images(run, r)
    if images:
        entry["img"] = images
    view = golds.view_of(source, str(r["id"]), r)
    if view is None:
        entry["note"] = source.problem or "this sample is not in the task data any more"
        if r.get("details"):
            entry["det"] = _cut(r["details"], 4000)
        return entry
    entry["q"], entry["p"] = texts.add(_cut(view.query)), texts.add(_cut(view.prompt, 60_000))
    entry["pm"] = view.prompt_matches
    entry["g"] = [texts.add(_cut(label)) for label in view.labels[:10]]
    label = golds.closest_label(r, view.labels)
    if label is not None and label < 10:
        entry["gl"] = label
        if not r.get("success"):
            entry["d"] = _diff(r, view, label)
    if source.warning:
        entry["note"] = source.warning
    return entry


def explorer_data(runs: Sequence[LoadedRun], cache_dir: Path | None) -> dict[str, Any]:
    """Per run, per sample, the records ``Shown`` keeps (every record of a run of up to
    ``EPOCHS_SHOWN`` epochs); a sample with epochs left out says so in its note."""
    sources = SourceCache(cache_dir)
    chosen = [shown_records(run) for run in runs]
    sources.want_states(runs, [records for records, _ in chosen])
    texts = Texts()
    records = []
    for index, (run, (shown, notes)) in enumerate(zip(runs, chosen, strict=True)):
        for r in shown:
            entry = _record(index, run, r, sources.get(run, r["task"]), texts)
            note = notes.get((r["task"], str(r["id"])))
            if note is not None:
                entry["note"] = f"{note}. {entry['note']}" if entry.get("note") else note
            records.append(entry)
    return {"records": records, "texts": texts.items}


def pack(data: Any) -> str:
    """JSON, gzip, base64: compact, and inert inside ``<script>``."""
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(raw.encode("utf-8"), mtime=0)).decode("ascii")
