"""A non-LLM baseline: retrieve the nearest demonstration and re-fill its program's values.

It exists to give every task a cheap, deterministic reference point between "always wrong"
and the oracle, with no weights and no service. It only learns from what a prompt would
contain, the demonstrations and the API docs, and never runs any code:

1. Each demonstration program is cut into *blocks* (a line, or an assignment plus the line
   that uses its variable) whose literals (numbers, strings, lists, ``Date``-like triples,
   URL query values) are aligned with the values found in the demonstration's query.
2. From all demonstrations it learns which cue words around a value select which block slot
   (``3 bedrooms`` -> ``set_num_beds``), and which query words pick a constant (``sale`` ->
   ``"buy"``); quoted values in the docs name the allowed choices.
3. For a test query it takes the nearest demonstration (BM25) as a skeleton, substitutes the
   query's values by cue, drops blocks the query gives no value for, and adds blocks that
   other demonstrations taught for the remaining values.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote_plus

from toolbench.data.examples import parse_example
from toolbench.models.base import ModelOutputError
from toolbench.models.entities import Entity, extract_entities, stem, tokens
from toolbench.types import Doc, Generation, GenerationRequest

_LITERAL = re.compile(
    r"(?P<param>(?<=[?&])[\w.]+=[^&'\"\s]*)"
    r"|(?P<list>\[\s*(?:(?:\"[^\"\n]*\"|'[^'\n]*')\s*,?\s*)*\])"
    r"|(?P<str>\"[^\"\n]*\"|'[^'\n]*')"
    r"|(?P<num>(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]))"
)
_TRIPLE_GAP = re.compile(r"\s*,\s*")
_ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)")
_STOP = frozenset("the a an to of in on for and or with is be it as by at this that".split())
FEATURE_WEIGHTS = {"L1": 3.0, "L2": 0.8, "L": 0.4, "R1": 3.0, "R2": 0.8, "R": 0.4}
NONE = ("", -1)
WORD_WEIGHT = 0.5  # query words are correlated; naive Bayes would over-count them


@dataclass
class Lit:
    """A literal in a block: kind 'num', 'str', 'list', 'param' or 'date' (three numbers)."""

    kind: str
    spans: list[tuple[int, int]]
    value: Any
    quote: str = '"'


@dataclass
class Slot:
    kind: str  # 'number' | 'date' | 'place' | 'choice' | 'const'
    order: tuple[int, ...] = (0, 1, 2)  # for dates: which of (month, day, year) goes where


@dataclass
class Template:
    key: str
    text: str
    lits: list[Lit]
    functions: tuple[str, ...] = ()
    positions: list[float] = field(default_factory=list)
    variants: dict[int, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    words: dict[tuple[int, str], Counter[str]] = field(default_factory=lambda: defaultdict(Counter))


def parse_literals(block: str) -> list[Lit]:
    """The literals of a block, with runs of three integers in one call merged into a date."""
    lits: list[Lit] = []
    for m in _LITERAL.finditer(block):
        if m.group("param"):
            start = m.start() + m.group().index("=") + 1
            lits.append(Lit("param", [(start, m.end())], unquote_plus(block[start : m.end()])))
        elif m.group("list"):
            items = [s[1:-1] for s in re.findall(r"\"[^\"]*\"|'[^']*'", m.group())]
            lits.append(Lit("list", [m.span()], items, m.group()[1:2] if items else '"'))
        elif m.group("str"):
            lits.append(Lit("str", [m.span()], m.group()[1:-1], m.group()[0]))
        else:
            lits.append(Lit("num", [m.span()], float(m.group())))
    merged: list[Lit] = []
    for lit in lits:
        run = merged[-2:]
        if (
            lit.kind == "num"
            and len(run) == 2
            and all(r.kind == "num" and len(r.spans) == 1 for r in run)
            and _TRIPLE_GAP.fullmatch(block[run[0].spans[0][1] : run[1].spans[0][0]])
            and _TRIPLE_GAP.fullmatch(block[run[1].spans[0][1] : lit.spans[0][0]])
        ):
            del merged[-2:]
            spans = [run[0].spans[0], run[1].spans[0], lit.spans[0]]
            merged.append(Lit("date", spans, (run[0].value, run[1].value, lit.value)))
        else:
            merged.append(lit)
    return merged


def split_blocks(program: str) -> list[str]:
    """Lines, with ``x = ...`` joined to the next line that uses ``x``."""
    lines = [line for line in program.strip().splitlines() if line.strip()]
    blocks: list[str] = []
    i = 0
    while i < len(lines):
        m = _ASSIGN.match(lines[i])
        if m and i + 1 < len(lines) and re.search(rf"\b{m.group(1)}\b", lines[i + 1]):
            blocks.append(lines[i] + "\n" + lines[i + 1])
            i += 2
        else:
            blocks.append(lines[i])
            i += 1
    return blocks


def template_key(block: str, lits: list[Lit]) -> str:
    marks = {"num": "<N>", "str": "<S>", "list": "<L>", "param": "<P>", "date": "<D>"}
    out, pos = [], 0
    for lit in lits:
        out += [block[pos : lit.spans[0][0]], marks[lit.kind]]
        pos = lit.spans[-1][1]
    return "".join([*out, block[pos:]])


def _words(text: str) -> list[str]:
    return [stem(w) for w, _, _ in tokens(text)]


def _first_match(value: str, query_words: list[str]) -> int:
    """Index where all words of ``value`` occur in a row in the query (prefixes allowed), or -1."""
    want = _words(value)
    for i in range(len(query_words) - len(want) + 1 if want else 0):
        window = query_words[i : i + len(want)]
        if all(q == w or (len(w) >= 4 and q.startswith(w)) for q, w in zip(window, want)):
            return i
    return -1


def _surface_match(value: str, query_words: list[str]) -> float:
    """How strongly a choice value is named in the query: 1 in full, 0.6 by its head word."""
    if _first_match(value, query_words) >= 0:
        return 1.0
    want = _words(value)
    return 0.6 if len(want) > 1 and len(want[0]) >= 4 and want[0] in query_words else 0.0


def _stream(query: str, entities: list[Entity]) -> list[tuple[str, int]]:
    """Query tokens in order, each entity collapsed into one '<kind>' token (with its index)."""
    items = [(f"<{e.kind}>", e.start, i) for i, e in enumerate(entities)]
    for word, start, end in tokens(query):
        if not any(e.start <= start < e.end or start <= e.start < end for e in entities):
            items.append((stem(word), start, -1))
    items.sort(key=lambda item: item[1])
    return [(word, idx) for word, _, idx in items]


def entity_features(query: str, entities: list[Entity]) -> list[dict[str, float]]:
    """Weighted cue features for every entity: nearby words, magnitude, money, rank by kind."""
    stream = _stream(query, entities)
    where = {idx: pos for pos, (_, idx) in enumerate(stream) if idx >= 0}
    out = []
    for i, e in enumerate(entities):
        pos = where[i]
        feats: dict[str, float] = {}
        for d in range(1, 5):
            for side, j in (("L", pos - d), ("R", pos + d)):
                if 0 <= j < len(stream) and (side == "L" or d <= 3):
                    word = stream[j][0]
                    if word.startswith("<") and d > 1:
                        continue  # another value is only a cue right next to this one
                    tag = f"{side}{d}" if d <= 2 else side
                    feats[f"{tag}:{word}"] = FEATURE_WEIGHTS[tag]
                    feats.setdefault(f"{side}:{word}", FEATURE_WEIGHTS[side])
        if pos >= 2 and not stream[pos - 1][0].startswith("<"):
            feats[f"B:{stream[pos - 2][0]}_{stream[pos - 1][0]}"] = 2.0
        same = [x for x in entities if x.kind == e.kind]
        rank = same.index(e)
        feats[f"rank:{min(rank, 3)}"] = 0.5
        feats[f"last:{rank == len(same) - 1}"] = 0.3
        if e.kind == "number":
            v = float(e.value)
            feats[f"mag:{int(math.log10(v)) if v >= 1 else 0}"] = 1.0
            # Only the marked case is a cue; "not money" would just favour frequent slots.
            for flag, on in (("money", e.money), ("frac", v != int(v)), ("ordinal", e.ordinal)):
                if on:
                    feats[flag] = 1.0
        out.append(feats)
    return out


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class Learner:
    """What the demonstrations and docs teach: templates, cue associations, choice values."""

    def __init__(self, examples: Sequence[Doc], functions: Sequence[Doc]) -> None:
        self.demos: list[tuple[str, str]] = []
        for doc in examples:
            parsed = parse_example(doc.text)
            if parsed is not None and parsed[1]:
                self.demos.append(parsed)
        self.allowed = self._allowed_values(functions)
        self.function_names = sorted(self.allowed_names(functions), key=len, reverse=True)
        self.templates: dict[str, Template] = {}
        self.assoc: dict[str, Counter[tuple[str, int]]] = defaultdict(Counter)
        self.class_kind: dict[tuple[str, int], str] = {}
        self.date_orders: dict[tuple[str, int], tuple[int, ...]] = {}
        self.demo_keys: list[list[str]] = []
        self.demo_words: list[set[str]] = []
        self._named: dict[str, list[bool]] = {}
        self.vocab: Counter[str] = Counter()
        self.gazetteer: set[str] = set()
        self.place_cues: set[str] = set()
        self.known_words: set[str] = {w.lower() for vals in self.allowed.values() for w in vals}
        for query, _ in self.demos:
            self.known_words |= {w.lower() for w in re.findall(r"(?<![A-Za-z])[a-z]+", query)}
        for query, program in self.demos:
            self._learn(query, program)
        self._learn_docs(functions)
        self.df = Counter(w for q, _ in self.demos for w in set(self._retrieval_terms(q)))

    @staticmethod
    def allowed_names(functions: Sequence[Doc]) -> set[str]:
        return {doc.name for doc in functions if doc.name}

    @staticmethod
    def _allowed_values(functions: Sequence[Doc]) -> dict[str, list[str]]:
        """Quoted values in a doc's description are the function's allowed string values."""
        allowed: dict[str, list[str]] = {}
        for doc in functions:
            description = " ".join(line for line in doc.text.splitlines() if line.startswith("#"))
            quoted = r"(?<![A-Za-z])(?:'([^']+)'|\"([^\"]+)\")(?![A-Za-z])"
            values = [a or b for a, b in re.findall(quoted, description)]
            values = [v for v in dict.fromkeys(values) if not re.search(r"[(.=]", v)]
            if len(values) >= 2:
                allowed[doc.name] = values
        return allowed

    def _functions_of(self, block: str) -> tuple[str, ...]:
        """Doc names called in the block, the last line's (the call that matters) first."""
        last = block.splitlines()[-1]
        names = [n for n in self.function_names if re.search(rf"\b{re.escape(n)}\(", block)]
        return tuple(sorted(names, key=lambda n: f"{n}(" not in last))

    def _retrieval_terms(self, query: str) -> list[str]:
        entities = extract_entities(query, self.known_words, self.gazetteer, self.place_cues)
        return [word for word, _ in _stream(query, entities)]

    def align(self, query: str, block: str, lits: list[Lit], entities: list[Entity], used: set[int]) -> list[tuple[Slot, int]]:
        """Match each literal with an entity of the query (index, or -1 when none)."""
        query_words = _words(query)
        out: list[tuple[Slot, int]] = []
        for lit in lits:
            slot, hit = Slot("const"), -1
            for i, e in enumerate(entities):
                if i in used:
                    continue
                if lit.kind == "num" and e.kind == "number" and abs(e.value - lit.value) < 1e-9:
                    slot, hit = Slot("number"), i
                elif lit.kind == "date" and e.kind == "date":
                    order = _date_order(lit.value, e.value)
                    if order is not None:
                        slot, hit = Slot("date", order), i
                elif lit.kind in ("str", "param") and e.kind == "place":
                    if str(e.value).lower() == str(lit.value).lower():
                        slot, hit = Slot("place"), i
                if hit >= 0:
                    used.add(hit)
                    break
            if hit < 0 and lit.kind in ("str", "param", "list"):
                values = lit.value if lit.kind == "list" else [lit.value]
                if values and all(_surface_match(v, query_words) for v in values):
                    slot = Slot("choice")
            out.append((slot, hit))
        return out

    def _learn(self, query: str, program: str) -> None:
        entities = extract_entities(query, self.known_words, self.gazetteer, self.place_cues)
        feats = entity_features(query, entities)
        blocks = split_blocks(program)
        used: set[int] = set()
        keys = []
        query_words = set(_words(query))
        for b, block in enumerate(blocks):
            lits = parse_literals(block)
            key = template_key(block, lits)
            keys.append(key)
            tpl = self.templates.setdefault(key, Template(key, block, lits, self._functions_of(block)))
            tpl.positions.append(b / max(1, len(blocks) - 1))
            for p, ((slot, hit), lit) in enumerate(zip(self.align(query, block, lits, entities, used), lits)):
                if hit >= 0:
                    self.class_kind[(key, p)] = entities[hit].kind
                    self.date_orders[(key, p)] = slot.order
                    for f in feats[hit]:
                        self.assoc[f][(key, p)] += 1
                    if entities[hit].kind == "place":
                        self.gazetteer.add(str(entities[hit].value))
                        before = re.findall(r"[a-z]+", query[: entities[hit].start].lower())
                        self.place_cues.update(before[-1:])
                elif lit.kind in ("str", "param", "list"):
                    for value in lit.value if lit.kind == "list" else [lit.value]:
                        tpl.variants[p][value] += 1
                        for word in query_words:
                            tpl.words[(p, value)][word] += 1
        for i, e in enumerate(entities):
            if i not in used:
                for f in feats[i]:
                    self.assoc[f][NONE] += 1
        self.demo_keys.append(keys)
        self.demo_words.append(query_words)
        self.vocab.update(query_words)

    def _learn_docs(self, functions: Sequence[Doc]) -> None:
        """Doc descriptions add weak cues: 'number of bedrooms' makes 'bedroom' point there."""
        by_name = {doc.name: doc.text for doc in functions}
        for (key, p), _kind in sorted(self.class_kind.items()):
            for name in self.templates[key].functions[:1]:
                description = " ".join(l for l in by_name.get(name, "").splitlines() if l.startswith("#"))
                for word in set(_words(description)) - _STOP:
                    for side in ("L", "R"):
                        self.assoc[f"{side}:{word}"][(key, p)] += 0.3

    def rate(self, word: str) -> float:
        """Share of demonstrations whose query has ``word`` (smoothed)."""
        return (self.vocab[word] + 0.5) / (len(self.demos) + 1)

    def loglik(self, counts: Counter[str], n: int, query_words: set[str]) -> float:
        """Bernoulli naive Bayes: how well the query's words (present and absent) fit a class
        seen ``n`` times with these word counts. Damped by WORD_WEIGHT."""
        total = 0.0
        for word in sorted(self.vocab):
            p = (counts[word] + self.rate(word)) / (n + 1)
            total += math.log(p if word in query_words else 1 - p)
        return WORD_WEIGHT * total

    def named(self, key: str) -> list[bool]:
        """Per demonstration: does its query name one of the choices of block ``key``?"""
        if key not in self._named:
            tpl = self.templates[key]
            pool = [v for name in tpl.functions[:1] for v in self.allowed.get(name, [])]
            pool += [v for counter in tpl.variants.values() for v in counter]
            self._named[key] = [
                any(_surface_match(v, _words(q)) > 0 for v in pool) for q, _ in self.demos
            ]
        return self._named[key]

    def presence(self, key: str, query_words: set[str], named: bool) -> float:
        """Log-odds that a program for this query has block ``key`` (naive Bayes on words).

        Word probabilities are smoothed towards the word's overall rate, so a block found in
        every demonstration stays likely whatever the words.
        """
        has = [key in keys for keys in self.demo_keys]
        n_yes, n_no = sum(has), len(has) - sum(has)
        yes_words: Counter[str] = Counter()
        no_words: Counter[str] = Counter()
        for words, h in zip(self.demo_words, has):
            (yes_words if h else no_words).update(words)
        score = math.log((n_yes + 0.5) / (n_no + 0.5))
        score += self.loglik(yes_words, n_yes, query_words) - self.loglik(no_words, n_no, query_words)
        hits = [n == named for n in self.named(key)]
        yes = sum(hit for hit, h in zip(hits, has) if h)
        no = sum(hit for hit, h in zip(hits, has) if not h)
        return score + math.log((yes + 0.5) / (n_yes + 1)) - math.log((no + 0.5) / (n_no + 1))


def _date_order(lit: tuple[float, ...], date: tuple[int, int, int]) -> tuple[int, ...] | None:
    """Which date component (0 month, 1 day, 2 year) fills each of the three literals."""
    orders = [(0, 1, 2), (1, 0, 2), (2, 0, 1), (2, 1, 0), (0, 2, 1), (1, 2, 0)]
    for order in orders:
        if all(abs(lit[i] - date[c]) < 1e-9 for i, c in enumerate(order)):
            return order
    return None


THRESHOLD = 0.5  # least cue evidence for a value to be used at all
SKELETON_BONUS = 0.5  # a slot of the nearest demonstration is the likelier reading
FOUND_BONUS = 5.0  # a choice named in the query (log-odds added)


def _render(block: str, lits: list[Lit], raws: dict[int, list[str]]) -> str:
    """``block`` with the literal at position p replaced by ``raws[p]`` (one string per span)."""
    edits = [(span, raw) for p, lit in enumerate(lits) if p in raws for span, raw in zip(lit.spans, raws[p])]
    for (start, end), raw in sorted(edits, reverse=True):
        block = block[:start] + raw + block[end:]
    return block


def _entity_raw(lit: Lit, e: Entity, order: tuple[int, ...]) -> list[str]:
    if e.kind == "date":
        return [str(e.value[c]) for c in order]
    if e.kind == "number":
        return [_format_number(e.value)]
    value = str(e.value)
    value = value.title() if value.islower() else value
    if lit.kind == "param":
        return [value.replace(" ", "+")]
    return [f"{lit.quote}{value}{lit.quote}"]


class Predictor:
    """Writes a program for one query from a ``Learner``'s knowledge (see the module doc)."""

    def __init__(self, learner: Learner) -> None:
        self.learner = learner
        self.terms = [learner._retrieval_terms(q) for q, _ in learner.demos]
        self.avgdl = sum(map(len, self.terms)) / max(1, len(self.terms))

    def nearest(self, query: str) -> int:
        """BM25 over query words, with values masked so that the request's shape decides."""
        terms, n = self.learner._retrieval_terms(query), len(self.terms)
        best, best_score = 0, -1.0
        for i, doc in enumerate(self.terms):
            tf = Counter(doc)
            score = 0.0
            for t in set(terms):
                df = self.learner.df.get(t, 0)
                if tf[t]:
                    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                    norm = tf[t] + 1.2 * (0.25 + 0.75 * len(doc) / max(1.0, self.avgdl))
                    score += idf * tf[t] * 2.2 / norm
            if score > best_score:
                best, best_score = i, score
        return best

    def assign(self, query: str, entities: list[Entity], skeleton: set[str]) -> dict[tuple[str, int], int]:
        """Each entity to at most one slot class, best evidence first."""
        learner = self.learner
        candidates = []
        for i, feats in enumerate(entity_features(query, entities)):
            scores: Counter[tuple[str, int]] = Counter()
            for f, weight in feats.items():
                counts = learner.assoc.get(f)
                if counts:
                    total = sum(counts.values())
                    for cls, c in counts.items():
                        if cls == NONE or learner.class_kind[cls] == entities[i].kind:
                            scores[cls] += weight * (c / total) ** 2
            for cls in list(scores):
                if cls != NONE and cls[0] in skeleton:
                    scores[cls] += SKELETON_BONUS
            for cls, s in scores.items():
                if cls != NONE and s >= THRESHOLD and s > scores[NONE]:
                    candidates.append((-s, i, cls))
        assigned: dict[tuple[str, int], int] = {}
        for _, i, cls in sorted(candidates):
            if cls not in assigned and i not in assigned.values():
                assigned[cls] = i
        return assigned

    def choose(self, tpl: Template, p: int, query_words: list[str], current: Any) -> tuple[Any, float]:
        """Value of a choice/constant literal, and how strongly the query names it (0..1)."""
        lit = tpl.lits[p]
        allowed = [v for name in tpl.functions[:1] for v in self.learner.allowed.get(name, [])]
        if lit.kind == "list":
            pool = list(dict.fromkeys([*allowed, *tpl.variants[p]]))
            hits = [(i, v) for v in pool for i in [_first_match(v, query_words)] if i >= 0]
            return [v for _, v in sorted(hits)], 1.0 if hits else 0.0
        pool = list(dict.fromkeys([*tpl.variants[p], *allowed]))
        if len(pool) <= 1:
            return current, 1.0
        scored = []
        total = sum(tpl.variants[p].values())
        for v in pool:
            n_v = tpl.variants[p][v]
            score = math.log((n_v + 0.5) / (total + 1))
            score += self.learner.loglik(tpl.words[(p, v)], n_v, set(query_words))
            found = _surface_match(v, query_words)
            score += FOUND_BONUS * found + (SKELETON_BONUS if v == current else 0.0)
            scored.append((score, found, v))
        _, found, value = max(scored, key=lambda s: (s[0], s[1], -pool.index(s[2])))
        return value, found

    def fill(self, key: str, block: str, lits: list[Lit], ctx: _Context, skeleton: bool) -> str | None:
        """The block with this query's values, or None when the query gives it no value."""
        learner, raws = self.learner, {}
        for p, lit in enumerate(lits):
            cls = (key, p)
            if cls in learner.class_kind:
                if cls in ctx.assigned:
                    e = ctx.entities[ctx.assigned[cls]]
                    raws[p] = _entity_raw(lit, e, learner.date_orders.get(cls, (0, 1, 2)))
                elif skeleton and (lit.kind, str(lit.value)) in ctx.copies:
                    raws[p] = ctx.copies[(lit.kind, str(lit.value))]
                else:
                    return None
            elif lit.kind in ("str", "param", "list"):
                value, found = self.choose(learner.templates[key], p, ctx.words, lit.value)
                if lit.kind == "list":
                    if not value:
                        return None
                    raws[p] = ["[" + ", ".join(f"{lit.quote}{v}{lit.quote}" for v in value) + "]"]
                    continue
                odds = learner.presence(key, set(ctx.words), found > 0)
                if odds + (SKELETON_BONUS if skeleton else 0.0) <= 0:
                    return None
                raws[p] = [f"{lit.quote}{value}{lit.quote}" if lit.kind == "str" else str(value)]
        return _render(block, lits, raws)

    def predict(self, query: str) -> str:
        learner = self.learner
        entities = extract_entities(query, learner.known_words, learner.gazetteer, learner.place_cues)
        sk = self.nearest(query)
        sk_keys = learner.demo_keys[sk]
        ctx = _Context(entities, self.assign(query, entities, set(sk_keys)), _words(query))
        sk_blocks = [(b, parse_literals(b)) for b in split_blocks(learner.demos[sk][1])]
        for block, lits in sk_blocks:
            key = template_key(block, lits)
            for p, lit in enumerate(lits):
                if (key, p) in ctx.assigned:
                    e = entities[ctx.assigned[(key, p)]]
                    order = learner.date_orders.get((key, p), (0, 1, 2))
                    ctx.copies.setdefault((lit.kind, str(lit.value)), _entity_raw(lit, e, order))
        out: list[tuple[float, int, str]] = []
        functions: set[str] = set()
        for b, (block, lits) in enumerate(sk_blocks):
            key = template_key(block, lits)
            text = self.fill(key, block, lits, ctx, skeleton=True)
            if text is not None:
                out.append((b / max(1, len(sk_blocks) - 1), len(out), text))
                functions.update(learner.templates[key].functions[:1])
        extra = [cls[0] for cls in sorted(ctx.assigned)] + sorted(learner.templates)
        for key in dict.fromkeys(extra):
            tpl = learner.templates[key]
            if key in sk_keys or set(tpl.functions[:1]) & functions or not tpl.lits:
                continue
            text = self.fill(key, tpl.text, tpl.lits, ctx, skeleton=False)
            if text is not None:
                out.append((sum(tpl.positions) / len(tpl.positions), len(out), text))
                functions.update(tpl.functions[:1])
        return "\n".join(text for _, _, text in sorted(out))


@dataclass
class _Context:
    entities: list[Entity]
    assigned: dict[tuple[str, int], int]
    words: list[str]
    copies: dict[tuple[str, str], list[str]] = field(default_factory=dict)


class BaselineModel:
    """The ``baseline`` model: nearest demonstration, re-filled with the query's values."""

    name = "baseline"
    cacheable = False

    def __init__(self) -> None:
        self._predictors: dict[tuple[tuple[str, ...], tuple[str, ...]], Predictor] = {}

    def predictor(self, examples: Sequence[Doc], functions: Sequence[Doc]) -> Predictor:
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
