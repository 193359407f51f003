"""Choosing k-shot demonstrations: half complete, half incomplete, never the test item's family.

As the paper, demonstrations are balanced (k=4: two complete, two incomplete). They come from a
separate pool (``--demos FILE``) or, without one, from the evaluated dataset itself; either way
an instance is never shown its own family: itself, its twin, or anything made from the same
original (that would give the answer away). The choice is seeded per test item, so a run is
repeatable and adding items to a dataset does not change the demonstrations of the others.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from toolbench.aware.evaluate.prompts import Demonstration
from toolbench.aware.schema import Instance
from toolbench.errors import UserError


def family(instance: Instance) -> set[str]:
    ids = {instance.id, instance.provenance.original_id}
    if instance.twin_id:
        ids.add(instance.twin_id)
    return {i for i in ids if i}


class DemoPool:
    def __init__(self, pool: Sequence[Instance], seed: int) -> None:
        self.seed = seed
        ordered = sorted(pool, key=lambda i: i.id)
        self.complete = [i for i in ordered if i.label == "complete"]
        self.incomplete = [i for i in ordered if i.label == "incomplete"]

    def check(self, shots: int) -> None:
        if shots % 2:
            raise UserError(f"--shots {shots}: use an even number (half complete, half incomplete)")
        need = shots // 2
        if shots and (len(self.complete) <= need or len(self.incomplete) <= need):
            raise UserError(
                f"--shots {shots} needs more than {need} complete and {need} incomplete "
                f"demonstrations, the pool has {len(self.complete)} and {len(self.incomplete)}; "
                "pass a larger --demos FILE or fewer --shots"
            )

    def choose(self, item: Instance, shots: int) -> tuple[Demonstration, ...]:
        if shots == 0:
            return ()
        rng = random.Random(f"{self.seed}|{item.id}|{shots}")
        banned = family(item)
        picked: list[Instance] = []
        for group in (self.complete, self.incomplete):
            allowed = [i for i in group if not family(i) & banned]
            if len(allowed) < shots // 2:
                raise UserError(
                    f"not enough demonstrations for {item.id}: {len(allowed)} outside its "
                    f"family, {shots // 2} needed; pass a larger --demos FILE"
                )
            picked += rng.sample(allowed, shots // 2)
        rng.shuffle(picked)
        return tuple(Demonstration(instance) for instance in picked)
