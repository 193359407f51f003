"""Relevant-API replacement: swap each API the request needs for a similar, irrelevant one.

The paper ("Replacement of Relevant API") embeds each API's name and description with a
sentence encoder and replaces every relevant API with one of the most cosine-similar APIs of a
pool built per dataset. A similar API is the hard case: the offered list still *looks* right,
so a model has to read what the APIs do to notice that none of them serves the request.

A candidate is eligible for a relevant API when it is not offered in the instance already
(by name: that excludes the original and anything else the model already sees, and keeps names
unique), was not chosen for another relevant API of the same instance, and its similarity lies
in the optional ``[min_similarity, max_similarity]`` window. ``rank`` r takes the r-th most
similar eligible API; ``choose_from`` K > 1 picks uniformly (seeded per instance id) among
eligible ranks r..r+K-1, for variety without giving up similarity.

Similarities are rounded to 6 decimals before anything else, and ranking uses an exact integer
key (similarity in millionths, then pool index), so ties always go to the earlier pool API and
the same inputs and seed give the same bytes. The pool is embedded once through the cached
encoder; relevant APIs are scored in blocks with one matrix product per block.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Final, Protocol

import numpy as np

from toolbench.aware.manipulate.replacement_checks import (
    CheckOptions,
    CheckTally,
    check_name,
    rejection,
)
from toolbench.aware.manipulate.replacement_select import (
    SCALE,
    depth_for,
    micro_bounds,
    pick,
    ranking_keys,
    to_micro,
    top_candidates,
)
from toolbench.aware.manipulate.twin import incomplete_twin
from toolbench.aware.schema import ApiSpec, Instance, Replacement, Verification
from toolbench.errors import UserError

MANIPULATION: Final = "api_replacement"
#: Relevant APIs scored per matrix product: bounds the (block x pool) work arrays to ~50 MB
#: for a 16k pool while keeping each product large enough to run at full speed.
BLOCK = 256
#: Extra candidates ranked per relevant API, so ones the pre-verification checks reject can be
#: passed over for the next-ranked (a copy-heavy tool can fill the top ranks with siblings).
CHECK_DEPTH = 32


class Embedder(Protocol):
    """What replacement needs of an encoder (``toolbench.aware.encoder.ApiEncoder``)."""

    @property
    def identity(self) -> str: ...

    def encode(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> np.ndarray: ...


@dataclass(frozen=True)
class ReplacementOptions:
    seed: int
    rank: int = 1
    choose_from: int = 1
    min_similarity: float | None = None
    max_similarity: float | None = None
    checks: CheckOptions = field(default_factory=CheckOptions)

    def __post_init__(self) -> None:
        if self.rank < 1:
            raise UserError(f"--rank {self.rank}: must be 1 or more (1 = the most similar API)")
        if self.choose_from < 1:
            raise UserError(f"--choose-from {self.choose_from}: must be 1 or more")
        low, high = self.min_similarity, self.max_similarity
        if low is not None and high is not None and low > high:
            raise UserError(f"--min-similarity {low} is above --max-similarity {high}")

    def as_notes(self) -> dict[str, object]:
        return {
            "rank": self.rank,
            "choose_from": self.choose_from,
            "min_similarity": self.min_similarity,
            "max_similarity": self.max_similarity,
            **self.checks.as_notes(),
        }


@dataclass(frozen=True)
class ReplacementResult:
    #: One incomplete twin per input instance that could be manipulated, in input order.
    instances: list[Instance]
    #: (instance id, why) for every input instance that got no twin.
    skipped: list[tuple[str, str]]
    #: What the pre-verification checks turned down (``replacement_checks``).
    checks: CheckTally = field(default_factory=CheckTally)


# ---- the pool ----


def _canonical(api: ApiSpec) -> str:
    return json.dumps(api.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)


def build_pool(instances: Iterable[Instance], extra: Sequence[ApiSpec] = ()) -> list[ApiSpec]:
    """Every distinct API (by name and description) of the instances and ``extra``.

    Sorted by (name, description), and among duplicates the one with the smallest canonical
    JSON is kept, so the pool (and every tie-break by pool index) does not depend on the order
    instances were loaded in.
    """
    best: dict[tuple[str, str], tuple[str, ApiSpec]] = {}
    for api in chain((api for instance in instances for api in instance.apis), extra):
        key = (api.name, api.description)
        text = _canonical(api)
        if key not in best or text < best[key][0]:
            best[key] = (text, api)
    return [best[key][1] for key in sorted(best)]


# ---- instances ----


@dataclass
class _Job:
    """One instance to manipulate: its relevant APIs in the order they are offered."""

    instance: Instance
    relevant: list[ApiSpec]
    first_row: int  # row of its first relevant API in the query matrix


def _skip_reason(instance: Instance) -> str | None:
    if instance.label != "complete":
        return "not a complete instance"
    if not instance.relevant_apis:
        return "no relevant APIs"
    offered = {api.name for api in instance.apis}
    unknown = [name for name in instance.relevant_apis if name not in offered]
    if unknown:
        return f"relevant API '{unknown[0]}' is not among the offered APIs"
    return None


def _jobs(instances: Sequence[Instance]) -> tuple[list[_Job], dict[str, str]]:
    jobs: list[_Job] = []
    skipped: dict[str, str] = {}
    rows = 0
    for instance in instances:
        reason = _skip_reason(instance)
        if reason is not None:
            skipped[instance.id] = reason
            continue
        wanted = set(instance.relevant_apis)
        relevant = [api for api in instance.apis if api.name in wanted]
        jobs.append(_Job(instance, relevant, rows))
        rows += len(relevant)
    return jobs, skipped


def _blocks(jobs: list[_Job]) -> Iterable[list[_Job]]:
    block: list[_Job] = []
    rows = 0
    for job in jobs:
        if block and rows + len(job.relevant) > BLOCK:
            yield block
            block, rows = [], 0
        block.append(job)
        rows += len(job.relevant)
    if block:
        yield block


def _offered_mask(
    block: list[_Job], columns_of: dict[str, list[int]], pool_size: int
) -> np.ndarray:
    """(block rows, pool) True where the pool API's name is offered in that row's instance."""
    total = sum(len(job.relevant) for job in block)
    mask = np.zeros((total, pool_size), dtype=bool)
    row = 0
    for job in block:
        columns = [c for api in job.instance.apis for c in columns_of.get(api.name, [])]
        mask[row : row + len(job.relevant), columns] = True
        row += len(job.relevant)
    return mask


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def missing_sentence(replacements: list[Replacement]) -> str:
    """What a judge checks a model's explanation against."""
    originals = _join([r.original for r in replacements])
    chosen = _join([r.replacement for r in replacements])
    if len(replacements) == 1:
        return f"No offered API can do what {originals} did; it was replaced by {chosen}."
    return (
        f"No offered API can do what {originals} did; they were replaced by {chosen} respectively."
    )


def _twin(
    job: _Job,
    picks: list[tuple[int, int]],
    micro: np.ndarray,
    pool: Sequence[ApiSpec],
    generator: str,
    options: ReplacementOptions,
    turned_down: list[dict[str, str]] | None = None,
) -> Instance:
    """The twin: each relevant API swapped in place; ``micro`` holds the job's rows.
    ``turned_down``: better-ranked candidates the pre-verification checks rejected, and why."""
    swap: dict[str, ApiSpec] = {}
    replacements: list[Replacement] = []
    for row, (api, (column, rank)) in enumerate(zip(job.relevant, picks, strict=True)):
        swap[api.name] = pool[column]
        similarity = int(micro[row, column]) / SCALE
        replacements.append(
            Replacement(
                original=api.name, replacement=pool[column].name, similarity=similarity, rank=rank
            )
        )
    apis = [swap.get(api.name, api) for api in job.instance.apis]
    names = [api.name for api in apis]
    if len(set(names)) != len(names):  # cannot happen: offered names are never candidates
        raise AssertionError(f"{job.instance.id}: replacement made API names collide: {names}")
    return incomplete_twin(
        job.instance,
        MANIPULATION,
        apis=apis,
        verification=Verification(),
        replacements=replacements,
        missing=missing_sentence(replacements),
        generator=generator,
        seed=options.seed,
        notes={
            **options.as_notes(),
            "pool_size": len(pool),
            "pre_verification": turned_down or [],
        },
    )


def _window_text(options: ReplacementOptions) -> str:
    low, high = options.min_similarity, options.max_similarity
    return f"[{'-' if low is None else low}, {'-' if high is None else high}]"


def _no_candidate_reason(
    api: ApiSpec,
    micro: np.ndarray,
    offered: np.ndarray,
    eligible: np.ndarray,
    options: ReplacementOptions,
) -> str:
    """Why ``api`` (one row of the block) got no replacement, with the numbers to act on."""
    free = ~offered
    head = f"no replacement for '{api.name}'"
    if not free.any():
        return f"{head}: every pool API is offered in the instance"
    count = int(eligible.sum())
    if options.min_similarity is None and options.max_similarity is None:
        text = f"{head}: {count} pool APIs are not offered in the instance"
    else:
        best = int(micro[free].max()) / SCALE
        text = (
            f"{head}: {count} of the {int(free.sum())} pool APIs not offered are within the "
            f"similarity window {_window_text(options)} (most similar: {best:.6f})"
        )
    needs = f"rank {options.rank} needs at least {options.rank}"
    if count >= options.rank:
        needs += " once the instance's other relevant APIs have taken theirs"
    return f"{text}; {needs}"


def replace_relevant_apis(
    instances: Sequence[Instance],
    pool: Sequence[ApiSpec],
    encoder: Embedder,
    options: ReplacementOptions,
    progress: Callable[[int], None] | None = None,
    encoding: Callable[[int, int], None] | None = None,
    exclude: Mapping[str, set[str]] | None = None,
) -> ReplacementResult:
    """The incomplete twin of every complete instance with relevant APIs (see the module).

    ``progress(n)`` reports n more input instances done (twin made or skipped), block by
    block, so the calls add up to ``len(instances)``. ``encoding(n, total)`` reports n more
    of ``total`` texts embedded: on a cold cache that is most of the time, before any twin.
    ``exclude``: instance id -> pool API names not to use for it (a judge model turned them
    down, see ``replacement_judge``).
    """
    instances = list(instances)
    jobs, skipped = _jobs(instances)
    if progress is not None and skipped:
        progress(len(skipped))
    twins: dict[str, Instance] = {}
    if jobs and not pool:
        skipped.update((job.instance.id, "the API pool is empty") for job in jobs)
        if progress is not None:
            progress(len(jobs))
    elif jobs:
        scorer = _Scorer(jobs, list(pool), encoder, options, encoding, exclude or {})
        for block in _blocks(jobs):
            for instance_id, outcome in scorer.block(block).items():
                if isinstance(outcome, str):
                    skipped[instance_id] = outcome
                else:
                    twins[instance_id] = outcome
            if progress is not None:
                progress(len(block))
    return ReplacementResult(
        instances=[twins[i.id] for i in instances if i.id in twins],
        skipped=[(i.id, skipped[i.id]) for i in instances if i.id in skipped],
        checks=scorer.tally if jobs and pool else CheckTally(),
    )


class _Scorer:
    """The embedded pool and relevant APIs, scored a block of instances at a time."""

    def __init__(
        self,
        jobs: list[_Job],
        pool: list[ApiSpec],
        encoder: Embedder,
        options: ReplacementOptions,
        encoding: Callable[[int, int], None] | None = None,
        exclude: Mapping[str, set[str]] | None = None,
    ) -> None:
        self.pool = pool
        self.exclude = exclude or {}
        self.options = options
        pool_texts = [api.embedding_text() for api in pool]
        query_texts = [api.embedding_text() for job in jobs for api in job.relevant]
        total = len(pool_texts) + len(query_texts)
        report = None if encoding is None else (lambda n: encoding(n, total))
        # float64 products: a float32 dot product can move by an ulp between BLAS kernels or
        # thread splits, which flips the 6th decimal of ~5% of values that sit near a rounding
        # boundary; in float64 that needs a value within ~1e-15 of one. Costs ~0.2 s for 16k.
        self.pool_vectors = encoder.encode(pool_texts, report).astype(np.float64)
        self.queries = encoder.encode(query_texts, report).astype(np.float64)
        self.columns_of: dict[str, list[int]] = {}
        for column, api in enumerate(pool):
            self.columns_of.setdefault(api.name, []).append(column)
        self.generator = f"{MANIPULATION} encoder={encoder.identity}"
        self.bounds = micro_bounds(options.min_similarity, options.max_similarity)
        self.tally = CheckTally()

    def block(self, block: list[_Job]) -> dict[str, Instance | str]:
        """Twins (or skip reasons) for a block of instances: one matrix product, one partition."""
        start = block[0].first_row
        stop = block[-1].first_row + len(block[-1].relevant)
        micro = to_micro(self.queries[start:stop] @ self.pool_vectors.T)
        offered = _offered_mask(block, self.columns_of, len(self.pool))
        eligible = ~offered
        low, high = self.bounds
        if low is not None:
            eligible &= micro >= low
        if high is not None:
            eligible &= micro <= high
        widest = max(len(job.relevant) for job in block)
        depth = depth_for(widest, self.options.rank, self.options.choose_from) + CHECK_DEPTH
        candidates = top_candidates(ranking_keys(micro, eligible), depth)
        out: dict[str, Instance | str] = {}
        for job in block:
            rows = slice(job.first_row - start, job.first_row - start + len(job.relevant))
            out[job.instance.id] = self._one(
                job, candidates[rows], micro[rows], offered[rows], eligible[rows]
            )
        return out

    def _one(
        self,
        job: _Job,
        candidates: np.ndarray,
        micro: np.ndarray,
        offered: np.ndarray,
        eligible: np.ndarray,
    ) -> Instance | str:
        options = self.options
        rng = random.Random(f"{MANIPULATION}|{options.seed}|{job.instance.id}")

        judged = self.exclude.get(job.instance.id, set())

        def reject(row: int, column: int) -> str | None:
            if self.pool[column].name in judged:
                return "judge: the verify model judged it can serve the request"
            similarity = int(micro[row, column]) / SCALE
            return rejection(job.relevant[row], self.pool[column], similarity, options.checks)

        rejected: list[tuple[int, int, str]] = []
        picks = pick(
            candidates,
            rank=options.rank,
            choose_from=options.choose_from,
            rng=rng,
            reject=reject,
            rejected=rejected,
        )
        self._count(rejected)
        chosen = [p for p in picks if p is not None]
        if len(chosen) < len(picks):
            gap = picks.index(None)
            reason = _no_candidate_reason(
                job.relevant[gap], micro[gap], offered[gap], eligible[gap], options
            )
            turned_down = sum(1 for row, _, _ in rejected if row == gap)
            if turned_down:
                reason += f"; {turned_down} candidates failed the pre-verification checks"
            return reason
        notes = [
            {"original": job.relevant[row].name, "candidate": self.pool[column].name, "why": why}
            for row, column, why in rejected
        ]
        return _twin(job, chosen, micro, self.pool, self.generator, options, notes)

    def _count(self, rejected: list[tuple[int, int, str]]) -> None:
        for _, _, why in rejected:
            self.tally.candidates[check_name(why)] += 1
        for name in {check_name(why) for _, _, why in rejected}:
            self.tally.twins[name] += 1
