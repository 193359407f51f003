"""The sample of the human baseline: which instances people answer, in which order.

The paper's human baseline answers a class-balanced sample of instances (180 from APIBank). The
sample is drawn with ``random.Random(seed)`` from the evaluated instances sorted by id
(``--balanced``: n//2 complete and the rest incomplete), then shuffled with the same generator
into its presentation order. The same dataset, n, seed and balance always give the same sample
in the same order.

The answer store is tied to its sample by ``sample_digest``: a digest of n, seed, balance, the
instructions and, per sampled instance in order, its id, label and the exact text shown. Another
dataset (or one whose sampled instances changed) or other options are refused by the store
(``human_store``) instead of mixing answers.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolbench.aware.evaluate.prompts import EXPLICIT_SYSTEM, explicit_user_message
from toolbench.aware.schema import Instance
from toolbench.errors import UserError

DIGEST_VERSION = 1


@dataclass(frozen=True)
class Sample:
    """The instances to present, in presentation order, and notes for the user about it."""

    instances: tuple[Instance, ...]
    notes: tuple[str, ...] = ()

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.instances]


def draw_sample(
    instances: Sequence[Instance],
    n: int,
    *,
    balanced: bool,
    seed: int,
    dataset: Path | str = "the dataset",
    include_pending: bool = False,
) -> Sample:
    """``n`` instances drawn with ``random.Random(seed)`` from ``instances`` sorted by id, then
    shuffled with the same generator into the order they are presented in."""
    if n < 1:
        raise UserError(f"--n {n}: must be 1 or more")
    pool = sorted(instances, key=lambda i: i.id)
    kind = "accepted or pending" if include_pending else "accepted"
    if not pool:
        hint = "" if include_pending else " (pass --include-pending to use pending ones)"
        raise UserError(f"{dataset}: no {kind} instances to present{hint}")
    rng = random.Random(seed)
    notes: list[str] = []
    if balanced:
        complete = [i for i in pool if i.label == "complete"]
        incomplete = [i for i in pool if i.label == "incomplete"]
        want_complete, want_incomplete = n // 2, n - n // 2
        if len(complete) < want_complete or len(incomplete) < want_incomplete:
            hint = "" if include_pending else ", or add --include-pending"
            raise UserError(
                f"--balanced --n {n} needs {want_complete} complete and {want_incomplete} "
                f"incomplete instances, but {dataset} has {len(complete)} complete and "
                f"{len(incomplete)} incomplete {kind} instances; lower --n{hint}"
            )
        chosen = rng.sample(complete, want_complete) + rng.sample(incomplete, want_incomplete)
    elif n >= len(pool):
        chosen = list(pool)
        if n > len(pool):
            notes.append(
                f"note: {dataset} has only {len(pool)} {kind} instances, fewer than --n {n}; "
                f"all {len(pool)} are presented"
            )
    else:
        chosen = rng.sample(pool, n)
    rng.shuffle(chosen)
    return Sample(tuple(chosen), tuple(notes))


def sample_digest(sample: Sample, *, n: int, seed: int, balanced: bool) -> str:
    """What the answers depend on: the options, the instructions and, per instance in order,
    its id, its label and the exact text shown. Review decisions written back into the dataset
    change none of these, so they keep a store valid."""
    material = {
        "version": DIGEST_VERSION,
        "n": n,
        "seed": seed,
        "balanced": balanced,
        "instructions": EXPLICIT_SYSTEM,
        "sample": [
            [
                i.id,
                i.label,
                hashlib.sha256(explicit_user_message(i).encode("utf-8")).hexdigest(),
            ]
            for i in sample.instances
        ],
    }
    text = json.dumps(material, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
