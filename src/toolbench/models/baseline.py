"""A non-LLM baseline: retrieve the nearest demonstration and re-fill its program's values.

It gives every task a cheap, deterministic reference point between "always wrong" and the
oracle, with no weights and no service. It learns only from what a prompt would contain, the
demonstrations and the API docs (it imports no simulator and knows no API names), and it never
runs any code:

1. Each demonstration program is cut into *blocks* (a line, or an assignment plus the line that
   uses its variable). Their literals (numbers, strings, lists, ``Date``-like number triples,
   URL query values) are aligned with the values found in the demonstration's query.
2. From all demonstrations it learns which cue words around a value pick which block slot
   ('3 bedrooms' -> the block that took 3), which query words go with a constant ('sale' ->
   "buy") and with a block being there at all; quoted values in the docs name the choices.
3. For a test query it takes the nearest demonstration (BM25) as a skeleton, substitutes the
   query's values by cue, drops blocks the query gives no value for, and adds blocks that
   other demonstrations taught for the values left over.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolbench.data.examples import parse_example
from toolbench.models.base import ModelOutputError
from toolbench.models.entities import (
    Entity,
    entity_features,
    extract_entities,
    first_match,
    stream,
    surface_match,
    words,
)
from toolbench.models.programs import (
    QUOTED,
    Lit,
    Mode,
    Template,
    as_number,
    date_order,
    entity_raw,
    find_mode,
    parse_literals,
    render,
    split_blocks,
    template_key,
)
from toolbench.types import Doc, Generation, GenerationRequest

_STOP_WORDS = "the a an to of in on for and or with is be it as by at this that"
_STOP = frozenset(_STOP_WORDS.split())
NONE = ("", -1)  # the class of values no block uses
THRESHOLD = 0.5  # least cue evidence for a value to be used at all
SKELETON_BONUS = 0.5  # a block of the nearest demonstration is the likelier reading
FOUND_BONUS = 5.0  # a choice named in the query that no demonstration used (log-odds)
WORD_WEIGHT = 0.5  # query words are correlated; naive Bayes would over-count them
NAMED_WEIGHT = 4.0  # a choice named in the query is the strongest word evidence
REQUIRED_BONUS = 0.5  # under a mode, a value goes to a call that mode always makes, if it fits
MISSING_PENALTY = 3.0  # a call the mode always makes but the query gives no value for


class Learner:
    """What the demonstrations and docs teach: templates, cue associations, choice values."""

    def __init__(self, examples: Sequence[Doc], functions: Sequence[Doc]) -> None:
        parsed = [parse_example(doc.text) for doc in examples]
        self.demos = [p for p in parsed if p is not None and p[1]]
        # Tasks whose demonstrations are all one block (one curl request) get one block back.
        self.max_blocks = max((len(split_blocks(program)) for _, program in self.demos), default=1)
        self.allowed: dict[str, list[str]] = {}
        for doc in functions:  # quoted values in a description are the allowed values
            description = " ".join(x for x in doc.text.splitlines() if x.startswith("#"))
            values = [a or b for a, b in QUOTED.findall(description)]
            values = [v for v in dict.fromkeys(values) if not re.search(r"[(.=]", v)]
            if len(values) >= 2:
                self.allowed[doc.name] = values
        self.function_names = sorted({d.name for d in functions if d.name}, key=len, reverse=True)
        self.templates: dict[str, Template] = {}
        self.assoc: dict[str, dict[tuple[str, int], float]] = {}
        self.class_kind: dict[tuple[str, int], str] = {}
        self.date_orders: dict[tuple[str, int], tuple[int, ...]] = {}
        self.demo_keys: list[list[str]] = []
        self.demo_words: list[list[str]] = []
        self.gazetteer: set[str] = set()
        self.place_cues: set[str] = set()
        self.known_words = {w for vals in self.allowed.values() for v in vals for w in words(v)}
        self.choice_phrases = {tuple(words(v)) for vals in self.allowed.values() for v in vals}
        for query, _ in self.demos:  # words written in lower case are not names
            self.known_words |= set(re.findall(r"(?<![A-Za-z])[a-z]+", query))
        self._deferred: list[tuple[list[dict[str, float]], list[tuple[str, int]], list[int]]] = []
        for query, program in self.demos:
            self._learn(query, program)
        self._settle()
        by_name = {doc.name: doc.text for doc in functions}
        for key, p in sorted(self.class_kind):  # doc words are weak cues for their slots
            for name in self.templates[key].functions[:1]:
                text = " ".join(x for x in by_name[name].splitlines() if x.startswith("#"))
                for word in sorted(set(words(text)) - _STOP):
                    for side in ("L", "R"):
                        cues = self.assoc.setdefault(f"{side}:{word}", {})
                        cues[(key, p)] = cues.get((key, p), 0.0) + 0.3
        self.vocab = Counter(w for ws in self.demo_words for w in set(ws))
        self.mode: Mode | None = find_mode(
            self.demo_keys, self.templates, {key for key, _ in self.class_kind}
        )
        self._features: dict[str, list[set[str]]] = {}

    def entities(self, query: str) -> list[Entity]:
        """The query's values; a capitalised choice ('2 Queen Bed rooms') is no place name."""
        found = extract_entities(query, self.known_words, self.gazetteer, self.place_cues)
        return [
            e
            for e in found
            if e.kind != "place" or tuple(words(e.value)) not in self.choice_phrases
        ]

    def _learn(self, query: str, program: str) -> None:
        entities = self.entities(query)
        feats = entity_features(query, entities, self.choice_phrases)
        blocks = split_blocks(program)
        used: set[int] = set()
        twins: dict[tuple[str, str], tuple[list[int], list[tuple[str, int]]]] = {}
        demo = len(self.demo_keys)
        self.demo_keys.append([])
        self.demo_words.append(words(query))
        for b, block in enumerate(blocks):
            lits = parse_literals(block)
            key = template_key(block, lits)
            self.demo_keys[-1].append(key)
            last = block.splitlines()[-1]
            # Docs this block uses: called by name (the last line's call first), else named in
            # it (an endpoint like '/weather?').
            names = [n for n in self.function_names if re.search(rf"\b{re.escape(n)}\b", block)]
            names.sort(key=lambda n: (f"{n}(" not in last, f"{n}(" not in block))
            tpl = self.templates.setdefault(key, Template(key, block, lits, tuple(names)))
            tpl.positions.append(b / max(1, len(blocks) - 1))
            for p, lit in enumerate(lits):
                hit, order = self._align(lit, entities, used)
                again, again_order = self._align(lit, entities, set())
                if hit < 0 and again >= 0:
                    # A value used twice (destination = hotel city) makes a slot too, but the
                    # cues around it belong to its first use.
                    self.class_kind[(key, p)] = entities[again].kind
                    self.date_orders.setdefault((key, p), again_order)
                    continue
                if hit < 0:
                    if lit.kind in ("str", "param", "list"):
                        tpl.values.setdefault(p, []).append((demo, lit.value))
                    continue
                used.add(hit)
                e = entities[hit]
                self.class_kind[(key, p)] = e.kind
                self.date_orders[(key, p)] = order
                # With equal values ('book 2 rooms for 2 adults') which one a call took is
                # settled later, by the cues the unambiguous values teach.
                equal = self._equal_values(lit, entities)
                if len(equal) > 1:
                    twins.setdefault((lit.kind, str(lit.value)), (equal, []))[1].append((key, p))
                    continue
                for f in feats[hit]:
                    self._count(f, (key, p))
                if e.kind == "place":
                    self.gazetteer.add(str(e.value))
                    self.place_cues.update(re.findall(r"[a-z]+", query[: e.start].lower())[-1:])
        pending = {i for equal, _ in twins.values() for i in equal}
        for i in range(len(entities)):
            if i not in used and i not in pending:
                for f in feats[i]:
                    self._count(f, NONE)
        self._deferred += [(feats, classes, equal) for equal, classes in twins.values()]

    def _equal_values(self, lit: Lit, entities: list[Entity]) -> list[int]:
        """Indices of every query value equal to the literal, in order."""
        found: list[int] = []
        while len(found) < 8:
            i, _ = self._align(lit, entities, set(found))
            if i < 0:
                break
            found.append(i)
        return sorted(found)

    def cue_score(self, feats: dict[str, float], cls: tuple[str, int]) -> float:
        """How strongly the cue features point at slot ``cls`` (squared share, weighted)."""
        score = 0.0
        for f, weight in feats.items():
            counts = self.assoc.get(f, {})
            score += weight * (counts.get(cls, 0.0) / (sum(counts.values()) or 1.0)) ** 2
        return score

    def _settle(self) -> None:
        """Teach the cues of equal values: the calls that took them get the values whose
        cues (learned from unambiguous values) fit best; ties keep the written order."""
        for feats, classes, equal in self._deferred:
            options = list(itertools.islice(itertools.permutations(equal, len(classes)), 720))
            scored = [
                (
                    sum(self.cue_score(feats[i], c) for c, i in zip(classes, pick, strict=True)),
                    -n,
                    pick,
                )
                for n, pick in enumerate(options)
            ]
            if not scored:
                continue
            pick = max(scored)[2]
            for cls, i in zip(classes, pick, strict=True):
                for f in feats[i]:
                    self._count(f, cls)
            for i in set(equal) - set(pick):
                for f in feats[i]:
                    self._count(f, NONE)

    def _count(self, feature: str, cls: tuple[str, int]) -> None:
        cues = self.assoc.setdefault(feature, {})
        cues[cls] = cues.get(cls, 0.0) + 1.0

    @staticmethod
    def _align(lit: Lit, entities: list[Entity], used: set[int]) -> tuple[int, tuple[int, ...]]:
        """The first unused query value equal to the literal: (index or -1, date order)."""
        for i, e in enumerate(entities):
            if i in used:
                continue
            if lit.kind == "num" and e.kind == "number" and abs(e.value - lit.value) < 1e-9:
                return i, (0, 1, 2)
            if lit.kind == "date" and e.kind == "date":
                order = date_order(lit.value, e.value)
                if order is not None:
                    return i, order
            same = str(e.value).lower() == str(lit.value).lower()
            if lit.kind in ("str", "param") and e.kind == "place" and same:
                return i, (0, 1, 2)
            if lit.kind == "param" and e.kind == "number" and as_number(lit.value) == e.value:
                return i, (0, 1, 2)
        return -1, (0, 1, 2)

    def choices(self, tpl: Template, p: int | None = None) -> list[str]:
        """Values literal ``p`` (default: any literal) of a template can take: those the demos
        used, plus the docs' allowed values when they fit (they overlap what was used, or
        this is the template's only literal)."""
        positions = [p] if p is not None else sorted(tpl.values)
        allowed = [v for name in tpl.functions[:1] for v in self.allowed.get(name, [])]
        pool: list[str] = []
        for q in positions:
            seen = [
                str(x)
                for _, v in tpl.values.get(q, [])
                for x in (v if isinstance(v, list) else [v])
            ]
            if set(seen) & set(allowed) or len(tpl.lits) == 1:
                pool += allowed
            pool += seen
        return list(dict.fromkeys(pool))

    def features(self, query_words: list[str], tpl: Template) -> set[str]:
        """Query words plus '=value' for each of the template's choices the query names."""
        named = {f"={v}" for v in self.choices(tpl) if surface_match(v, query_words) > 0}
        return set(query_words) | named

    def demo_features(self, key: str) -> list[set[str]]:
        if key not in self._features:
            tpl = self.templates[key]
            self._features[key] = [self.features(ws, tpl) for ws in self.demo_words]
        return self._features[key]

    def loglik(self, key: str, demos: Sequence[int], query: set[str]) -> float:
        """Bernoulli naive Bayes log-likelihood of the query's features (present and absent)
        under the class made of ``demos``; probabilities are smoothed towards each feature's
        overall rate; plain words are damped by WORD_WEIGHT, named choices weigh more."""
        feats = self.demo_features(key)
        vocab = Counter(f for fs in feats for f in fs)
        counts = Counter(f for d in demos for f in feats[d])
        total = 0.0
        for f in sorted(vocab):
            rate = (vocab[f] + 0.5) / (len(feats) + 1)
            p = (counts[f] + rate) / (len(demos) + 1)
            weight = NAMED_WEIGHT if f.startswith("=") else WORD_WEIGHT
            total += weight * math.log(p if f in query else 1 - p)
        return total

    def presence(self, key: str, query: set[str]) -> float:
        """Log-odds that the program for a query with these features has block ``key``."""
        yes = [d for d, keys in enumerate(self.demo_keys) if key in keys]
        no = [d for d, keys in enumerate(self.demo_keys) if key not in keys]
        prior = math.log((len(yes) + 0.5) / (len(no) + 0.5))
        return prior + self.loglik(key, yes, query) - self.loglik(key, no, query)


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

    def allows(self, key: str) -> bool:
        return self.allowed is None or key in self.allowed


class Predictor:
    """Writes the program for one query from a ``Learner``'s knowledge (see the module doc)."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner
        self.terms = [self._terms(q) for q, _ in learner.demos]
        self.df = Counter(t for terms in self.terms for t in set(terms))
        self.avgdl = sum(map(len, self.terms)) / max(1, len(self.terms))
        self.written: set[str] = set()  # block keys of the program being written

    def _terms(self, query: str) -> list[str]:
        return [w for w, _ in stream(query, self.learner.entities(query))]

    def nearest(self, query: str, among: Sequence[int] = ()) -> int:
        """BM25 over query words, values masked to their kind so the request's shape decides;
        only the demonstrations ``among`` compete when given."""
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
        return max(range(n), key=lambda i: (scores[i], -i))

    def slot_scores(
        self, query: str, q: _Query, skeleton: set[str]
    ) -> list[dict[tuple[str, int], float]]:
        """Per query value, the cue evidence for each slot of its kind the reading allows."""
        learner, table = self.learner, []
        for i, feats in enumerate(entity_features(query, q.entities, learner.choice_phrases)):
            scores: dict[tuple[str, int], float] = {NONE: 0.0}
            for f, weight in feats.items():
                counts = learner.assoc.get(f, {})
                total = sum(counts.values()) or 1.0
                for cls, c in counts.items():
                    fits = cls == NONE or q.allows(cls[0])
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
        self.fill_required(q, table)
        return evidence

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
        return max(self.choice_scores(tpl, p, q.words, current))[2]

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
            score = math.log((len(demos) + 0.5) / (len(seen) + 1))
            score += learner.loglik(tpl.key, demos, feats)
            score += 0.0 if demos else FOUND_BONUS * surface_match(v, query_words)
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
            if slots[p]:
                if cls in q.assigned:
                    e = q.entities[q.assigned[cls]]
                    raws[p] = entity_raw(lit, e, learner.date_orders[cls])
                elif skeleton and (lit.kind, str(lit.value)) in q.copies:
                    raws[p] = q.copies[(lit.kind, str(lit.value))]
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
        # A block of choices only (room type, buy/rent) is kept when the query calls for it.
        choices_only = not any(slots) and any(lit.kind in ("str", "param") for lit in lits)
        named = any(len(learner.choices(tpl, p)) > 1 for p in range(len(lits)))
        if choices_only and named and tpl.key not in q.forced:
            odds = learner.presence(tpl.key, learner.features(q.words, tpl))
            if odds + (SKELETON_BONUS if skeleton else 0.0) <= 0:
                return None
        return render(block, lits, raws)

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
            missing = sum(1 for key in q.required if key not in self.written)
            score = prior.get(value, 0.0) + evidence - MISSING_PENALTY * missing
            if best is None or (score, -i) > best[:2]:
                best = (score, -i, text)
        assert best is not None  # a mode has at least two values
        return best[2]

    def program(self, query: str, q: _Query, among: Sequence[int] = ()) -> tuple[str, float]:
        """The program for ``q`` and the evidence behind its values; the skeleton is the
        nearest demonstration ``among`` those given. Records the block keys written."""
        learner = self.learner
        sk = self.nearest(query, among)
        sk_keys = learner.demo_keys[sk]
        evidence = self.assign(query, q, set(sk_keys))
        self.written = set()
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
            if text is not None:
                out.append((b / max(1, len(sk_blocks) - 1), len(out), text))
                functions.update(tpl.functions[:1])
                self.written.add(tpl.key)
        if learner.max_blocks == 1:
            # One action per answer: the skeleton's, re-filled where the query allows.
            return (out[0][2] if out else sk_blocks[0][0] if sk_blocks else ""), evidence
        extra = [cls[0] for cls in sorted(q.assigned)] + sorted(learner.templates)
        for key in dict.fromkeys(extra):
            tpl = learner.templates[key]
            skip = key in sk_keys or not tpl.lits or set(tpl.functions[:1]) & functions
            if skip or not q.allows(key):
                continue
            text = self.fill(tpl, tpl.text, tpl.lits, q, skeleton=False)
            if text is not None:
                out.append((sum(tpl.positions) / len(tpl.positions), len(out), text))
                functions.update(tpl.functions[:1])
                self.written.add(key)
        return "\n".join(text for _, _, text in sorted(out)), evidence


class BaselineModel:
    """The ``baseline`` model: nearest demonstration, re-filled with the query's values."""

    name = "baseline"
    cacheable = False

    def __init__(self) -> None:
        self._predictors: dict[tuple[tuple[str, ...], tuple[str, ...]], Predictor] = {}

    def predictor(self, examples: Sequence[Doc], functions: Sequence[Doc]) -> Predictor:
        """The predictor for a task context, built once (learning is a pure function of it)."""
        key = (tuple(d.text for d in examples), tuple(f"{d.name}\n{d.text}" for d in functions))
        if key not in self._predictors:
            if len(self._predictors) >= 16:
                self._predictors.clear()
            self._predictors[key] = Predictor(Learner(examples, functions))
        return self._predictors[key]

    async def generate(self, request: GenerationRequest) -> Generation:
        if request.sample is None or request.context is None:
            raise ModelOutputError("baseline: the request carries no sample or task context")
        predictor = self.predictor(request.context.examples, request.context.functions)
        if not predictor.learner.demos:
            raise ModelOutputError("baseline: no demonstrations in the task context to learn from")
        return Generation(text=predictor.predict(request.sample.query), finish_reason="stop")

    async def aclose(self) -> None:
        return None
