"""A non-LLM baseline: retrieve the nearest demonstration and re-fill its program's values.

It gives every task a cheap, deterministic reference point between "always wrong" and the
oracle, with no weights and no service. It learns only from what a prompt would contain, the
demonstrations and the API docs (it imports no simulator and knows no API names), and it never
runs any code:

1. Each demonstration program is cut into *blocks* (a statement, or an assignment plus the one that
   uses its variable). Their literals (numbers, strings, lists, ``Date``-like number triples,
   URL query values) are aligned with the values found in the demonstration's query.
2. From all demonstrations it learns which cue words around a value pick which block slot
   ('3 bedrooms' -> the block that took 3), which query words go with a constant ('sale' ->
   "buy") and with a block being there at all; quoted values in the docs name the choices.
3. For a test query it takes the nearest demonstration (BM25) as a skeleton, substitutes the
   query's values by cue, drops blocks the query gives no value for, and adds blocks that
   other demonstrations taught for the values left over. Of the few nearest skeletons it
   keeps the one that uses most of the query's values. URL parameters follow the endpoint's
   docs: a documented choice is the value the query names, an optional one it does not name
   is left out.
4. When one choice decides the program's shape (booking's 'hotels' / 'trip tickets' /
   'both': which calls may and must follow), it writes one program per value, each using only
   blocks seen with that value and filling the ones it always has, and keeps the program
   whose value the query's words and values support best. A mixed program is what crashes.
5. A Python program written so must be runnable as far as its text tells: it parses, and it
   reads no name but those the demonstrations read without defining (the task's objects)
   or those it binds first. Blocks are whole statements (a loop keeps its body). When a
   re-filling fails that check, the skeleton keeps its unfilled blocks as written, then the
   next nearest demonstration is tried, and last the nearest demonstration as it is.

Learning lives in ``learner``; program text handling in ``programs``; values in ``entities``.
Plans of bare-object calls (virtual_home's ``Agent.Grab(mug)``) carry no literal; for them the
objects are the values, re-filled by ``plans``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

from toolbench.models.base import ModelOutputError
from toolbench.models.reference.entities import (
    Entity,
    entity_features,
    first_match,
    stream,
    surface_match,
    words,
)
from toolbench.models.reference.learner import NONE, Learner, counted_word, joined
from toolbench.models.reference.plans import PlanPredictor, plan_predictor
from toolbench.models.reference.programs import (
    DROP,
    Lit,
    Template,
    entity_raw,
    finish_url,
    parse_literals,
    render,
    split_blocks,
    template_key,
)
from toolbench.types import Doc, Generation, GenerationRequest

THRESHOLD = 0.5  # least cue evidence for a value to be used at all
SKELETON_BONUS = 0.5  # a block of the nearest demonstration is the likelier reading
FOUND_BONUS = 5.0  # a choice named in the query that no demonstration used (log-odds)
RANGE_BONUS = 1.0  # cue evidence a value needs to stay put when it pairs with a range's end
REQUIRED_BONUS = 0.5  # under a mode, a value goes to a call that mode always makes, if it fits
MISSING_PENALTY = 3.0  # a call the mode always makes but the query gives no value for
FALLBACKS = 3  # nearest demonstrations tried as skeletons before one is copied as written


@dataclass
class _Query:
    """One test query, analysed; under a mode value, the block keys it allows and requires."""

    entities: list[Entity]
    words: list[str]
    assigned: dict[tuple[str, int], int] = field(default_factory=dict)
    copies: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    forced: dict[str, str] = field(default_factory=dict)  # mode block key -> its value
    allowed: frozenset[str] | None = None  # None: every block key
    required: frozenset[str] = frozenset()
    written: set[str] = field(default_factory=set)  # block keys of the program written

    def allows(self, key: str) -> bool:
        return self.allowed is None or key in self.allowed


class Predictor:
    """Writes the program for one query from a ``Learner``'s knowledge (see the module doc)."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner
        self.terms = [self._terms(q) for q, _ in learner.demos]
        self.df = Counter(t for terms in self.terms for t in set(terms))
        self.avgdl = sum(map(len, self.terms)) / max(1, len(self.terms))

    def _terms(self, query: str) -> list[str]:
        return [w for w, _ in stream(query, self.learner.entities(query))]

    def ranking(self, query: str, among: Sequence[int] = ()) -> list[int]:
        """Demonstrations nearest first: BM25 over query words, values masked to their kind so
        the request's shape decides; only the demonstrations ``among`` compete when given."""
        terms, n = set(self._terms(query)), len(self.terms)
        scores = []
        for i, doc in enumerate(self.terms):
            if among and i not in among:
                scores.append(-math.inf)
                continue
            tf, score = Counter(doc), 0.0
            for t in sorted(terms):
                if tf[t]:
                    idf = math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5))
                    norm = tf[t] + 1.2 * (0.25 + 0.75 * len(doc) / max(1.0, self.avgdl))
                    score += idf * tf[t] * 2.2 / norm
            scores.append(score)
        ranked = sorted(range(n), key=lambda i: (-scores[i], i))
        return [i for i in ranked if scores[i] > -math.inf] or ranked[:1]

    def slot_scores(
        self, query: str, q: _Query, skeleton: set[str]
    ) -> list[dict[tuple[str, int], float]]:
        """Per query value, the cue evidence for each slot of its kind the reading allows."""
        learner, table = self.learner, []
        for i, feats in enumerate(entity_features(query, q.entities, learner.choice_phrases)):
            scores: dict[tuple[str, int], float] = {NONE: 0.0}
            noun = counted_word(feats) if q.entities[i].kind == "number" else ""
            for f, weight in feats.items():
                counts = learner.assoc.get(f, {})
                total = sum(counts.values()) or 1.0
                for cls, c in counts.items():
                    fits = cls == NONE or (
                        q.allows(cls[0]) and not learner.counts_other_things(cls, noun)
                    )
                    if fits and (cls == NONE or learner.class_kind[cls] == q.entities[i].kind):
                        # Squared share: a cue seen with one slot only counts fully.
                        scores[cls] = scores.get(cls, 0.0) + weight * (c / total) ** 2
            for cls in scores:
                if cls != NONE:
                    scores[cls] += SKELETON_BONUS if cls[0] in skeleton else 0.0
                    scores[cls] += REQUIRED_BONUS if cls[0] in q.required else 0.0
            table.append(scores)
        return table

    def assign(self, query: str, q: _Query, skeleton: set[str]) -> float:
        """Give each value at most one slot and each slot one value, best evidence first;
        returns the evidence behind the values used (how well this reading explains them)."""
        table = self.slot_scores(query, q, skeleton)
        candidates = [
            (-s, i, cls)
            for i, scores in enumerate(table)
            for cls, s in scores.items()
            if cls != NONE and s >= THRESHOLD and s > scores[NONE]
        ]
        evidence = 0.0
        for s, i, cls in sorted(candidates):
            if cls not in q.assigned and i not in q.assigned.values():
                q.assigned[cls] = i
                evidence -= s
        self.complete_ranges(query, q, table)
        self.fill_required(q, table)
        self.fill_leftovers(q, table, skeleton)
        return evidence

    def fill_leftovers(
        self, q: _Query, table: list[dict[tuple[str, int], float]], skeleton: set[str]
    ) -> None:
        """A skeleton slot no value took gets a value of its kind that no slot took, the
        best-cued first: 'Put 13 in E28' on 'Type 74.50 into C6' types 13, though no cue of
        'put' was seen; without it the block would go and the value be lost. A value with no
        cue at all for the slot stays out."""
        kinds = self.learner.class_kind
        free = set(range(len(q.entities))) - set(q.assigned.values())
        for cls in sorted(c for c in kinds if c[0] in skeleton and c not in q.assigned):
            fits = [
                i
                for i in sorted(free)
                if q.entities[i].kind == kinds[cls] and table[i].get(cls, 0.0) > 0
            ]
            if fits and q.allows(cls[0]):
                i = max(fits, key=lambda i: (table[i].get(cls, 0.0), -i))
                q.assigned[cls] = i
                free.discard(i)

    def complete_ranges(
        self, query: str, q: _Query, table: list[dict[tuple[str, int], float]]
    ) -> None:
        """A value written as a pair with one end of a learned range is the range's other end
        ('120 to 200 USD per night': 200 is the highest rate, so 120 the lowest), unless its
        own cues point elsewhere (by RANGE_BONUS or more)."""
        ranges, kinds = self.learner.ranges, self.learner.class_kind
        for i in range(len(q.entities) - 1):
            if not joined(query, q.entities[i], q.entities[i + 1]):
                continue
            for near, far, side in ((i, i + 1, 0), (i + 1, i, 1)):
                holder = {j: cls for cls, j in q.assigned.items()}
                if far not in holder:
                    continue
                partners = sorted(
                    (-n, pair[side])
                    for pair, n in ranges.items()
                    if pair[1 - side] == holder[far]
                    and pair[side] not in q.assigned
                    and q.allows(pair[side][0])
                    and kinds[pair[side]] == q.entities[near].kind
                )
                if not partners:
                    continue
                cls = partners[0][1]
                held = holder.get(near)
                if held is None or (held[0] not in q.required and table[near][held] < RANGE_BONUS):
                    if held is not None:
                        del q.assigned[held]
                    q.assigned[cls] = near

    def fill_required(self, q: _Query, table: list[dict[tuple[str, int], float]]) -> None:
        """Give a slot the mode always fills the best-cued value that went to an optional slot
        or to none: with a hotel and tickets, the date after 'return' is the check-out date
        (the return date defaults to it), and a program without a check-out date crashes."""
        kinds = self.learner.class_kind
        holder = {i: cls for cls, i in q.assigned.items()}
        for cls in sorted(c for c in kinds if c[0] in q.required and c not in q.assigned):
            movable = [
                i
                for i, e in enumerate(q.entities)
                if e.kind == kinds[cls]
                and cls in table[i]
                and (i not in holder or holder[i][0] not in q.required)
            ]
            if not movable:
                continue
            i = max(movable, key=lambda i: (table[i][cls], -i))
            if i in holder:
                del q.assigned[holder[i]]
            q.assigned[cls], holder[i] = i, cls

    def choose(self, tpl: Template, p: int, q: _Query, current: Any) -> Any:
        """Value of a literal that no query value fills: the choices the query names (a list
        literal), else the naive Bayes pick among the values seen or allowed."""
        learner, lit = self.learner, tpl.lits[p]
        pool = learner.choices(tpl, p)
        if lit.kind == "list":
            hits = sorted((first_match(v, q.words), v) for v in pool)
            return [v for i, v in hits if i >= 0]
        if tpl.key in q.forced:
            return q.forced[tpl.key]
        if len(pool) <= 1:
            return current
        scored = self.choice_scores(tpl, p, q.words, current)
        return max(scored)[2] if scored else current

    def choice_scores(
        self, tpl: Template, p: int, query_words: list[str], current: Any
    ) -> list[tuple[float, int, str]]:
        """(naive Bayes log score, tie-break, value) for every value literal ``p`` can take."""
        learner = self.learner
        pool = learner.choices(tpl, p)
        seen = tpl.values.get(p, [])
        feats = learner.features(query_words, tpl)
        scored = []
        for v in pool:
            demos = [d for d, x in seen if str(x) == v]
            named = surface_match(v, query_words)
            if not demos and not named and v != current and current is not None:
                continue  # a value no demonstration used and the query does not name
            score = math.log((len(demos) + 0.5) / (len(seen) + 1))
            score += learner.loglik(tpl.key, demos, feats)
            score += 0.0 if demos else FOUND_BONUS * named
            score += SKELETON_BONUS if v == current else 0.0
            scored.append((score, -pool.index(v), v))
        return scored

    def fill(
        self, tpl: Template, block: str, lits: list[Lit], q: _Query, skeleton: bool
    ) -> str | None:
        """The block with this query's values, or None when the query does not call for it."""
        learner, raws = self.learner, {}
        slots = [(tpl.key, p) in learner.class_kind for p in range(len(lits))]
        for p, lit in enumerate(lits):
            cls = (tpl.key, p)
            doc = learner.param_doc(block, lit)
            if doc is not None and any(doc.glosses.values()) and str(lit.value) in doc.glosses:
                # A documented choice: the value the query names, else left out if it may be.
                raws[p] = [doc.named(q.words) or (DROP if doc.optional else lit.value)]
            elif slots[p]:
                if cls in q.assigned:
                    e = q.entities[q.assigned[cls]]
                    raws[p] = entity_raw(lit, e, learner.date_orders[cls])
                elif skeleton and (lit.kind, str(lit.value)) in q.copies:
                    raws[p] = q.copies[(lit.kind, str(lit.value))]
                elif doc is not None and doc.optional:
                    raws[p] = [DROP]
                else:
                    return None
            elif lit.kind in ("str", "param", "list"):
                value = self.choose(tpl, p, q, lit.value)
                if lit.kind == "list" and not value:
                    return None
                if lit.kind == "list":
                    raws[p] = ["[" + ", ".join(f"{lit.quote}{v}{lit.quote}" for v in value) + "]"]
                else:
                    raws[p] = [f"{lit.quote}{value}{lit.quote}" if lit.kind == "str" else value]
        # A block of choices only (room type, buy/rent) is kept when the query calls for it; so
        # is a block of another demonstration that carries none of the query's values.
        choices_only = not any(slots) and any(lit.kind in ("str", "param") for lit in lits)
        named = any(len(learner.choices(tpl, p)) > 1 for p in range(len(lits)))
        weigh = (choices_only and named) or (not any(slots) and not skeleton)
        if weigh and tpl.key not in q.forced:
            odds = learner.presence(tpl.key, learner.features(q.words, tpl))
            if odds + (SKELETON_BONUS if skeleton else 0.0) <= 0:
                return None
        return finish_url(render(block, lits, raws), learner.url_extras(block, lits, q.words))

    def predict(self, query: str) -> str:
        """Without a mode, the one reading; with one, the best consistent program per value."""
        mode = self.learner.mode
        if mode is None:
            return self.program(query, _Query(self.learner.entities(query), words(query)))[0]
        tpl = self.learner.templates[mode.key]
        prior = {v: s for s, _, v in self.choice_scores(tpl, 0, words(query), None)}
        best: tuple[float, int, str] | None = None
        for i, value in enumerate(sorted(mode.demos)):
            q = _Query(self.learner.entities(query), words(query), forced={mode.key: value})
            q.allowed, q.required = mode.compatible[value], mode.required[value]
            text, evidence = self.program(query, q, mode.demos[value])
            missing = len(q.required - q.written)
            score = prior.get(value, 0.0) + evidence - MISSING_PENALTY * missing
            if best is None or (score, -i) > best[:2]:
                best = (score, -i, text)
        assert best is not None  # a mode has at least two values
        return best[2]

    def program(self, query: str, q: _Query, among: Sequence[int] = ()) -> tuple[str, float]:
        """The program for ``q`` and the evidence behind its values, written on the nearest
        demonstration ``among`` those given whose re-filling can run (``Learner.runnable``):
        re-filled, else re-filled keeping the blocks it had no values for, else the next
        nearest; the nearest demonstration as it is written is the last resort, so a filled
        program never reads a variable whose defining line was dropped. Records the block
        keys written in ``q.written``."""
        order = self.ranking(query, among)
        best: tuple[int, int, _Query, str, float] | None = None
        for rank, sk in enumerate(order[:FALLBACKS]):
            for keep_all in (False, True):
                attempt = replace(q, assigned={}, copies={}, written=set())
                text, evidence = self.write(query, attempt, sk, keep_all)
                if self.learner.runnable(text):
                    # Of the nearest skeletons, the one that leaves the fewest of the query's
                    # values unused ('Put 13 in E28' is typed into a cell, not written as the
                    # nearest demonstration's formula).
                    missed = len(q.entities) - len(self.used(attempt))
                    if best is None or missed < best[0]:
                        best = (missed, rank, attempt, text, evidence)
                    break
            if best is not None and self.learner.mode is not None:
                break  # under a mode, ``predict`` weighs each value's program by its evidence
        if best is None:
            q.written = set(self.learner.demo_keys[order[0]])
            return self.learner.demos[order[0]][1], 0.0
        _, _, chosen, text, evidence = best
        q.assigned, q.copies, q.written = chosen.assigned, chosen.copies, chosen.written
        return text, evidence

    @staticmethod
    def used(q: _Query) -> set[int]:
        """The query values that went into a block of the program written."""
        return {i for cls, i in q.assigned.items() if cls[0] in q.written}

    def write(self, query: str, q: _Query, sk: int, keep_all: bool) -> tuple[str, float]:
        """Skeleton ``sk`` re-filled with the query's values, plus other demonstrations' blocks
        for the values left over; ``keep_all`` keeps a block the query has no value for as
        the demonstration wrote it."""
        learner = self.learner
        sk_keys = learner.demo_keys[sk]
        evidence = self.assign(query, q, set(sk_keys))
        sk_blocks = [(b, parse_literals(b)) for b in split_blocks(learner.demos[sk][1])]
        # A name or date the skeleton repeats is repeated here too (the hotel is in the
        # destination); equal counts ('2 adults, 2 kids, 2 rooms') are a coincidence.
        for block, lits in sk_blocks:
            key = template_key(block, lits)
            for p, lit in enumerate(lits):
                if (key, p) in q.assigned and lit.kind != "num":
                    e = q.entities[q.assigned[(key, p)]]
                    raw = entity_raw(lit, e, learner.date_orders[(key, p)])
                    q.copies.setdefault((lit.kind, str(lit.value)), raw)
        out: list[tuple[float, int, str]] = []
        functions: set[str] = set()
        for b, (block, lits) in enumerate(sk_blocks):
            tpl = learner.templates[template_key(block, lits)]
            text = self.fill(tpl, block, lits, q, skeleton=True)
            text = block if text is None and keep_all else text
            if text is not None:
                out.append((b / max(1, len(sk_blocks) - 1), len(out), text))
                functions.update(tpl.functions[:1])
                q.written.add(tpl.key)
        if learner.max_blocks == 1:
            # One action per answer: the skeleton's, re-filled where the query allows.
            return (out[0][2] if out else sk_blocks[0][0] if sk_blocks else ""), evidence
        self.add_blocks(q, sk_keys, out, functions)
        return "\n".join(text for _, _, text in sorted(out)), evidence

    def add_blocks(
        self, q: _Query, sk_keys: list[str], out: list[tuple[float, int, str]], functions: set[str]
    ) -> None:
        """Add the blocks other demonstrations taught for the values left over, each only
        when the program stays runnable with it, at its usual place in a program."""
        learner = self.learner
        extra = [cls[0] for cls in sorted(q.assigned)] + sorted(learner.templates)
        for key in dict.fromkeys(extra):
            tpl = learner.templates[key]
            skip = key in sk_keys or not tpl.lits or set(tpl.functions[:1]) & functions
            if skip or not q.allows(key):
                continue
            text = self.fill(tpl, tpl.text, tpl.lits, q, skeleton=False)
            if text is None:
                continue
            item = (sum(tpl.positions) / len(tpl.positions), len(out), text)
            if learner.runnable("\n".join(t for _, _, t in sorted([*out, item]))):
                out.append(item)
                functions.update(tpl.functions[:1])
                q.written.add(key)


@runtime_checkable
class HasBaselineReply(Protocol):
    """A task whose prompts are not docs plus demonstrations (tabletop's LMP prompts,
    web_shop's pages) and so brings the built-in ``baseline`` model's policy for them
    (declared here, by the model that uses it; the task is matched structurally)."""

    def baseline_reply(self, request: GenerationRequest) -> str | None:
        """The baseline's reply to ``request``, or None to use the generic policy."""
        ...


class BaselineModel:
    """The ``baseline`` model: nearest demonstration, re-filled with the query's values.
    Tasks whose prompts are not docs plus demonstrations (tabletop's LMP prompts, web_shop's
    pages) bring their own policy (``HasBaselineReply``), taken in ``fit``."""

    name = "baseline"
    cacheable = False

    def __init__(self) -> None:
        self._predictors: dict[
            tuple[tuple[str, ...], tuple[str, ...]], Predictor | PlanPredictor
        ] = {}
        # Sample task name -> the task's own reply policy (None from it: the generic one).
        self._policies: dict[str, Callable[[GenerationRequest], str | None]] = {}

    def fit(self, prepared: Sequence[Any]) -> dict[str, Any]:
        """Take each prepared task's ``baseline_reply``, by the task names its samples carry
        (``FitsData``: the runner calls this before any sample)."""
        for p in prepared:
            own = p.task.baseline_reply if isinstance(p.task, HasBaselineReply) else None
            for name in {p.task.name, *(sample.task for sample in p.samples)}:
                if own is None:
                    self._policies.pop(name, None)  # the generic policy
                else:
                    self._policies[name] = own
        return {}

    def predictor(
        self, examples: Sequence[Doc], functions: Sequence[Doc]
    ) -> Predictor | PlanPredictor:
        """The predictor for a task context, built once (learning is a pure function of it):
        plans of bare-object calls re-fill objects (``plans``), programs re-fill literals."""
        key = (tuple(d.text for d in examples), tuple(f"{d.name}\n{d.text}" for d in functions))
        if key not in self._predictors:
            if len(self._predictors) >= 16:
                self._predictors.clear()
            plan = plan_predictor(examples, functions)
            self._predictors[key] = plan or Predictor(Learner(examples, functions))
        return self._predictors[key]

    async def generate(self, request: GenerationRequest) -> Generation:
        own = self._policies.get(request.sample.task) if request.sample is not None else None
        reply = own(request) if own is not None else None
        if reply is not None:
            return Generation(text=reply, finish_reason="stop")
        if request.sample is None or request.context is None:
            raise ModelOutputError("baseline: the request carries no sample or task context")
        predictor = self.predictor(request.context.examples, request.context.functions)
        if isinstance(predictor, Predictor) and not predictor.learner.demos:
            raise ModelOutputError("baseline: no demonstrations in the task context to learn from")
        return Generation(text=predictor.predict(request.sample.query), finish_reason="stop")

    async def aclose(self) -> None:
        return None
