"""The human baseline (``toolbench aware human``): sampling, the answer store, the key loop
(in process and as piped subprocesses, two annotators at once) and the Table-5 results."""

from __future__ import annotations

import io
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from toolbench.aware.evaluate.human import (
    AnswerStore,
    HumanSession,
    default_db_path,
    draw_sample,
)
from toolbench.aware.evaluate.metrics import METRICS
from toolbench.aware.evaluate.prompts import EXPLICIT_SYSTEM, explicit_user_message
from toolbench.aware.schema import (
    ApiSpec,
    Instance,
    Provenance,
    Replacement,
    Turn,
    Verification,
    read_instances,
    write_instances,
)
from toolbench.errors import UserError

CliResult = tuple[int, str, str]

WEATHER = ApiSpec(name="GetWeather", description="Current weather for a city on a day.")
HOTEL = ApiSpec(name="BookHotel", description="Book a hotel room for given dates.")
AIR = ApiSpec(name="GetAirQuality", description="Air quality index of a city.")
CITIES = [
    "Paris",
    "Oslo",
    "Lima",
    "Rome",
    "Cairo",
    "Quito",
    "Perth",
    "Dakar",
    "Hanoi",
    "Riga",
    "Bern",
]

# Words that only labels, manipulations or provenance carry: an annotator must never see them.
SECRET_WORDS = (
    "incomplete",
    "complete",
    "api_replacement",
    "utterance_removal",
    "replacement",
    "removal",
    "manipulat",
    "twin",
    "provenance",
    "sourceorig",
    "generator-x",
    "inst-",
    "similarity",
    "accepted",
    "pending",
)


def base(k: int) -> Instance:
    return Instance(
        id=f"inst-{k:02d}",
        source="apibank",
        dialogue=[Turn(role="user", content=f"What is the weather in {CITIES[k]} on day {k}?")],
        apis=[WEATHER, HOTEL],
        relevant_apis=["GetWeather"],
        label="complete",
        provenance=Provenance(original_id=f"sourceorig{k}", generator="generator-x"),
        verification=Verification(status="accepted", by="source"),
    )


def swapped(k: int, status: str = "accepted") -> Instance:
    return Instance(
        id=f"inst-{k:02d}~api_replacement",
        source="apibank",
        dialogue=base(k).dialogue,
        apis=[AIR, HOTEL],
        label="incomplete",
        manipulation="api_replacement",
        twin_id=f"inst-{k:02d}",
        provenance=Provenance(
            original_id=f"sourceorig{k}",
            generator="generator-x",
            replacements=[
                Replacement(
                    original="GetWeather", replacement="GetAirQuality", similarity=0.8, rank=1
                )
            ],
        ),
        verification=Verification(status=status, by="auto"),  # type: ignore[arg-type]
    )


def cut(k: int, status: str = "accepted") -> Instance:
    return Instance(
        id=f"inst-{k:02d}~utterance_removal",
        source="apibank",
        dialogue=[Turn(role="user", content=f"What is the weather on day {k}?")],
        apis=[WEATHER, HOTEL],
        label="incomplete",
        manipulation="utterance_removal",
        twin_id=f"inst-{k:02d}",
        provenance=Provenance(
            original_id=f"sourceorig{k}", generator="generator-x", removed_text=[f"in {CITIES[k]}"]
        ),
        verification=Verification(status=status, by="auto"),  # type: ignore[arg-type]
    )


def make_dataset(path: Path, pairs: int = 6) -> Path:
    """``pairs`` complete instances with both twins (accepted), plus one more complete one
    whose twins are rejected and pending: a default sample never contains those two."""
    rows: list[Instance] = []
    for k in range(pairs):
        rows += [base(k), swapped(k), cut(k)]
    rows += [base(pairs), swapped(pairs, "rejected"), cut(pairs, "pending")]
    write_instances(path, rows)
    return path


@pytest.fixture
def ds(tmp_path: Path) -> Path:
    return make_dataset(tmp_path / "aware.jsonl")


def session(
    ds: Path,
    n: int = 8,
    *,
    seed: int = 0,
    balanced: bool = True,
    db: Path | None = None,
    include_pending: bool = False,
) -> HumanSession:
    return HumanSession(
        dataset=ds, db=db, n=n, balanced=balanced, seed=seed, include_pending=include_pending
    )


def annotate(s: HumanSession, keys: str, annotator: str = "ann") -> str:
    out = io.StringIO()
    s.annotate(annotator, Console(file=out, width=100, color_system=None), stdin=io.StringIO(keys))
    return out.getvalue()


def results(s: HumanSession) -> str:
    out = io.StringIO()
    s.render_results(Console(file=out, width=200, color_system=None))
    return out.getvalue()


def positions(output: str) -> list[int]:
    """Sample positions in the order their screens were shown."""
    return [int(m) for m in re.findall(r"─ #(\d+) of \d+ ·", output)]


def row(output: str, group: str) -> list[str]:
    """The cells of one results-table row."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip("│┃ ").split("│")]
        if cells and cells[0] == group:
            return cells
    raise AssertionError(f"no row {group!r} in:\n{output}")


def correct_keys(s: HumanSession) -> str:
    return "".join("y\n" if i.label == "complete" else "n\n" for i in s.sample.instances)


def events(ds: Path) -> list[tuple[str, str, str, str | None]]:
    with sqlite3.connect(default_db_path(ds)) as conn:
        return conn.execute(
            "SELECT instance_id, annotator, action, answer FROM events ORDER BY seq"
        ).fetchall()


# ---- sampling ----


def test_balanced_sample_is_deterministic_balanced_and_shuffled(ds: Path) -> None:
    instances = [i for i in read_instances(ds) if i.verification.status == "accepted"]
    first = draw_sample(instances, 9, balanced=True, seed=3)
    again = draw_sample(list(reversed(instances)), 9, balanced=True, seed=3)
    assert first.ids == again.ids  # input order does not matter, only the seed
    labels = Counter(i.label for i in first.instances)
    assert labels == {"complete": 4, "incomplete": 5}  # n//2 complete, the rest incomplete
    assert len(set(first.ids)) == 9
    other = draw_sample(instances, 9, balanced=True, seed=4)
    assert other.ids != first.ids
    # Presented in a seeded shuffle, not grouped by label.
    orders = {tuple(draw_sample(instances, 9, balanced=True, seed=s).ids) for s in range(5)}
    assert len(orders) == 5
    shuffled = [
        [i.label for i in draw_sample(instances, 9, balanced=True, seed=k).instances]
        for k in range(5)
    ]
    assert any(labels != sorted(labels) for labels in shuffled)

    s = session(ds, 8)
    assert s.sample.ids == session(ds, 8).sample.ids
    assert not {"inst-06~api_replacement", "inst-06~utterance_removal"} & set(s.sample.ids)


def test_balanced_needs_enough_of_each_class(ds: Path) -> None:
    with pytest.raises(UserError) as error:
        session(ds, 16)  # 8 complete wanted, 7 accepted complete exist
    message = str(error.value)
    assert "needs 8 complete and 8 incomplete" in message
    assert "7 complete and 12 incomplete accepted instances" in message
    assert "--include-pending" in message


def test_unbalanced_sample_of_all_when_fewer_prints_a_note(ds: Path) -> None:
    s = session(ds, 50, balanced=False)
    assert sorted(s.sample.ids) == sorted(
        i.id for i in read_instances(ds) if i.verification.status == "accepted"
    )
    assert "only 19 accepted instances, fewer than --n 50" in results(s)
    with_pending = session(ds, 50, balanced=False, include_pending=True)
    assert "inst-06~utterance_removal" in with_pending.sample.ids
    small = session(ds, 5, balanced=False)
    assert len(small.sample.ids) == 5 and small.sample.notes == ()


# ---- answering ----


def test_what_is_shown_is_the_explicit_prompt_and_nothing_else(ds: Path) -> None:
    s = session(ds, 8)
    output = annotate(s, correct_keys(s))
    assert output.count(EXPLICIT_SYSTEM) == 1  # the instructions, once
    assert output.index(EXPLICIT_SYSTEM) < output.index("─ #1 of 8")
    for instance in s.sample.instances:
        assert explicit_user_message(instance) in output
    lowered = output.lower()
    for word in SECRET_WORDS:
        assert word not in lowered, word
    assert positions(output) == list(range(1, 9))


def test_undo_skip_quit_and_resume(ds: Path) -> None:
    s = session(ds, 8)
    order = s.sample.ids
    # #1 yes; #2 skipped; #3 no, undone and answered yes; #4 on screen when quitting.
    out = annotate(s, "y\ns\nn\nu\ny\nq\n")
    assert positions(out) == [1, 2, 3, 4, 3, 4]
    assert "undone: your answer to #3" in out and "every answer so far is saved" in out
    assert "ann: 2 answers this session (skipped 1, undone 1); 2 of 8 answered in all" in out
    assert events(ds) == [
        (order[0], "ann", "answer", "yes"),
        (order[1], "ann", "skip", None),
        (order[2], "ann", "answer", "no"),
        (order[2], "ann", "undo", None),  # undo appends; the answer it cancels stays
        (order[2], "ann", "answer", "yes"),
    ]
    with AnswerStore(default_db_path(ds), order, {"sample_digest": s.digest}) as store:
        assert store.leases() == {}  # quitting hands back what was on screen
        assert {i: a.answer for i, a in store.answers().items()} == {
            order[0]: "yes",
            order[2]: "yes",
        }
        assert store.journal_mode() == "wal"
        assert all(g.seconds >= 0 for g in store.given())

    # Resuming continues at #4; the skipped #2 comes last.
    again = annotate(session(ds, 8), "y\n" * 6)
    assert positions(again) == [4, 5, 6, 7, 8, 2]
    assert "every instance in the sample is answered" in again
    # Undo still works after the last answer: #2 comes back.
    last = annotate(session(ds, 8), "u\nn\n\n")
    assert positions(last) == [2]
    assert "ann: 1 answers this session (skipped 0, undone 1); 8 of 8 answered in all" in last
    assert events(ds)[-2:] == [(order[1], "ann", "undo", None), (order[1], "ann", "answer", "no")]


def test_nothing_to_undo_and_unknown_keys(ds: Path) -> None:
    out = annotate(session(ds, 4), "u\nx\n\ny\nq\n", annotator="bob")
    assert "nothing to undo" in out and "unknown key 'x'" in out
    assert positions(out) == [1, 2]
    assert [e[2:] for e in events(ds)] == [("answer", "yes")]


F1 = 2 + METRICS.index("f1")  # the cells of a results row: group, n, then each metric


def test_results_for_scripted_answers(ds: Path, tmp_path: Path) -> None:
    right = session(ds, 12)
    annotate(right, correct_keys(right))
    table = results(right)
    assert "answered 12 of 12 (6 complete, 6 incomplete)" in table
    for group in ("API replacement", "utterance removal", "overall"):
        cells = row(table, group)
        assert cells[2].startswith("1.000") and cells[F1].startswith("1.000"), cells
    assert row(table, "overall")[1] == "12"
    assert row(table, "ann")[1:4] == ["12", "0", "0"]

    all_yes = session(ds, 12, db=tmp_path / "yes.sqlite")
    annotate(all_yes, "y\n" * 12, annotator="eve")
    table = results(all_yes)
    overall = row(table, "overall")
    assert overall[2].startswith("0.500") and overall[F1].startswith("0.000"), overall
    assert overall[3].startswith("0.500") and overall[4].startswith("0.000"), overall  # bal., MCC
    assert "complete 6 / 0; incomplete 6 / 0" in table


def test_a_name_that_looks_like_markup_is_printed_as_typed(ds: Path) -> None:
    """Names are typed by annotators: ``[/]`` or ``[bold]`` must not be read as rich markup
    (``[/]`` alone used to end the results with a MarkupError)."""
    s = session(ds, 4)
    annotate(s, "y\ny\n", annotator="[/]")
    annotate(s, "n\nn\n", annotator="[bold]x[/bold]")
    table = results(s)
    assert row(table, "[/]")[1] == "2" and row(table, "[bold]x[/bold]")[1] == "2"


def test_cli_report_and_annotation_with_piped_stdin(
    ds: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = default_db_path(ds)
    code, out, err = cli("aware", "human", str(ds), "--n", "6", "--balanced", "--report")
    assert code == 0, err
    assert "answered 0 of 6: no answers yet" in out
    assert not db.exists()  # a report never creates the store

    keys = correct_keys(session(ds, 6))
    monkeypatch.setattr(sys, "stdin", io.StringIO(keys))
    code, out, err = cli("aware", "human", str(ds), "--n", "6", "--balanced", "--annotator", "kim")
    assert code == 0, err
    assert "kim: 6 answers this session" in out
    assert "overall" not in out and "accuracy" not in out  # annotators never see scores

    code, out, err = cli("aware", "human", str(ds), "--n", "6", "--balanced", "--report")
    assert code == 0, err
    assert "answered 6 of 6" in out and row(out, "kim")[1] == "6"
    assert row(out, "overall")[2].startswith("1.000")


def test_a_store_refuses_another_sample_or_dataset(ds: Path, cli: Callable[..., CliResult]) -> None:
    s = session(ds, 6)
    annotate(s, "y\nq\n")
    for n, seed, balanced in ((6, 1, True), (8, 0, True), (6, 0, False)):
        with pytest.raises(UserError) as error:
            session(ds, n, seed=seed, balanced=balanced)
        message = str(error.value)
        assert str(default_db_path(ds)) in message and "--db" in message
        assert "--n 6 --seed 0 --balanced" in message

    # Same options, but a sampled instance now reads differently.
    changed = [
        i.model_copy(update={"dialogue": [Turn(role="user", content="Changed words.")]})
        if i.id == s.sample.ids[0]
        else i
        for i in read_instances(ds)
    ]
    write_instances(ds, changed)
    code, _, err = cli("aware", "human", str(ds), "--n", "6", "--balanced", "--report")
    assert code == 2 and err.count("\n") == 1
    assert "content changed" in err and "another --db" in err
    # A new answer set for the changed dataset: another --db.
    code, _, err = cli(
        "aware", "human", str(ds), "--n", "6", "--balanced", "--report", "--db", str(ds) + ".new"
    )
    assert code == 0, err


def test_verification_notes_do_not_invalidate_the_store(ds: Path) -> None:
    s = session(ds, 6)
    annotate(s, "y\ny\nq\n")
    noted = [
        i.model_copy(update={"verification": i.verification.model_copy(update={"note": "ok"})})
        for i in read_instances(ds)
    ]
    write_instances(ds, noted)
    assert "answered 2 of 6" in results(session(ds, 6))


# ---- real processes ----

# Runs the CLI with keys from stdin (not a terminal), a little slower than a person: it says it
# is ready once the imports are done, and starts when "go" exists, so two annotators overlap.
DRIVER = """
import sys, time
from pathlib import Path

class Slow:
    def __init__(self, inner):
        self.inner = inner
    def readline(self):
        time.sleep(0.01)
        return self.inner.readline()
    def isatty(self):
        return False

import toolbench.aware.evaluate.human  # the slow imports happen before the start signal
from toolbench.cli import main

go = Path(sys.argv[1])
(go.parent / f"ready-{sys.argv[-1]}").touch()
while not go.exists():
    time.sleep(0.002)
sys.stdin = Slow(sys.stdin)
sys.exit(main(sys.argv[2:]))
"""


ENTRY = "import sys; from toolbench.cli import main; sys.exit(main())"


def human_cli(ds: Path, keys: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "aware", "human", str(ds), *args],
        input=keys,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_piped_keys_in_a_subprocess(ds: Path) -> None:
    first = human_cli(ds, "n\nu\ny\ns\nq\n", "--n", "6", "--balanced", "--annotator", "ann")
    assert first.returncode == 0, first.stderr
    assert positions(first.stdout) == [1, 2, 1, 2, 3]
    order = session(ds, 6).sample.ids
    assert events(ds) == [
        (order[0], "ann", "answer", "no"),
        (order[0], "ann", "undo", None),
        (order[0], "ann", "answer", "yes"),
        (order[1], "ann", "skip", None),
    ]
    again = human_cli(ds, "y\n" * 3 + "q\n", "--n", "6", "--balanced", "--annotator", "ann")
    assert again.returncode == 0, again.stderr
    assert positions(again.stdout) == [3, 4, 5, 6]
    report = human_cli(ds, "", "--n", "6", "--balanced", "--report")
    assert "answered 4 of 6" in report.stdout


def test_two_annotators_at_once_never_share_an_instance(tmp_path: Path) -> None:
    ds = make_dataset(tmp_path / "aware.jsonl", pairs=10)
    go = tmp_path / "go"
    n = 20
    args = ["aware", "human", str(ds), "--n", str(n), "--balanced", "--annotator"]
    keys = {"ann": "y\n" * 60, "bob": "n\n" * 60}
    procs = {}
    for who, text in keys.items():
        # Keys and output as files: every key is there from the start, nothing waits on a pipe.
        (tmp_path / f"{who}.keys").write_text(text)
        with (
            (tmp_path / f"{who}.keys").open() as stdin,
            (tmp_path / f"{who}.out").open("w") as stdout,
            (tmp_path / f"{who}.err").open("w") as stderr,
        ):
            procs[who] = subprocess.Popen(
                [sys.executable, "-c", DRIVER, str(go), *args, who],
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
            )
    deadline = time.monotonic() + 60
    while not all((go.parent / f"ready-{who}").exists() for who in keys):  # imports done
        assert time.monotonic() < deadline, "the annotator processes did not start"
        time.sleep(0.01)
    go.touch()  # both open the new store and start answering together
    outputs = {}
    for who, proc in procs.items():
        proc.wait(timeout=120)
        outputs[who] = (
            (tmp_path / f"{who}.out").read_text(),
            (tmp_path / f"{who}.err").read_text(),
        )
    for who, (out, err) in outputs.items():
        assert procs[who].returncode == 0, err
        assert "locked" not in out + err and "Traceback" not in err, err

    seen = {who: positions(out) for who, (out, _) in outputs.items()}
    assert seen["ann"] and seen["bob"], "both annotators should have worked"
    assert set(seen["ann"]).isdisjoint(seen["bob"])
    assert sorted(seen["ann"] + seen["bob"]) == list(range(1, n + 1))

    log = events(ds)
    answered = Counter(instance for instance, _, action, _ in log if action == "answer")
    order = session(ds, n).sample.ids
    assert answered == Counter(order)  # each exactly once, none lost
    by = {instance: (who, answer) for instance, who, _, answer in log}
    for position, instance in enumerate(order, start=1):
        expected = ("ann", "yes") if position in seen["ann"] else ("bob", "no")
        assert by[instance] == expected
    report = human_cli(ds, "", "--n", str(n), "--balanced", "--report")
    assert row(report.stdout, "ann")[1] == str(len(seen["ann"]))
    assert row(report.stdout, "bob")[1] == str(len(seen["bob"]))
    assert "answered 20 of 20" in report.stdout
