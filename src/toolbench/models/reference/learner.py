"""What the baseline learns from a task's demonstrations and API docs (see ``baseline``).

Learning is a pure function of the prompt material: block templates and the values the
demonstrations gave them, cue words that tie a query value to a block slot, the docs' allowed
values, and the choice (if any) that decides which blocks a program may and must have.
"""

from __future__ import annotations

import calendar
import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence

from toolbench.data.examples import parse_example
from toolbench.models.reference.entities import (
    Entity,
    entity_features,
    extract_entities,
    surface_match,
    words,
)
from toolbench.models.reference.programs import (
    EPOCH,
    QUOTED,
    Lit,
    Mode,
    ParamDoc,
    Template,
    as_number,
    date_order,
    find_mode,
    free_names,
    param_docs,
    parse_literals,
    split_blocks,
    template_key,
    url_path,
)
from toolbench.types import Doc

_STOP_WORDS = "the a an to of in on for and or with is be it as by at this that"
_STOP = frozenset(_STOP_WORDS.split())
NONE = ("", -1)  # the class of values no block uses
WORD_WEIGHT = 0.5  # query words are correlated; naive Bayes would over-count them
NAMED_WEIGHT = 4.0  # a choice named in the query is the strongest word evidence


_RANGE_JOINS = frozenset(["", "-", "–", "to", "and", "through", "until", "till"])


def joined(text: str, a: Entity, b: Entity) -> bool:
    """Whether two values of one kind are written as a range: '150 and 250', '$30-$280'
    ('2br 4.5-bath' is two values, not a range)."""
    gap = text[a.end : b.start].strip().lower()
    return a.kind == b.kind and gap in _RANGE_JOINS


def counted_word(feats: dict[str, float]) -> str:
    """The content word right after a number (what it counts), or ''."""
    word = next((f[3:] for f in feats if f.startswith("R1:")), "")
    return word if word.isalpha() and word not in _STOP else ""


def epoch(date: tuple[int, int, int]) -> float:
    """Unix seconds at midnight UTC of a (month, day, year) date."""
    month, day, year = date
    return float(calendar.timegm((year, month, day, 0, 0, 0)))


class Learner:
    """What the demonstrations and docs teach: templates, cue associations, choice values."""

    def __init__(self, examples: Sequence[Doc], functions: Sequence[Doc]) -> None:
        parsed = [parse_example(doc.text) for doc in examples]
        self.demos = [p for p in parsed if p is not None and p[1]]
        # Tasks whose demonstrations are all one block (one curl request) get one block back.
        self.max_blocks = max((len(split_blocks(program)) for _, program in self.demos), default=1)
        # Python demonstrations: the names they read without binding are what a program is
        # given (the task's objects, builtins); a written program may read no other.
        reads = [free_names(program) for _, program in self.demos]
        self.given: frozenset[str] | None = None
        if self.demos and all(r is not None for r in reads):
            self.given = frozenset(n for r in reads if r is not None for n in r)
        self.allowed: dict[str, list[str]] = {}
        self.params = param_docs([doc.text for doc in functions])
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
        for params in self.params.values():  # 'XML', 'Celsius': documented values, no places
            for d in params.values():
                for value, gloss in d.glosses.items():
                    self.known_words |= set(gloss) | set(words(value))
                    self.choice_phrases.add(tuple(words(value)))
        for query, _ in self.demos:  # words written in lower case are not names
            self.known_words |= set(re.findall(r"(?<![A-Za-z])[a-z]+", query))
        # Per slot, the content words seen right after its numbers ('adults' for num_adults).
        self.counted: dict[tuple[str, int], Counter[str]] = {}
        self.ranges: Counter[tuple[tuple[str, int], tuple[str, int]]] = Counter()
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

    def runnable(self, program: str) -> bool:
        """Whether a written program can run as far as its text tells: it parses and reads
        only names the demonstrations are given or that it binds first. Programs of other
        languages (curl requests) are not checked; an empty program never runs."""
        if not program.strip():
            return False
        if self.given is None:
            return True
        names = free_names(program)
        return names is not None and names <= self.given

    def param_doc(self, block: str, lit: Lit) -> ParamDoc | None:
        """What the docs of the block's endpoint say of a URL parameter literal, if anything."""
        if lit.kind != "param":
            return None
        return self.params.get(url_path(block), {}).get(lit.name)

    def url_extras(
        self, block: str, lits: list[Lit], query_words: list[str]
    ) -> list[tuple[str, str]]:
        """Documented choices of the block's endpoint that it lacks and the query names
        ('in kelvin' adds units=standard to a skeleton without units)."""
        have = {lit.name for lit in lits if lit.kind == "param"}
        docs = self.params.get(url_path(block), {}) if have else {}
        named = [(n, d.named(query_words)) for n, d in sorted(docs.items()) if n not in have]
        return [(n, v) for n, v in named if v is not None]

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
        hits: dict[int, tuple[str, int]] = {}  # query value -> the slot it surely filled
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
                if e.kind == "place":
                    self.gazetteer.add(str(e.value))
                    self.place_cues.update(re.findall(r"[a-z]+", query[: e.start].lower())[-1:])
                # With equal values ('book 2 rooms for 2 adults') which one a call took is
                # settled later, by the cues the unambiguous values teach.
                equal = self._equal_values(lit, entities)
                if len(equal) > 1:
                    twins.setdefault((lit.kind, str(lit.value)), (equal, []))[1].append((key, p))
                    continue
                hits[hit] = (key, p)
                if e.kind == "number":
                    self.counted.setdefault((key, p), Counter())[counted_word(feats[hit])] += 1
                for f in feats[hit]:
                    self._count(f, (key, p))
        self._learn_ranges(query, entities, hits)
        pending = {i for equal, _ in twins.values() for i in equal}
        for i in range(len(entities)):
            if i not in used and i not in pending:
                for f in feats[i]:
                    self._count(f, NONE)
        self._deferred += [(feats, classes, equal) for equal, classes in twins.values()]

    def counts_other_things(self, cls: tuple[str, int], word: str) -> bool:
        """Whether a number followed by ``word`` cannot fill ``cls``: the slot's numbers were
        always followed by a noun naming what they count, never this one, and the word is a
        cue of other slots ('3 nights' is not a number of children, however 'for 3' reads)."""
        seen = self.counted.get(cls)
        if not word or not seen or seen[word] or sum(seen.values()) < 2 or seen[""]:
            return False
        cues = self.assoc.get(f"R:{word}", {})
        return any(other != NONE and other != cls for other in cues)

    def _learn_ranges(
        self, query: str, entities: list[Entity], hits: dict[int, tuple[str, int]]
    ) -> None:
        """Slots whose values the demonstrations write side by side ('between $150 and $250',
        '$30-$280'): a range's two ends, so either end can find the other."""
        for i in range(len(entities) - 1):
            if i in hits and i + 1 in hits and joined(query, entities[i], entities[i + 1]):
                self.ranges[(hits[i], hits[i + 1])] += 1

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
            if lit.kind in ("str", "param") and e.kind in ("place", "code") and same:
                return i, (0, 1, 2)
            if lit.kind == "param" and e.kind == "number" and as_number(lit.value) == e.value:
                return i, (0, 1, 2)
            if lit.kind == "param" and e.kind == "date" and as_number(lit.value) == epoch(e.value):
                return i, EPOCH
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
