"""Does any passage answer the question? The signal that tells the model "the
documents do not say" instead of handing it the nearest passages.

How close the best passage comes (its cosine similarity) cannot tell: a
tempting question without an answer ("can I have a barbecue on the balcony"
where the documents ban bonfires) finds passages as close as real answers do.
The head adds what the question itself says: a logistic regression on the
query's embedding and the similarities of the hits the tenant would be shown,
trained on the labelled dev questions (``manage.py train_answerability``). It
weighs how such questions usually end; it cannot read whether a passage says
what was asked (docs/retrieval.md has what it gains and where it fails).

The artefact (``retrieval/artefacts/answerability.json``) holds the head, the
operating point chosen on dev and its figures. It is read once per process,
and only for the embedding model it was trained on. Without it (another
model, a missing or broken file) the best cosine against
``SEARCH_ANSWER_MIN_SIMILARITY`` decides, as before the head.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from retrieval.embeddings import embedding_backend
from retrieval.search import SearchHit, answer_similarity

logger = logging.getLogger(__name__)

ARTEFACT = Path(__file__).resolve().parent / "artefacts" / "answerability.json"
FORMAT = 1
# The head's regularisation (scikit-learn's C), chosen on dev by cross-validation
# with the project's own set as a second corpus (docs/retrieval.md).
REGULARISATION = 0.001
# The operating point keeps this share of dev's answerable questions (cross-validated):
# a question flagged wrongly is asked of the landlord; one kept wrongly is answered from
# passages that do not say, which the prompt then has to catch.
KEEP_ANSWERABLE = 0.9


def answerability_features(embedding: Sequence[float], hits: Sequence[SearchHit]) -> np.ndarray:
    """The query's embedding, then the best, second best and mean cosine of the
    hits the vector leg ranked (0 where there are none)."""
    similarities = sorted((1.0 - h.vector_distance for h in hits if h.vector_distance is not None), reverse=True)
    best = similarities[0] if similarities else 0.0
    second = similarities[1] if len(similarities) > 1 else 0.0
    mean = sum(similarities) / len(similarities) if similarities else 0.0
    return np.asarray([*embedding, best, second, mean], dtype=np.float64)


@dataclass(frozen=True)
class AnswerabilityHead:
    embedding_model: str
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float

    @property
    def cut(self) -> float:
        """The operating point in use: ``SEARCH_ANSWERABLE_MIN_PROBABILITY`` when set, else the artefact's."""
        override = settings.SEARCH_ANSWERABLE_MIN_PROBABILITY
        return self.threshold if override is None else override

    def probability(self, embedding: Sequence[float], hits: Sequence[SearchHit]) -> float:
        """The chance that one of ``hits`` answers the question."""
        return float(self.probabilities(answerability_features(embedding, hits)[None, :])[0])

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """The same for rows of ``answerability_features``."""
        return 1.0 / (1.0 + np.exp(-(((features - self.mean) / self.scale) @ self.coef + self.intercept)))


def head_from_artefact(artefact: Any) -> AnswerabilityHead:
    if not isinstance(artefact, dict) or artefact.get("format") != FORMAT:
        found = artefact.get("format") if isinstance(artefact, dict) else type(artefact).__name__
        raise ValueError(f"answerability artefact of format {found!r}, expected {FORMAT}: retrain")
    head = AnswerabilityHead(
        embedding_model=artefact["embedding_model"],
        mean=np.asarray(artefact["mean"], dtype=np.float64),
        scale=np.asarray(artefact["scale"], dtype=np.float64),
        coef=np.asarray(artefact["coef"], dtype=np.float64),
        intercept=float(artefact["intercept"]),
        threshold=float(artefact["threshold"]),
    )
    if head.mean.ndim != 1 or not head.mean.shape == head.scale.shape == head.coef.shape:
        raise ValueError("answerability artefact: mean, scale and coef differ in shape: retrain")
    return head


def answerability_head() -> AnswerabilityHead | None:
    """The head for the configured embedding model, or None."""
    return head_for_model(embedding_backend().name, embedding_backend().dimensions)


@cache
def head_for_model(name: str, dimensions: int) -> AnswerabilityHead | None:
    """Read once per process and model; None (logged once) when the artefact
    cannot be read or was trained on another model."""
    try:
        head = head_from_artefact(json.loads(ARTEFACT.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        logger.warning("answerability head unavailable (%s); the cosine threshold decides", exc)
        return None
    if head.embedding_model != name or len(head.coef) != dimensions + 3:
        logger.info("answerability head is for %s, not %s; the cosine threshold decides", head.embedding_model, name)
        return None
    return head


@dataclass(frozen=True)
class Verdict:
    answers: bool
    probability: float | None  # the head's; None where the cosine rule decided


def passages_verdict(embedding: Sequence[float] | None, hits: Sequence[SearchHit]) -> Verdict:
    """Whether the hits are taken to answer: the head at its operating point
    (``SEARCH_ANSWERABLE_MIN_PROBABILITY`` overrides it), else the best cosine
    against ``SEARCH_ANSWER_MIN_SIMILARITY``. The head reads only what it was
    trained on, at least two hits the vector leg ranked; fewer (a scope of one
    chunk, documents found by their words alone while they wait to be
    re-embedded) are left to the cosine rule, which takes keyword hits alone as
    answers."""
    if not hits:
        return Verdict(answers=False, probability=None)
    head = answerability_head()
    ranked = sum(h.vector_distance is not None for h in hits)
    if head is not None and embedding is not None and ranked >= 2:
        probability = head.probability(embedding, hits)
        return Verdict(answers=probability >= head.cut, probability=probability)
    similarity = answer_similarity(list(hits))
    return Verdict(answers=similarity is None or similarity >= settings.SEARCH_ANSWER_MIN_SIMILARITY, probability=None)


# --- training (manage.py train_answerability) -------------------------------------------------


def answerability_fit(features: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    """The head's numbers, fitted on standardised features."""
    from sklearn.linear_model import LogisticRegression

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=REGULARISATION, max_iter=5000, random_state=0)
    model.fit((features - mean) / scale, labels)
    return {
        "mean": np.round(mean, 8).tolist(),
        "scale": np.round(scale, 8).tolist(),
        "coef": np.round(model.coef_[0], 8).tolist(),
        "intercept": round(float(model.intercept_[0]), 8),
    }


def cross_validated(features: np.ndarray, labels: np.ndarray, *, folds: int = 5, seeds: int = 5) -> np.ndarray:
    """Each question's probability from heads that did not see it, averaged over
    ``seeds`` shufflings: what the head does on questions it was not trained on."""
    from sklearn.model_selection import StratifiedKFold

    out = np.zeros(len(labels))
    for seed in range(seeds):
        for train, held in StratifiedKFold(folds, shuffle=True, random_state=seed).split(features, labels):
            fitted = answerability_fit(features[train], labels[train])
            head = head_from_artefact({"format": FORMAT, "embedding_model": "", "threshold": 0.5} | fitted)
            out[held] += head.probabilities(features[held])
    return out / seeds


def operating_point(probabilities: np.ndarray, labels: np.ndarray, *, keep: float) -> float:
    """The highest threshold that still keeps ``keep`` of the answerable questions:
    as many questions without an answer flagged as that allows."""
    answerable = np.sort(probabilities[labels == 1])
    dropped = int(np.floor(round((1.0 - keep) * len(answerable), 9)))  # round: 1 - 0.9 is 0.0999...
    return float(answerable[dropped])
