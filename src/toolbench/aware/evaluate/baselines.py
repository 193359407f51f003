"""The non-LLM floors of the awareness benchmark: ``always-yes``, ``always-no``, ``random``
and ``similarity``.

They are models like any other (they go through the same runner and scoring), answering in the
form each mode expects: Yes/No for explicit and feedback questions, an ``API-Request`` line or
a "cannot" sentence in implicit modes. They see only what a model sees (the request and the
APIs, via ``Sample.fields["aware"]``), never the label.

``similarity`` says Yes when the request is close enough to its best-matching API: the cosine
of the user's words and ``name: description`` under the dataset encoder, with the threshold
that maximises balanced accuracy on the demonstration pool. Utterance removal barely moves
that score, which is the point: a model must do better than surface similarity.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolbench.aware.encoder import ApiEncoder
from toolbench.aware.evaluate.render import request_text
from toolbench.aware.schema import Instance
from toolbench.models.base import ModelOutputError
from toolbench.types import Generation, GenerationRequest

BASELINES = ("always-yes", "always-no", "random", "similarity")
CANNOT = "I cannot do that: none of the available APIs fits this request."
EXPLANATION = "Something the request needs is missing."


def reply_for(kind: str, can_invoke: bool, api_names: Sequence[str]) -> str:
    """The text a model with this decision would write for a request of this kind."""
    if kind in ("implicit", "tools"):
        if can_invoke and api_names:
            return f"API-Request: [{api_names[0]}()]"
        return CANNOT
    if kind == "explanation":
        return EXPLANATION
    return "Yes" if can_invoke else "No"


def _view(request: GenerationRequest) -> dict[str, Any]:
    sample = request.sample
    view = sample.fields.get("aware") if sample is not None else None
    if not isinstance(view, dict):
        raise ModelOutputError("this built-in baseline only answers awareness requests")
    return view


class _Baseline:
    cacheable = False
    name = "baseline"

    def decide(self, sample_id: str, view: dict[str, Any]) -> bool:
        raise NotImplementedError

    async def generate(self, request: GenerationRequest) -> Generation:
        view = _view(request)
        assert request.sample is not None
        decision = self.decide(str(view["instance_id"]), view)
        return Generation(
            text=reply_for(str(view["kind"]), decision, view["api_names"]), finish_reason="stop"
        )

    async def aclose(self) -> None:
        return None


class AlwaysModel(_Baseline):
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.name = "always-yes" if answer else "always-no"

    def decide(self, sample_id: str, view: dict[str, Any]) -> bool:
        return self.answer


class RandomModel(_Baseline):
    """A fair coin per instance, seeded by instance id: the same answer in every mode."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.name = f"random(seed={seed})"

    def decide(self, sample_id: str, view: dict[str, Any]) -> bool:
        return random.Random(f"{self.seed}|{sample_id}").random() < 0.5


def best_api_similarity(encoder: ApiEncoder, instances: Sequence[Instance]) -> dict[str, float]:
    """Instance id -> cosine of its request and its best-matching offered API."""
    texts: list[str] = []
    for instance in instances:
        texts.append(request_text(instance))
        texts.extend(api.embedding_text() for api in instance.apis)
    vectors = encoder.encode(texts) if texts else np.zeros((0, 0))
    scores, row = {}, 0
    for instance in instances:
        query, apis = vectors[row], vectors[row + 1 : row + 1 + len(instance.apis)]
        row += 1 + len(instance.apis)
        scores[instance.id] = float((apis @ query).max()) if len(apis) else -1.0
    return scores


def fit_threshold(scores: Sequence[float], labels: Sequence[str]) -> float:
    """The threshold (Yes when score >= it) with the best balanced accuracy on the pool; the
    lowest on ties. Balanced, because plain accuracy on a pool with two incomplete twins per
    complete instance is maximised by always saying No, which is no similarity floor at all."""
    if not scores:
        return 0.0
    values = sorted(set(scores))
    candidates = [values[0]] + [(a + b) / 2 for a, b in itertools.pairwise(values)]
    candidates.append(values[-1] + 1e-6)
    complete = np.array([label == "complete" for label in labels])
    array = np.asarray(scores)
    best, best_score = candidates[0], -1.0
    for threshold in candidates:
        said_yes = array >= threshold
        recalls = [
            float(said_yes[complete].mean()) if complete.any() else 0.0,
            float((~said_yes[~complete]).mean()) if (~complete).any() else 0.0,
        ]
        score = sum(recalls) / 2
        if score > best_score + 1e-12:
            best, best_score = threshold, score
    return float(best)


class SimilarityModel(_Baseline):
    def __init__(self, scores: dict[str, float], threshold: float, encoder_identity: str) -> None:
        self.scores = scores
        self.threshold = threshold
        self.name = f"similarity({encoder_identity})"

    @classmethod
    def fit(
        cls, encoder: ApiEncoder, pool: Sequence[Instance], evaluated: Sequence[Instance]
    ) -> SimilarityModel:
        pool_scores = best_api_similarity(encoder, pool)
        threshold = fit_threshold([pool_scores[i.id] for i in pool], [i.label for i in pool])
        return cls(best_api_similarity(encoder, evaluated), threshold, encoder.identity)

    def decide(self, sample_id: str, view: dict[str, Any]) -> bool:
        if sample_id not in self.scores:
            raise ModelOutputError(f"similarity baseline has no score for {sample_id}")
        return self.scores[sample_id] >= self.threshold
