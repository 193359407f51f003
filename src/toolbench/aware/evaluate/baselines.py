"""The non-LLM floors of the awareness benchmark: ``always-yes``, ``always-no``, ``random``
and ``similarity``.

They are models like any other, built by ``make_model`` from the model registry through the
factories at the end of this module and run by the same runner, answering in the form each
mode expects: Yes/No for explicit and feedback questions, an ``API-Request`` line or
a "cannot" sentence in implicit modes. They see only what a model sees (the request and the
APIs, via ``Sample.fields["aware"]``), never the label.

``similarity`` says Yes when the request is close enough to its best-matching API: the cosine
of the user's words and ``name: description`` under the dataset encoder, with the threshold
that maximises balanced accuracy on labelled data. Utterance removal barely moves that score,
which is the point: a model must do better than surface similarity. The threshold never sees
the label of an instance it is scored on: with a separate demonstration file it is fitted
there (minus any family that is also evaluated); otherwise it is *cross-fitted*: instances are
split into folds by their source record (``provenance.original_id``, so an original and its
twins share a fold), and each fold is answered with the threshold fitted on the other folds.
``similarity`` and ``random`` read the run's data before the first sample (``FitsData.fit``):
the former to fit, the latter for the run's seed when the spec names none.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolbench.aware.encoder import ApiEncoder
from toolbench.aware.evaluate.items import AwareData
from toolbench.aware.evaluate.render import request_text
from toolbench.aware.schema import Instance
from toolbench.errors import UserError
from toolbench.models.base import Model, ModelOptions, ModelOutputError
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
    """A fair coin per instance, seeded by instance id: the same answer in every mode. Without
    a seed of its own it takes the run's (the awareness task's ``seed``) when fitted."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.name = "random" if seed is None else f"random(seed={seed})"

    def fit(self, prepared: Sequence[Any]) -> dict[str, Any]:
        if self.seed is None:
            task, _ = aware_data(prepared, "random")
            self.seed = int(task.seed)
            self.name = f"random(seed={self.seed})"
        return {}

    def decide(self, sample_id: str, view: dict[str, Any]) -> bool:
        return random.Random(f"{self.seed}|{sample_id}").random() < 0.5


def aware_data(prepared: Sequence[Any], spec: str) -> tuple[Any, AwareData]:
    """The awareness task of a run and what it loaded; a floor fitted on another task's data
    is refused (it answers awareness questions only)."""
    for p in prepared:
        if isinstance(p.data.runtime, AwareData):
            return p.task, p.data.runtime
    raise UserError(
        f"--model {spec}: an awareness floor answers only awareness questions "
        "('toolbench aware run'); tool tasks have baseline and oracle"
    )


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


CROSS_FIT_FOLDS = 5


def record_key(instance: Instance) -> str:
    """What ties instances to one source record: an original and all its twins share it."""
    return f"{instance.source}|{instance.provenance.original_id}"


def fold_of(instance: Instance, folds: int = CROSS_FIT_FOLDS) -> int:
    digest = hashlib.sha256(record_key(instance).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % folds


def cross_fitted_thresholds(
    scores: dict[str, float], instances: Sequence[Instance], folds: int = CROSS_FIT_FOLDS
) -> tuple[dict[str, float], list[float]]:
    """Instance id -> the threshold fitted on every fold but its own; and each fold's."""
    of = {i.id: fold_of(i, folds) for i in instances}
    per_fold = []
    for fold in range(folds):
        others = [i for i in instances if of[i.id] != fold]
        per_fold.append(fit_threshold([scores[i.id] for i in others], [i.label for i in others]))
    return {i.id: per_fold[of[i.id]] for i in instances}, per_fold


class SimilarityModel(_Baseline):
    """Fitted on the run's data before the first sample (``fit``); the encoder is the
    awareness task's ``encoder`` option, else ``encoder`` here, else the bundled MiniLM."""

    def __init__(
        self, encoder: str | None = None, cache_dir: Path | None = None, use_cache: bool = True
    ) -> None:
        self.encoder, self.cache_dir, self.use_cache = encoder, cache_dir, use_cache
        self.scores: dict[str, float] = {}
        self.thresholds: dict[str, float] = {}
        self.name = "similarity"
        self.fit_notes: dict[str, Any] = {}

    def fit(self, prepared: Sequence[Any]) -> dict[str, Any]:
        task, data = aware_data(prepared, "similarity")
        path = task.encoder or self.encoder
        with ApiEncoder(path, cache_dir=self.cache_dir, use_cache=self.use_cache) as encoder:
            self.fit_on(encoder, data.pool, data.instances)
        return {**self.fit_notes, "encoder": encoder.identity}

    @classmethod
    def fitted(
        cls, encoder: ApiEncoder, pool: Sequence[Instance], evaluated: Sequence[Instance]
    ) -> SimilarityModel:
        model = cls()
        model.fit_on(encoder, pool, evaluated)
        return model

    def fit_on(
        self, encoder: ApiEncoder, pool: Sequence[Instance], evaluated: Sequence[Instance]
    ) -> None:
        """Threshold(s) from labels the scored instances never contribute (see the module)."""
        self.scores = best_api_similarity(encoder, evaluated)
        self.name = f"similarity({encoder.identity})"
        evaluated_ids = {i.id for i in evaluated}
        if {i.id for i in pool} <= evaluated_ids:  # no separate labelled data: cross-fit
            self.thresholds, per_fold = cross_fitted_thresholds(self.scores, evaluated)
            self.fit_notes = {
                "similarity_fit": f"cross-fitted: {CROSS_FIT_FOLDS} folds by original_id",
                "similarity_thresholds": per_fold,
            }
            return
        seen = {record_key(i) for i in evaluated}
        disjoint = [i for i in pool if record_key(i) not in seen]
        pool_scores = best_api_similarity(encoder, disjoint)
        labels = [i.label for i in disjoint]
        threshold = fit_threshold([pool_scores[i.id] for i in disjoint], labels)
        self.thresholds = dict.fromkeys(self.scores, threshold)
        self.fit_notes = {
            "similarity_fit": f"demonstration file: {len(disjoint)} instances "
            f"({len(pool) - len(disjoint)} left out: their source record is also evaluated)",
            "similarity_threshold": threshold,
        }

    def decide(self, sample_id: str, view: dict[str, Any]) -> bool:
        if sample_id not in self.scores:
            raise ModelOutputError(f"similarity baseline has no score for {sample_id}")
        return self.scores[sample_id] >= self.thresholds[sample_id]


def _no_argument(spec: str, argument: str | None) -> None:
    if argument:
        raise UserError(f"--model {spec}:{argument}: {spec} takes no argument; write {spec}")


def always_yes(argument: str | None, options: ModelOptions) -> Model:
    """``always-yes``: says every request can be acted on now."""
    _no_argument("always-yes", argument)
    return AlwaysModel(True)


def always_no(argument: str | None, options: ModelOptions) -> Model:
    """``always-no``: says no request can be acted on now."""
    _no_argument("always-no", argument)
    return AlwaysModel(False)


def random_floor(argument: str | None, options: ModelOptions) -> Model:
    """``random[:SEED]``: a seeded coin per instance (the run's seed without SEED)."""
    if not argument:
        return RandomModel()
    try:
        return RandomModel(int(argument))
    except ValueError:
        raise UserError(f"--model random:{argument}: expected random or random:SEED") from None


def similarity(argument: str | None, options: ModelOptions) -> Model:
    """``similarity``: its encoder's vectors are cached beside the responses unless the run
    uses no cache."""
    _no_argument("similarity", argument)
    cache = options.cache_path
    return SimilarityModel(cache_dir=cache.parent if cache else None, use_cache=cache is not None)
