"""Plan-aware re-filling: the baseline for tasks whose programs are plans of object calls.

Why this exists: a plan line such as ``Agent.Grab(mug)`` has no literal, so the literal
re-filling of ``baseline`` would copy the nearest demonstration's plan unchanged. Here the
*objects* are the values. Everything is learned from the prompt material only (the API docs
with their allowed-object lists, and the demonstrations), never from a simulator or labels:

1. The docs give each action's parameters and their allowed objects. An object is named in
   text by its words (``dining_table`` -> "dining table") or its last word when no other
   object shares it (``food_apple`` -> "apple"); places are the objects only one action
   accepts (the rooms ``WalkTo`` takes).
2. The demonstrations teach which place each object is in (the last place walked to before
   it is used, or a place sharing its first word: ``kitchen_cabinet`` -> kitchen).
3. For a query, each demonstration is scored by BM25 over its query words with object words
   masked, plus how well its named objects can be swapped for the query's: the swap must be
   allowed by every action that used the demonstration's object. The best one's plan keeps
   its actions; its named objects become the query's, and a walk to a place goes to the
   place of the next object used (or to that object when its place is unknown).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from toolbench.data.examples import parse_example
from toolbench.types import Doc

_CALL = re.compile(r"^\s*([A-Za-z_][\w.]*)\((.*)\)\s*$")
_IDENT = re.compile(r"^[A-Za-z_]\w*$")
_WORD = re.compile(r"[a-z]+")
_QUOTED = re.compile(r"'([^'\[\]]+)'")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "to",
        "of",
        "in",
        "on",
        "for",
        "and",
        "or",
        "with",
        "is",
        "be",
        "it",
        "as",
        "by",
        "at",
        "this",
        "that",
    ]
)
COMPATIBLE_WEIGHT = 2.0  # evidence of a demonstration whose named objects all swap cleanly
COUNT_WEIGHT = 1.0  # it names as many objects as the query does


def parse_call(line: str) -> tuple[str, list[str]] | None:
    """(action, object arguments) of a plan line, or None if it is not a bare-object call."""
    match = _CALL.match(line)
    if match is None:
        return None
    args = [a.strip() for a in match.group(2).split(",")] if match.group(2).strip() else []
    return (match.group(1), args) if all(_IDENT.match(a) for a in args) else None


def _doc_signature(doc: Doc) -> tuple[str, dict[int, set[str]]] | None:
    """(action, position -> allowed objects) from a doc whose description lists, for each
    parameter, the objects it takes ("'object1' can only be one of [...]")."""
    lines = [x for x in doc.text.splitlines() if x.strip()]
    call = next((parse_call(x) for x in reversed(lines) if parse_call(x)), None)
    if call is None:
        return None
    description = " ".join(x for x in lines if x.lstrip().startswith("#"))
    allowed: dict[int, set[str]] = {}
    for p, param in enumerate(call[1]):
        match = re.search(rf"'{re.escape(param)}'[^\[]*\[([^\]]*)\]", description)
        if match is None:
            return None
        allowed[p] = set(_QUOTED.findall(match.group(1)))
    return call[0], allowed


@dataclass
class PlanVocab:
    """Actions, their allowed objects, and the words that name each object."""

    allowed: dict[tuple[str, int], set[str]]
    places: set[str]
    phrases: dict[tuple[str, ...], str]

    @classmethod
    def from_docs(cls, functions: Sequence[Doc]) -> PlanVocab | None:
        allowed: dict[tuple[str, int], set[str]] = {}
        for doc in functions:
            signature = _doc_signature(doc)
            if signature is not None:
                for p, objects in signature[1].items():
                    allowed[(signature[0], p)] = objects
        if not allowed:
            return None
        users: defaultdict[str, set[str]] = defaultdict(set)
        for (action, _), objects in allowed.items():
            for obj in objects:
                users[obj].add(action)
        places = {obj for obj, acts in users.items() if len(acts) == 1 and len(users) > 1}
        full = {tuple(obj.lower().split("_")): obj for obj in users}
        heads = Counter(words[-1] for words in full)
        phrases: dict[tuple[str, ...], str] = {
            (w[-1],): o for w, o in full.items() if heads[w[-1]] == 1 and len(w) > 1
        }
        phrases.update(full)  # a whole name wins over another object's last word
        return cls(allowed, places, phrases)

    def mentions(self, text: str) -> list[str]:
        """Objects the text names, in order, longest phrase first at each word."""
        tokens = _WORD.findall(text.lower())
        found: list[str] = []
        i = 0
        while i < len(tokens):
            for n in (3, 2, 1):
                obj = self.phrases.get(tuple(tokens[i : i + n]))
                if obj is None and n == 1 and tokens[i].endswith("s"):
                    obj = self.phrases.get((tokens[i][:-1],))  # "plates" names plate
                if obj is not None:
                    if obj not in found:
                        found.append(obj)
                    i += n - 1
                    break
            i += 1
        return found

    def fits(self, new: str, uses: set[tuple[str, int]]) -> bool:
        """Whether every (action, position) that used an object also allows ``new``."""
        return all(new in self.allowed.get(use, {new}) for use in uses)


@dataclass
class _Demo:
    query: str
    plan: list[str]
    named: list[str]  # objects its query names that its plan uses, in query order
    uses: dict[str, set[tuple[str, int]]]
    terms: list[str]


class PlanPredictor:
    """Writes a plan for a query by re-filling the nearest demonstration's objects."""

    def __init__(self, vocab: PlanVocab, demos: Sequence[tuple[str, str]]) -> None:
        self.vocab = vocab
        self.masked = {w for phrase in vocab.phrases for w in phrase}
        self.demos = [self._demo(q, p) for q, p in demos]
        self.df = Counter(t for d in self.demos for t in set(d.terms))
        self.avgdl = sum(len(d.terms) for d in self.demos) / max(1, len(self.demos))
        self.place_of = self._learn_places()

    def _terms(self, query: str) -> list[str]:
        return [w for w in _WORD.findall(query.lower()) if w not in _STOP | self.masked]

    def _demo(self, query: str, program: str) -> _Demo:
        plan = [x.strip() for x in program.splitlines() if x.strip()]
        uses: defaultdict[str, set[tuple[str, int]]] = defaultdict(set)
        for line in plan:
            call = parse_call(line)
            if call is not None:
                for p, arg in enumerate(call[1]):
                    uses[arg].add((call[0], p))
        named = [o for o in self.vocab.mentions(query) if o in uses]
        return _Demo(query, plan, named, dict(uses), self._terms(query))

    def _learn_places(self) -> dict[str, str]:
        """Object -> place: the place sharing its first word, else where demonstrations used it."""
        seen: defaultdict[str, Counter[str]] = defaultdict(Counter)
        for demo in self.demos:
            here = None
            for line in demo.plan:
                call = parse_call(line)
                for arg in call[1] if call else ():
                    if arg in self.vocab.places:
                        here = arg
                    elif here is not None:
                        seen[arg][here] += 1
        place_of = {obj: counts.most_common(1)[0][0] for obj, counts in sorted(seen.items())}
        for obj in self.vocab.phrases.values():
            first = obj.lower().split("_")[0]
            for place in sorted(self.vocab.places):
                if obj not in self.vocab.places and first in place.lower().split("_"):
                    place_of[obj] = place
        return place_of

    def _bm25(self, terms: list[str], demo: _Demo) -> float:
        tf, n, score = Counter(demo.terms), len(self.demos), 0.0
        for t in sorted(set(terms)):
            if tf[t]:
                idf = math.log(1 + (n - self.df[t] + 0.5) / (self.df[t] + 0.5))
                norm = tf[t] + 1.2 * (0.25 + 0.75 * len(demo.terms) / max(1.0, self.avgdl))
                score += idf * tf[t] * 2.2 / norm
        return score

    def mapping(self, demo: _Demo, named: list[str]) -> tuple[dict[str, str], float]:
        """The swap of the demonstration's named objects for the query's that the actions
        allow best (query order breaks ties), and the share of its objects that fit."""
        if not demo.named or not named:
            return {}, 0.0
        best: tuple[int, int, dict[str, str]] | None = None
        size = min(len(demo.named), len(named))
        for rank, chosen in enumerate(itertools.permutations(named, size)):
            swap = dict(zip(demo.named, chosen, strict=False))
            fit = sum(self.vocab.fits(new, demo.uses[old]) for old, new in swap.items())
            if best is None or fit > best[0]:
                best = (fit, -rank, swap)
        assert best is not None
        swap = {o: n for o, n in best[2].items() if self.vocab.fits(n, demo.uses[o])}
        return swap, best[0] / len(demo.named)

    def predict(self, query: str) -> str:
        named = self.vocab.mentions(query)
        terms = self._terms(query)
        scored = []
        for i, demo in enumerate(self.demos):
            swap, fit = self.mapping(demo, named)
            same = len(demo.named) == len(named)
            score = self._bm25(terms, demo) + COMPATIBLE_WEIGHT * fit + COUNT_WEIGHT * same
            scored.append((score, -i, swap))
        _, minus_index, swap = max(scored, key=lambda s: s[:2])
        return "\n".join(self.refill(self.demos[-minus_index].plan, swap, named))

    def refill(self, plan: list[str], swap: dict[str, str], named: list[str]) -> list[str]:
        """The plan with swapped objects. A walk to a place the query does not name, followed
        by swapped objects, goes to the first known place of the objects used before the next
        walk to a place, or to the first swapped object when none is known."""
        calls = [parse_call(line) for line in plan]
        out = [_swap_args(line, swap) for line in plan]
        for k, call in enumerate(calls):
            if call is None or len(call[1]) != 1 or call[1][0] not in self.vocab.places:
                continue
            if call[1][0] in named:
                continue
            segment = list(itertools.takewhile(lambda a: a not in self.vocab.places, (
                swap.get(a, a) for c in calls[k + 1 :] if c for a in c[1]
            )))  # fmt: skip
            swapped = [a for a in segment if a in swap.values()]
            if not swapped:
                continue
            known = [self.place_of[a] for a in segment if a in self.place_of]
            place = known[0] if known else swapped[0]
            out[k] = _swap_args(plan[k], {call[1][0]: place})
        return out


def _swap_args(line: str, swap: dict[str, str]) -> str:
    """The line with its argument names swapped, its own spacing and action kept."""
    head, _, rest = line.partition("(")
    args, close, tail = rest.rpartition(")")
    args = re.sub(r"[A-Za-z_]\w*", lambda m: swap.get(m.group(), m.group()), args)
    return f"{head}({args}{close}{tail}"


def plan_predictor(examples: Sequence[Doc], functions: Sequence[Doc]) -> PlanPredictor | None:
    """A plan predictor when every demonstration is a plan of bare-object calls and the docs
    list allowed objects; None for every other task (their programs carry literals)."""
    demos = [p for p in (parse_example(d.text) for d in examples) if p is not None and p[1]]
    if not demos:
        return None
    lines = [x for _, program in demos for x in program.splitlines() if x.strip()]
    if not all(parse_call(x) for x in lines):
        return None
    vocab = PlanVocab.from_docs(functions)
    return PlanPredictor(vocab, demos) if vocab is not None else None
